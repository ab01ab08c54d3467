"""Solutions to the exercises of notebooks/06_pretraining_data.ipynb: BERT's 80/10/10 rule
(section 8) and a next-sentence pair (section 9).

Try the exercises first. The 80/10/10 rule is in the notebook (section 5), in
``minibert.data.masking.mask_tokens`` and in docs/data.md, section 3; the pair rule in the
notebook (section 3) and in ``_segment_pair`` of ``minibert.data.pretraining``.
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


def my_nsp_pair(segments: list[list[int]], other_document: list[list[int]],
                draw: float) -> tuple[list[int], list[int], int]:
    """A next-sentence pair from consecutive sentences, given one uniform draw.

    Inputs: segments, two or more consecutive sentences of one document (lists of ids);
    other_document, the sentences of another document; draw, a float in [0, 1).
    Output: (tokens_a, tokens_b, is_random_next). A is the first sentence. draw < 0.5 ->
    NotNext (1): B is the other document's sentences from its first, until B holds at least
    as many tokens as the true continuation (or the document ends). draw >= 0.5 -> IsNext
    (0): B is segments[1:]. New lists; the inputs are left as they were.
    """
    tokens_a = list(segments[0])
    continuation = [token for sentence in segments[1:] for token in sentence]
    if draw < 0.5:
        tokens_b: list[int] = []
        for sentence in other_document:
            tokens_b.extend(sentence)
            if len(tokens_b) >= len(continuation):
                break
        return tokens_a, tokens_b, 1
    return tokens_a, continuation, 0
