"""Solutions to the exercises at the end of notebooks/02_embeddings_layernorm.ipynb: a
gradient checker (central differences and the relative error), the embedding backward and
LayerNorm's backward.

Try the exercises first. The derivations are in the notebook (sections 2, 4 and 5 and the
first exercise) and in docs/backprop.md (sections *embedding*, *layernorm*, *norm-wise
relative error*, *why gradient checks run in float64*).
"""

import numpy as np


def my_numerical_gradient(f, x: np.ndarray, dout: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Central differences of ``sum(f(x) * dout)`` with respect to every entry of x.

    Inputs: f maps x to an array shaped like dout; x a float64 array, nudged in place one
    entry at a time and restored; dout the upstream gradient; h the step.
    Output: the gradient, shaped like x. Its error is of order h**2.
    """
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        original = x[index]
        x[index] = original + h
        plus = np.sum(f(x) * dout)
        x[index] = original - h
        minus = np.sum(f(x) * dout)
        x[index] = original  # restore before the next entry
        grad[index] = (plus - minus) / (2.0 * h)
    return grad


def my_rel_error(a: np.ndarray, b: np.ndarray) -> float:
    """Norm-wise relative error ||a - b|| / max(1e-12, ||a|| + ||b||): 0 for equal arrays,
    about 1 for unrelated ones, and 0 (not NaN) for two zero arrays."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(1e-12, np.linalg.norm(a) + np.linalg.norm(b)))


def my_layernorm_backward(dout: np.ndarray, cache):
    """Gradients of LayerNorm over the last axis.

    Inputs: dout (..., H); cache, the LayerNormCache of
    ``minibert.functional.layernorm_forward``: x_hat (..., H), rstd (..., 1), weight (H,).
    Outputs: dx (..., H), dweight (H,), dbias (H,).
    """
    x_hat, rstd, weight = cache.x_hat, cache.rstd, cache.weight
    # weight and bias were broadcast over every leading axis: their gradients sum over them.
    leading_axes = tuple(range(dout.ndim - 1))
    # forward: out = x_hat * weight + bias
    dbias = dout.sum(axis=leading_axes)  # (H,)
    dweight = (dout * x_hat).sum(axis=leading_axes)  # (H,)
    dx_hat = dout * weight  # (..., H)
    # forward: x_hat = (x - mean) * rstd, where mean and rstd depend on the whole row;
    # the two subtracted terms are the gradients that flow through mean and through rstd.
    dx = rstd * (
        dx_hat
        - dx_hat.mean(axis=-1, keepdims=True)
        - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True)
    )  # (..., H)
    return dx, dweight, dbias


def my_embedding_backward(dout: np.ndarray, cache):
    """Gradient of the lookup ``out = weight[ids]`` with respect to the table.

    Inputs: dout (..., H), the gradient of the looked-up rows; cache from
    ``minibert.functional.embedding_forward`` (fields ids, weight_shape, dtype).
    Output: dweight (V, H) in the table's dtype.
    """
    dweight = np.zeros(cache.weight_shape, dtype=cache.dtype)  # (V, H)
    width = cache.weight_shape[1]
    # forward: out = weight[ids]. An id read k times receives k gradients: np.add.at performs
    # every addition, where dweight[ids] += dout would keep only one per repeated id.
    np.add.at(dweight, cache.ids.reshape(-1), dout.reshape(-1, width))
    return dweight
