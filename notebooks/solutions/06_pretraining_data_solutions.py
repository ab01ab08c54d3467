"""Solution to the exercise of notebooks/06_pretraining_data.ipynb: BERT's 80/10/10 rule
(section 8).

Try the exercise before reading on. The rule is in the notebook (section 5), in
``minibert.data.masking.mask_tokens`` and in docs/data.md, section 3.
"""

import numpy as np


def my_replace_targets(tokens: np.ndarray, draws: np.ndarray, mask_id: int,
                       random_ids: np.ndarray) -> np.ndarray:
    """What the model reads at each MLM target, given one uniform draw per target.

    Inputs: tokens (n,) the original ids of the chosen targets; draws (n,) floats in [0, 1);
    mask_id, the id of [MASK]; random_ids (n,) the replacement each target would take on the
    random branch.
    Output: (n,) a new array in tokens' dtype: draw < 0.8 -> mask_id, 0.8 <= draw < 0.9 ->
    random_ids, draw >= 0.9 -> the original token. The inputs are left as they were.
    """
    out = np.array(tokens, copy=True)  # (n,) same dtype as tokens, never a view
    to_mask = draws < 0.8  # (n,)
    to_random = (draws >= 0.8) & (draws < 0.9)  # (n,)
    out[to_mask] = mask_id
    out[to_random] = random_ids[to_random]  # cast to tokens' dtype on assignment
    return out
