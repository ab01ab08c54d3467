"""Solutions to the exercises of notebooks/02_embeddings_layernorm.ipynb: LayerNorm's
backward (the exercise before section 4) and the embedding backward (before section 2).

Try the exercises before reading on. The derivations are in the notebook (sections 2 and 4)
and in docs/backprop.md#layernorm and docs/backprop.md#embedding.
"""

import numpy as np


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
