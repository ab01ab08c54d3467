"""Solution to the exercise of notebooks/08_attention_heatmaps.ipynb: attention rollout
(section 8, at the end).

Try the exercise first. The rule is in the notebook (sections 3 and 8) and in
``minibert.viz.attention_rollout`` (Abnar & Zuidema 2020).
"""

import numpy as np


def my_rollout(attentions: np.ndarray) -> np.ndarray:
    """Attention rollout after every layer.

    Input: attentions (L, N, T, T), one example, layer 0 first; every row sums to 1.
    Output: (L, T, T) a new array: A_hat[l] = rownorm(mean over heads of layer l + I),
    rollout[0] = A_hat[0], rollout[l] = A_hat[l] @ rollout[l - 1]. The input is unchanged.
    """
    averaged = np.asarray(attentions, dtype=np.float64).mean(axis=1)  # (L, T, T)
    with_residual = averaged + np.eye(averaged.shape[-1])  # (L, T, T)
    with_residual = with_residual / with_residual.sum(axis=-1, keepdims=True)  # rows sum to 1
    rollout = np.empty_like(with_residual)  # (L, T, T)
    rollout[0] = with_residual[0]
    for layer in range(1, len(with_residual)):
        rollout[layer] = with_residual[layer] @ rollout[layer - 1]  # latest layer on the left
    return rollout
