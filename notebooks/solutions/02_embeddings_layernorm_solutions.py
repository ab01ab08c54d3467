"""Solution to the exercise of notebooks/02_embeddings_layernorm.ipynb: LayerNorm's backward.

Try the exercise before reading on. The derivation is in the notebook (section 4) and in
docs/backprop.md#layernorm.
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
