"""Solutions to the exercises of notebooks/13_descendants.ipynb: the backward of L2
normalisation (exercise 1), the gradients of a LoRA adapter (exercise 2), and ELECTRA's
replaced-token detection labels and loss (exercise 3).

Try the exercises first. The derivations are in docs/descendants.md; the
library's versions are ``l2_normalize_backward`` in ``minibert.sentence``,
``binary_cross_entropy_forward`` in ``minibert.family.electra`` and ``LoRALinear.backward``
in ``minibert.lora``.
"""

import numpy as np


def my_l2_normalize_backward(dout: np.ndarray, unit: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """dout (n, H), unit (n, H) = x / |x|, norm (n, 1) = |x| -> dx (n, H).

    u = x / |x| has the Jacobian (I - u u^T) / |x|: only dout's part across u passes.
    """
    radial = (unit * dout).sum(axis=-1, keepdims=True)  # (n, 1) u . dout
    return (dout - unit * radial) / norm


def my_lora_backward(dout: np.ndarray, x: np.ndarray, A: np.ndarray, B: np.ndarray,
                     scaling: float):
    """-> (dx (n, in), dA (r, in), dB (out, r)) of y = scaling * x @ A.T @ B.T."""
    down = x @ A.T  # (n, r) the forward's x A^T
    d_down = scaling * dout @ B  # (n, r)
    dB = scaling * dout.T @ down  # (out, r)
    dA = d_down.T @ x  # (r, in)
    dx = d_down @ A  # (n, in)
    return dx, dA, dB


def my_rtd_loss(original: np.ndarray, corrupted: np.ndarray, attention_mask: np.ndarray,
                logits: np.ndarray):
    """(B, T) ids, ids, 0/1 mask, float logits -> (labels (B, T) int, loss float).

    Labels: 1 where the token differs from the original. Loss: the mean over real tokens of
    softplus(z) - z y, with softplus(z) = max(z, 0) + log(1 + exp(-|z|)) (no overflow).
    """
    labels = (np.asarray(corrupted) != np.asarray(original)).astype(int)  # (B, T)
    real = np.asarray(attention_mask) == 1  # (B, T)
    softplus = np.maximum(logits, 0) + np.log1p(np.exp(-np.abs(logits)))
    per_token = softplus - logits * labels  # (B, T)
    return labels, float(per_token[real].mean())
