"""Solution to the exercise of notebooks/05_heads_and_losses.ipynb: cross-entropy's backward.

Try the exercise first. The derivation is in the notebook (section 1) and in
docs/backprop.md#cross-entropy.
"""

import numpy as np


def my_cross_entropy_backward(dloss, cache):
    """Gradient of the mean cross-entropy over the labelled positions.

    Inputs: dloss, the upstream gradient of the scalar loss; cache, the CrossEntropyCache of
    ``minibert.functional.cross_entropy_forward``: log_probs (..., C), safe_labels (...),
    valid (...) and count.
    Output: dlogits (..., C), zero at ignored positions and everywhere when count is 0.
    """
    log_probs, safe_labels, valid, count = (cache.log_probs, cache.safe_labels, cache.valid,
                                            cache.count)
    if count == 0:
        # the loss is defined as the constant 0 when no label is left
        return np.zeros_like(log_probs)
    # forward: loss = -mean over valid rows of log_probs[row, label]
    #          d loss_row / d logits_row = softmax(logits_row) - one_hot(label)
    one_hot = np.zeros_like(log_probs)
    np.put_along_axis(one_hot, safe_labels[..., None], 1.0, axis=-1)
    # only valid rows count, and the mean divides by their number
    row_weight = (valid[..., None] * (float(dloss) / count)).astype(log_probs.dtype)  # (..., 1)
    return (np.exp(log_probs) - one_hot) * row_weight
