"""Attention arithmetic behind the heatmaps: checked inputs, token selection, word merging,
head averages and attention rollout, as plain NumPy functions that tests can check.

Conventions shared with :mod:`minibert.viz.heatmaps` and the ``attention`` command:

- Layers and heads are counted from 0, as in ``out.attentions[layer][:, head]``.
- In an attention matrix, rows are queries and columns are keys: row ``i`` says how much
  token ``i`` attends to every token, and sums to 1 over the keys it may see.
- A *position* is an index into the tokenizer output (``tokens``), padding included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from minibert.checks import is_int

__all__ = [
    "SPECIAL_TOKENS",
    "SPECIAL_TOKEN_MODES",
    "AttentionExample",
    "AttentionDisplay",
    "stack_attentions",
    "attention_example",
    "select_tokens",
    "renormalize_rows",
    "word_groups",
    "merge_word_pieces",
    "head_average",
    "attention_rollout",
    "token_attention",
    "for_display",
    "find_token",
    "check_index",
    "as_float_array",
]

SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[PAD]")
SPECIAL_TOKEN_MODES = ("keep", "hide", "renormalize")


@dataclass(frozen=True)
class AttentionExample:
    """One example's attention with padding dropped and every input checked.

    Fields:
        attentions: (L, N, T, T) float64 probabilities, T counting only the kept tokens.
        tokens: (T,) WordPiece tokens of the kept positions.
        positions: (T,) position of each kept token in the tokenizer output.
        token_type_ids: (T,) segment of each kept token (0 = sentence A), or None.
        sequence_length: length of the tokenizer output, padding included.
    """

    attentions: np.ndarray
    tokens: list[str]
    positions: np.ndarray
    token_type_ids: np.ndarray | None
    sequence_length: int


@dataclass(frozen=True)
class AttentionDisplay:
    """Matrices ready to draw, with one label per row and column.

    Fields:
        matrices: (..., K, K) values to draw; K rows (queries) and K columns (keys).
        labels: (K,) tick labels: tokens, or words when word pieces were merged.
        positions: (K,) tuples of the tokenizer positions behind each label.
        token_type_ids: (K,) segment of each label, or None.
    """

    matrices: np.ndarray
    labels: list[str]
    positions: list[tuple[int, ...]]
    token_type_ids: list[int] | None


def as_float_array(value, name: str) -> np.ndarray:
    """Convert ``value`` to a float64 array or raise a TypeError naming ``name``."""
    if isinstance(value, (str, bytes, dict)):
        raise TypeError(f"{name} must be a numeric array, got {type(value).__name__}")
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{name} must be a numeric array, got {type(value).__name__} ({error})"
        ) from None


def check_index(value, name: str, size: int, what: str) -> int:
    """Return ``value`` as an int in 0..size-1, or raise naming ``name`` and the valid range."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int in 0..{size - 1}, got {value!r}")
    if not 0 <= value < size:
        raise ValueError(f"{name} must be in 0..{size - 1} ({what}), got {value}")
    return int(value)


def stack_attentions(attentions, batch_index: int = 0) -> np.ndarray:
    """Stack one example's attention probabilities from every layer into one array.

    Inputs:
        attentions: what the model returns, a tuple or list of L arrays (B, N, T, T)
            (or (N, T, T) each for a single example); or one array, (L, N, T, T) for a
            single example or (L, B, N, T, T).
        batch_index: which example of the batch to take.
    Returns:
        (L, N, T, T) float64 array.
    """
    if isinstance(attentions, (list, tuple)):
        if len(attentions) == 0:
            raise ValueError("attentions must hold at least one layer, got an empty sequence")
        layers = [as_float_array(a, f"attentions[{i}]") for i, a in enumerate(attentions)]
        for i, layer in enumerate(layers):
            if layer.shape != layers[0].shape:
                raise ValueError(
                    f"attentions[{i}] has shape {layer.shape} but attentions[0] has shape "
                    f"{layers[0].shape}; every layer must have the same shape (B, N, T, T)"
                )
        if layers[0].ndim not in (3, 4):
            raise ValueError(
                "each layer in attentions must have shape (B, N, T, T) or (N, T, T), "
                f"got {layers[0].shape}"
            )
        stacked = np.stack(layers)  # (L, B, N, T, T) or (L, N, T, T)
    else:
        stacked = as_float_array(attentions, "attentions")
        if stacked.ndim not in (4, 5):
            raise ValueError(
                "attentions given as one array must have shape (L, N, T, T) or "
                f"(L, B, N, T, T), got {stacked.shape}"
            )
    if stacked.ndim == 5:
        index = check_index(batch_index, "batch_index", stacked.shape[1], "the batch size")
        stacked = stacked[:, index]  # (L, N, T, T)
    else:
        check_index(batch_index, "batch_index", 1, "attentions hold a single example")
    if stacked.shape[-1] != stacked.shape[-2]:
        raise ValueError(
            f"attention matrices must be square (T, T) with queries as rows and keys as "
            f"columns, got {stacked.shape[-2:]}"
        )
    if not np.all(np.isfinite(stacked)):
        raise ValueError("attentions contain NaN or infinite values; probabilities must be finite")
    return stacked


def _example_row(values, name: str, length: int, batch_index: int) -> np.ndarray | None:
    """Pick one example's (T,) row from an optional (T,) or (B, T) array."""
    if values is None:
        return None
    array = as_float_array(values, name)
    if array.ndim == 2:
        index = check_index(batch_index, "batch_index", array.shape[0], f"rows of {name}")
        array = array[index]
    if array.shape != (length,):
        raise ValueError(
            f"{name} must have shape (T,) or (B, T) with T = {length} (the attention size), "
            f"got {np.shape(values)}"
        )
    return array


def attention_example(
    attentions,
    tokens: Sequence[str],
    token_type_ids=None,
    attention_mask=None,
    batch_index: int = 0,
    drop_padding: bool = True,
) -> AttentionExample:
    """Check one example's attentions against its tokens and drop the padding.

    Inputs:
        attentions: see :func:`stack_attentions`.
        tokens: (T,) WordPiece tokens, e.g. ``['[CLS]', 'the', 'un', '##bel', '[SEP]']``.
        token_type_ids: optional (T,) or (B, T) segment ids (0 = sentence A, 1 = sentence B).
        attention_mask: optional (T,) or (B, T), 1 = real token, 0 = padding. Without it,
            the ``'[PAD]'`` tokens are taken as the padding.
        batch_index: which example of a batch to take.
        drop_padding: drop padded rows and columns (their keys hold exactly 0).
    Returns:
        an :class:`AttentionExample`.
    """
    stacked = stack_attentions(attentions, batch_index)  # (L, N, T, T)
    length = stacked.shape[-1]
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"tokens must be a list of str, got {type(tokens).__name__}")
    bad = [t for t in tokens if not isinstance(t, str)]
    if bad:
        raise TypeError(f"tokens must be a list of str, found {bad[0]!r}")
    if len(tokens) != length:
        raise ValueError(
            f"tokens has {len(tokens)} entries but the attention matrices are {length} x "
            f"{length}; give one token per position, padding included"
        )
    mask = _example_row(attention_mask, "attention_mask", length, batch_index)
    segments = _example_row(token_type_ids, "token_type_ids", length, batch_index)
    if not drop_padding:
        real = np.ones(length, dtype=bool)
    elif mask is not None:
        real = mask != 0
    else:
        real = np.array([t != "[PAD]" for t in tokens], dtype=bool)
    positions = np.flatnonzero(real)  # (T_real,)
    if positions.size == 0:
        raise ValueError("every position is padding: attention_mask has no 1 and nothing to draw")
    kept = stacked[..., positions, :][..., positions]  # (L, N, T_real, T_real)
    return AttentionExample(
        attentions=kept,
        tokens=[tokens[p] for p in positions],
        positions=positions,
        token_type_ids=None if segments is None else segments[positions].astype(int),
        sequence_length=length,
    )


def renormalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rescale every row of (..., T, K) to sum to 1; a row of zeros stays zeros (never NaN)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    row_sums = matrix.sum(axis=-1, keepdims=True)  # (..., T, 1)
    return np.divide(matrix, row_sums, out=np.zeros_like(matrix), where=row_sums > 0)


def select_tokens(
    matrix: np.ndarray, tokens: Sequence[str], keep: Sequence[int], renormalize: bool = False
) -> tuple[np.ndarray, list[str]]:
    """Keep only some tokens, as both queries (rows) and keys (columns).

    Inputs:
        matrix: (..., T, T) attention.
        tokens: (T,) labels of the rows and columns.
        keep: (K,) indices into ``tokens`` to keep, in the order to draw them.
        renormalize: rescale each kept row to sum to 1, i.e. attention redistributed over
            the kept keys as if the dropped ones did not exist.
    Returns:
        ((..., K, K) matrix, (K,) tokens).
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    length = matrix.shape[-1]
    if len(tokens) != length:
        raise ValueError(f"tokens has {len(tokens)} entries, the matrix is {length} x {length}")
    index = np.asarray(keep, dtype=np.intp).reshape(-1)
    if index.size and (index.min() < 0 or index.max() >= length):
        raise ValueError(f"keep must hold indices in 0..{length - 1}, got {list(keep)}")
    selected = matrix[..., index, :][..., index]  # (..., K, K)
    if renormalize:
        selected = renormalize_rows(selected)
    return selected, [tokens[i] for i in index]


def word_groups(
    tokens: Sequence[str], special_tokens: Sequence[str] = SPECIAL_TOKENS
) -> list[list[int]]:
    """Group WordPiece tokens into words: a ``##`` piece continues the word before it.

    Special tokens are always words of their own. Example:
    ``['[CLS]', 'un', '##bel', '##ievable', 'news', '[SEP]']`` -> ``[[0], [1, 2, 3], [4], [5]]``.
    """
    groups: list[list[int]] = []
    for i, token in enumerate(tokens):
        continues_word = (
            token.startswith("##")
            and bool(groups)
            and token not in special_tokens
            and tokens[groups[-1][-1]] not in special_tokens
        )
        if continues_word:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def merge_word_pieces(
    matrix: np.ndarray, tokens: Sequence[str], special_tokens: Sequence[str] = SPECIAL_TOKENS
) -> tuple[np.ndarray, list[str]]:
    """Merge WordPiece tokens into whole words, on both axes.

    Rule (Clark et al., 2019, "What Does BERT Look At?", section 4):
    attention TO a word is the SUM over its pieces' key columns (a query's probabilities of
    looking at each piece add up); attention FROM a word is the MEAN over its pieces' query
    rows. Rows that summed to 1 therefore still sum to 1.

    Inputs:
        matrix: (..., T, T) attention.
        tokens: (T,) WordPiece tokens.
    Returns:
        ((..., W, W) merged attention, (W,) words with the ``##`` markers removed).
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if len(tokens) != matrix.shape[-1]:
        raise ValueError(
            f"tokens has {len(tokens)} entries, the matrix is {matrix.shape[-2]} x "
            f"{matrix.shape[-1]}"
        )
    groups = word_groups(tokens, special_tokens)
    membership = np.zeros((len(tokens), len(groups)))  # (T, W): piece t belongs to word w
    for word, pieces in enumerate(groups):
        membership[pieces, word] = 1.0
    to_words = matrix @ membership  # (..., T, W) sum over each word's key columns
    piece_average = membership / membership.sum(axis=0)  # (T, W) columns sum to 1
    merged = piece_average.T @ to_words  # (..., W, W) mean over each word's query rows
    words = [tokens[g[0]] + "".join(tokens[i][2:] for i in g[1:]) for g in groups]
    return merged, words


def head_average(attentions: np.ndarray) -> np.ndarray:
    """Average attention over heads.

    Inputs:
        attentions: (L, N, T, T) or (N, T, T).
    Returns:
        (L, T, T) or (T, T): the mean over the N heads.
    """
    attentions = np.asarray(attentions, dtype=np.float64)
    if attentions.ndim not in (3, 4):
        raise ValueError(
            f"attentions must have shape (L, N, T, T) or (N, T, T), got {attentions.shape}"
        )
    return attentions.mean(axis=-3)


def attention_rollout(attentions: np.ndarray, add_residual: bool = True) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema, 2020, "Quantifying Attention Flow in Transformers").

    Each layer's attention is averaged over heads; the residual connection is accounted for
    by adding the identity and renormalizing rows, A_hat = rownorm(A + I), which is
    0.5 A + 0.5 I when A's rows sum to 1. The layers are then multiplied from the first up:
    rollout[0] = A_hat[0] and rollout[l] = A_hat[l] @ rollout[l - 1].

    Inputs:
        attentions: (L, N, T, T), layer 0 first.
        add_residual: add the identity before renormalizing (the paper's choice).
    Returns:
        (L, T, T): rollout[l][i, j] is how much input token j flows into token i's
        representation after layer l.
    """
    averaged = head_average(attentions)  # (L, T, T)
    if averaged.ndim != 3:
        raise ValueError(f"attentions must have shape (L, N, T, T), got {np.shape(attentions)}")
    if add_residual:
        averaged = renormalize_rows(averaged + np.eye(averaged.shape[-1]))  # (L, T, T)
    rollout = np.empty_like(averaged)  # (L, T, T)
    rollout[0] = averaged[0]
    for layer in range(1, averaged.shape[0]):
        rollout[layer] = averaged[layer] @ rollout[layer - 1]
    return rollout


def token_attention(attentions: np.ndarray, index: int) -> tuple[np.ndarray, np.ndarray]:
    """What one token attends to, and what attends to it, in every layer and head.

    Inputs:
        attentions: (L, N, T, T).
        index: the token's row/column in the matrices.
    Returns:
        (attends_to, attended_by), each (L, N, T): ``attends_to[l, h]`` is the token's
        query row, ``attended_by[l, h]`` its key column (how much every query looks at it).
    """
    attentions = np.asarray(attentions, dtype=np.float64)
    if attentions.ndim != 4:
        raise ValueError(f"attentions must have shape (L, N, T, T), got {attentions.shape}")
    index = check_index(index, "index", attentions.shape[-1], "the matrix rows")
    return attentions[:, :, index, :], attentions[:, :, :, index]


def _special_mode(hide_special) -> str:
    """Accept ``False``/``True`` as shorthands for ``"keep"``/``"hide"``."""
    if hide_special is False or hide_special is None:
        return "keep"
    if hide_special is True:
        return "hide"
    if hide_special not in SPECIAL_TOKEN_MODES:
        raise ValueError(
            f"hide_special must be one of {', '.join(SPECIAL_TOKEN_MODES)} (or True/False), "
            f"got {hide_special!r}"
        )
    return hide_special


def _check_span(span, length: int) -> tuple[int, int]:
    """Return ``span`` as (start, stop) with 0 <= start < stop <= length."""
    ok_types = isinstance(span, (tuple, list)) and len(span) == 2
    if not ok_types or not all(is_int(s) for s in span):
        raise TypeError(f"span must be a pair of ints (start, stop), got {span!r}")
    start, stop = int(span[0]), int(span[1])
    if not 0 <= start < stop <= length:
        raise ValueError(
            f"span must satisfy 0 <= start < stop <= {length} (positions in the tokens, stop "
            f"excluded), got {span!r}"
        )
    return start, stop


def for_display(
    matrices: np.ndarray,
    example: AttentionExample,
    hide_special="keep",
    merge_pieces: bool = False,
    span: tuple[int, int] | None = None,
    special_tokens: Sequence[str] = SPECIAL_TOKENS,
) -> AttentionDisplay:
    """Apply the display options, in this order: special tokens, word merging, span.

    Inputs:
        matrices: (..., T, T) computed from ``example`` (one head, a head average, a
            rollout...), on the same T tokens as ``example.tokens``.
        example: the :class:`AttentionExample` they came from.
        hide_special: ``"keep"``; ``"hide"`` drops the special tokens' rows and columns
            (rows then sum to less than 1); ``"renormalize"`` drops them and rescales every
            row to sum to 1. ``True``/``False`` mean ``"hide"``/``"keep"``.
        merge_pieces: merge word pieces into words (see :func:`merge_word_pieces`).
        span: optional (start, stop) tokenizer positions, stop excluded: crop to the
            rows and columns of those tokens (a word is kept if any of its pieces is in).
            Cropping never renormalizes.
    Returns:
        an :class:`AttentionDisplay` with (..., K, K) matrices.
    """
    mode = _special_mode(hide_special)
    matrices = np.asarray(matrices, dtype=np.float64)
    labels = list(example.tokens)
    if matrices.ndim < 2 or matrices.shape[-2:] != (len(labels), len(labels)):
        raise ValueError(
            f"matrices must end in ({len(labels)}, {len(labels)}) to match the example's "
            f"tokens, got {matrices.shape}"
        )
    positions = [(int(p),) for p in example.positions]
    segments = None if example.token_type_ids is None else list(example.token_type_ids)

    if mode != "keep":
        keep = [i for i, token in enumerate(labels) if token not in special_tokens]
        if not keep:
            raise ValueError(f"hide_special={mode!r} would hide every token: {labels}")
        matrices, labels = select_tokens(matrices, labels, keep, renormalize=mode == "renormalize")
        positions = [positions[i] for i in keep]
        segments = None if segments is None else [segments[i] for i in keep]

    if merge_pieces:
        groups = word_groups(labels, special_tokens)
        matrices, labels = merge_word_pieces(matrices, labels, special_tokens)
        positions = [tuple(p for i in group for p in positions[i]) for group in groups]
        segments = None if segments is None else [segments[group[0]] for group in groups]

    if span is not None:
        start, stop = _check_span(span, example.sequence_length)
        keep = [k for k, ps in enumerate(positions) if any(start <= p < stop for p in ps)]
        if not keep:
            raise ValueError(f"span {span!r} holds no token that is shown")
        matrices, labels = select_tokens(matrices, labels, keep)
        positions = [positions[k] for k in keep]
        segments = None if segments is None else [segments[k] for k in keep]

    return AttentionDisplay(matrices, labels, positions, segments)


def find_token(display: AttentionDisplay, token) -> int:
    """Find the row/column of ``token`` in a display.

    Inputs:
        display: an :class:`AttentionDisplay`.
        token: a label as shown (a token, or a word when pieces are merged; the first
            occurrence is taken), or an int position in the tokenizer output.
    Returns:
        the index k of that label, 0 <= k < K.
    """
    if isinstance(token, str):
        if token in display.labels:
            return display.labels.index(token)
        # A long text would make the list of every token a message nobody reads.
        shown = ", ".join(display.labels[:20])
        more = f", ... ({len(display.labels)} tokens)" if len(display.labels) > 20 else ""
        raise ValueError(
            f"token {token[:40]!r} is not in the text; available: {shown}{more} "
            "(or give an int position)"
        )
    if not is_int(token):
        raise TypeError(f"token must be a str or an int position, got {token!r}")
    for k, positions in enumerate(display.positions):
        if token in positions:
            return k
    shown = sorted(p for ps in display.positions for p in ps)
    raise ValueError(
        f"token position {token} is not shown (out of range, padding, a hidden special "
        f"token or outside the span); shown positions: {shown}"
    )
