"""Solutions to the exercises of notebooks/03_attention.ipynb: attention's backward without
dropout and the softmax backward along any axis (the two exercises at the end, section 8).

Try the exercises first. The derivations are in the notebook (section 5) and in
docs/backprop.md#attention and docs/backprop.md#softmax.
"""

import numpy as np


def my_attention_backward(dout: np.ndarray, cache):
    """Gradients of softmax(q k^T * scale) v with respect to q, k and v.

    Inputs: dout (B, N, T, D), the gradient of the context; cache from
    ``minibert.functional.attention_forward`` (called without dropout).
    Outputs: dq, dk, dv, each (B, N, T, D).
    """
    q, k, v, scale = cache.q, cache.k, cache.v, cache.scale
    attention_probs = cache.attention_probs  # (B, N, T, T)
    # forward: context = attention_probs @ v
    dv = attention_probs.transpose(0, 1, 3, 2) @ dout  # (B, N, T, D)
    d_probs = dout @ v.transpose(0, 1, 3, 2)  # (B, N, T, T)
    # forward: attention_probs = softmax(scores) along the keys; a masked key has
    # probability 0, so the same formula gives it gradient 0.
    d_scores = attention_probs * (
        d_probs - (d_probs * attention_probs).sum(axis=-1, keepdims=True)
    )  # (B, N, T, T)
    # forward: scores = q @ k^T * scale
    dq = (d_scores @ k) * scale  # (B, N, T, D)
    dk = (d_scores.transpose(0, 1, 3, 2) @ q) * scale  # (B, N, T, D)
    return dq, dk, dv


def my_softmax_backward(dout: np.ndarray, cache):
    """Gradient of ``probs = softmax(x, axis)`` with respect to x.

    Inputs: dout (...), the gradient of probs; cache from ``minibert.functional.softmax_forward``
    (fields probs, axis). Output: dx (...), shaped like probs.
    """
    probs, axis = cache.probs, cache.axis
    # forward: probs = exp(x) / sum(exp(x)) along axis. The Jacobian diag(p) - p p^T applied
    # to dout collapses to p * (dout - sum(dout * p)), the sum taken along the same axis.
    return probs * (dout - (dout * probs).sum(axis=axis, keepdims=True))
