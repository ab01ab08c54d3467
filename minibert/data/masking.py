"""Masked language modelling: choose the targets of a sequence and corrupt them.

``mask_tokens`` chooses 15% of the positions (never a special token: [CLS], [SEP], [PAD],
[MASK], [UNK]) as targets; of those, 80% become [MASK], 10% a random token, 10% stay as they
are. The branch each target took is recorded in ``MaskedTokens``, so ``explain_instance`` can
show it. ``PretrainingVocab`` gathers, once, what masking needs to know about a vocabulary.
See ``docs/data.md``, section 3.

Dimension legend: T sequence length, V vocabulary size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minibert.checks import check_bool, check_int, check_probability

__all__ = [
    "BRANCHES",
    "MaskedTokens",
    "PretrainingVocab",
    "as_pretraining_vocab",
    "mask_tokens",
]

BRANCHES = ("[MASK]", "random", "kept")
"""What can happen to an MLM target: replaced by [MASK], by a random token, or kept."""
_MASKED, _RANDOM, _KEPT = range(3)


@dataclass(frozen=True, eq=False)
class PretrainingVocab:
    """What the pipeline needs to know about a vocabulary, gathered once from a tokenizer.

    ``replacement_ids`` are the ids the 10% "random" branch draws from (every id except the
    special ones, so a random replacement is never [PAD] or [CLS]); ``is_continuation``
    (V,) marks WordPiece pieces that continue a word (``##...``), for whole word masking;
    ``is_special`` (V,) marks [CLS], [SEP], [PAD], [MASK], [UNK] and any other special token.
    """

    cls_token_id: int
    sep_token_id: int
    mask_token_id: int
    pad_token_id: int
    special_ids: frozenset[int]
    replacement_ids: np.ndarray  # (V - number of special tokens,)
    is_continuation: np.ndarray  # (V,) bool
    is_special: np.ndarray  # (V,) bool

    @classmethod
    def from_tokenizer(cls, tokenizer) -> PretrainingVocab:
        """Read the special ids, ``vocab`` and ``all_special_ids`` of a BERT tokenizer."""
        for attribute in (
            "vocab",
            "all_special_ids",
            "cls_token_id",
            "sep_token_id",
            "mask_token_id",
            "pad_token_id",
        ):
            if not hasattr(tokenizer, attribute):
                raise TypeError(
                    f"tokenizer must have a {attribute!r} attribute like BertTokenizer, got "
                    f"{type(tokenizer).__name__}"
                )
        vocab_size = max(tokenizer.vocab.values()) + 1
        is_continuation = np.zeros(vocab_size, dtype=bool)
        for token, token_id in tokenizer.vocab.items():
            is_continuation[token_id] = token.startswith("##")
        special_ids = frozenset(int(i) for i in tokenizer.all_special_ids)
        is_special = np.zeros(vocab_size, dtype=bool)
        is_special[list(special_ids)] = True
        replacement_ids = np.array(
            sorted(set(tokenizer.vocab.values()) - special_ids), dtype=np.int64
        )
        if replacement_ids.size == 0:
            raise ValueError("tokenizer.vocab holds only special tokens; nothing to predict")
        return cls(
            cls_token_id=int(tokenizer.cls_token_id),
            sep_token_id=int(tokenizer.sep_token_id),
            mask_token_id=int(tokenizer.mask_token_id),
            pad_token_id=int(tokenizer.pad_token_id),
            special_ids=special_ids,
            replacement_ids=replacement_ids,
            is_continuation=is_continuation,
            is_special=is_special,
        )


def as_pretraining_vocab(tokenizer_or_vocab) -> PretrainingVocab:
    """Accept a ready ``PretrainingVocab`` or build one from a tokenizer."""
    if isinstance(tokenizer_or_vocab, PretrainingVocab):
        return tokenizer_or_vocab
    return PretrainingVocab.from_tokenizer(tokenizer_or_vocab)


@dataclass(frozen=True)
class MaskedTokens:
    """One sequence after masking: what the model reads and what it must predict.

    ``masked_lm_positions`` ascend; ``masked_lm_ids[k]`` is the original token at
    ``masked_lm_positions[k]`` and ``masked_lm_branches[k]`` says what happened to it:
    ``"[MASK]"`` (replaced by [MASK]), ``"random"`` (replaced by a random token, which can
    by chance be the original) or ``"kept"`` (left unchanged).
    """

    input_ids: tuple[int, ...]  # (T,)
    masked_lm_positions: tuple[int, ...]  # (predictions,)
    masked_lm_ids: tuple[int, ...]  # (predictions,)
    masked_lm_branches: tuple[str, ...]  # (predictions,)


def mask_tokens(
    token_ids,
    rng: np.random.Generator,
    vocab,
    *,
    masked_lm_prob: float = 0.15,
    max_predictions_per_seq: int = 20,
    do_whole_word_mask: bool = False,
) -> MaskedTokens:
    """Choose MLM targets in one sequence and corrupt them 80% [MASK] / 10% random / 10% kept.

    Args:
        token_ids: (T,) ids, e.g. ``[CLS] A [SEP] B [SEP]``; special ids are never chosen.
        rng: the source of every random choice.
        vocab: a ``PretrainingVocab`` or a tokenizer (building the vocab each call is slower).
        masked_lm_prob: targets = min(max_predictions_per_seq, max(1, round(n * prob))), where
            n counts every non-[PAD] token, [CLS] and [SEP] included, as Google does.
        max_predictions_per_seq: the cap on targets.
        do_whole_word_mask: choose whole words: a word's ``##`` pieces are chosen with it
            (each piece still takes its own 80/10/10 branch, as in Google's code).

    Returns:
        ``MaskedTokens`` with the corrupted (T,) ``input_ids`` and the targets.
    """
    vocab = as_pretraining_vocab(vocab)
    check_probability("masked_lm_prob", masked_lm_prob, open_at_zero=True, open_at_one=True)
    check_int("max_predictions_per_seq", max_predictions_per_seq, minimum=1)
    check_bool("do_whole_word_mask", do_whole_word_mask)
    token_ids = np.asarray(token_ids)
    if token_ids.size == 0:
        token_ids = token_ids.astype(np.int64)
    if token_ids.ndim != 1 or not np.issubdtype(token_ids.dtype, np.integer):
        raise TypeError(
            f"token_ids must be a 1-D sequence of ints, got shape {token_ids.shape} and dtype "
            f"{token_ids.dtype}"
        )
    vocab_size = vocab.is_special.shape[0]
    outside = (token_ids < 0) | (token_ids >= vocab_size)
    if outside.any():
        position = int(np.argmax(outside))
        raise IndexError(
            f"token_ids[{position}] = {token_ids[position]} is outside the vocabulary "
            f"[0, {vocab_size})"
        )

    # Candidates are words: groups of positions chosen together. Without whole word masking
    # every text token is a word of its own; with it, a ## piece joins the word before it
    # (but never across [SEP]: a segment may start with a cut-off word's ## piece).
    is_text = ~vocab.is_special[token_ids]  # (T,)
    starts_word = is_text.copy()  # (T,)
    if do_whole_word_mask:
        follows_text = np.concatenate([[False], is_text[:-1]])
        starts_word &= ~(vocab.is_continuation[token_ids] & follows_text)
    word_starts = np.flatnonzero(starts_word).tolist()
    word_of_token = np.cumsum(starts_word)[is_text] - 1
    word_lengths = np.bincount(word_of_token, minlength=len(word_starts)).tolist()

    num_tokens = int(np.count_nonzero(token_ids != vocab.pad_token_id))
    num_to_predict = min(max_predictions_per_seq, max(1, round(num_tokens * masked_lm_prob)))
    chosen: list[int] = []
    for word in rng.permutation(len(word_starts)).tolist():
        if len(chosen) >= num_to_predict:
            break
        # A whole word that would overshoot the budget is skipped, not split.
        if len(chosen) + word_lengths[word] <= num_to_predict:
            chosen.extend(range(word_starts[word], word_starts[word] + word_lengths[word]))
    positions = np.sort(np.array(chosen, dtype=np.int64))  # (predictions,)

    # Each target takes its own branch: 80% [MASK]; of the rest, half kept, half random.
    mask_draw = rng.random(len(positions))
    keep_draw = rng.random(len(positions))
    random_draw = rng.integers(len(vocab.replacement_ids), size=len(positions))
    random_ids = vocab.replacement_ids[random_draw]
    branch = np.where(mask_draw < 0.8, _MASKED, np.where(keep_draw < 0.5, _KEPT, _RANDOM))
    input_ids = token_ids.astype(np.int64)  # (T,) a copy
    input_ids[positions[branch == _MASKED]] = vocab.mask_token_id
    input_ids[positions[branch == _RANDOM]] = random_ids[branch == _RANDOM]
    return MaskedTokens(
        input_ids=tuple(input_ids.tolist()),
        masked_lm_positions=tuple(positions.tolist()),
        masked_lm_ids=tuple(token_ids[positions].tolist()),
        masked_lm_branches=tuple(BRANCHES[code] for code in branch.tolist()),
    )
