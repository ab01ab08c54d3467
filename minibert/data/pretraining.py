"""Pretraining data: segment pairs, masking, batches, and an explain table for lectures.

The recipe is Google's ``create_pretraining_data.py`` (github.com/google-research/bert),
rewritten for NumPy with each step a function a student can call on its own:

1. ``tokenize_documents``: documents of sentences -> documents of sentences of token ids.
2. ``create_instances_from_document``: walk a document, gather sentences into a chunk up to
   a target length, split the chunk into segment A and segment B, and label the pair.
   Objectives: ``"nsp"`` (BERT: B is the true continuation half the time, else text from
   another document), ``"sop"`` (ALBERT, Lan et al. 2019: A and B are always consecutive
   text from one document, and half the time their order is swapped), ``"mlm"`` (RoBERTa's
   full-sentence packing, Liu et al. 2019: one segment filling the sequence, no pair label).
3. ``mask_tokens``: choose 15% of the positions (never [CLS]/[SEP]/[PAD]) as targets; of
   those, 80% become [MASK], 10% a random token, 10% stay as they are. The branch each target
   took is recorded so ``explain_instance`` can show it.
4. ``collate_instances`` / ``PretrainingBatches``: pad into NumPy arrays the model takes.

Static masking (BERT) masks once at creation, ``dupe_factor`` times with different masks.
Dynamic masking (RoBERTa; HF's ``DataCollatorForLanguageModeling``) leaves instances
unmasked and lets ``PretrainingBatches`` mask them afresh every epoch.

Label conventions are HF's: ``labels`` is -100 wherever there is no MLM target, and
``next_sentence_label`` is 0 for IsNext (or in order) and 1 for NotNext (or swapped).
Dimension legend: B batch, T sequence length, P max predictions per sequence.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "BRANCHES",
    "IGNORE_INDEX",
    "OBJECTIVES",
    "MaskedTokens",
    "PretrainingBatch",
    "PretrainingBatches",
    "PretrainingDataConfig",
    "PretrainingInstance",
    "PretrainingVocab",
    "collate_instances",
    "create_instances_from_document",
    "create_instances_from_ids",
    "create_pretraining_instances",
    "explain_instance",
    "explain_rows",
    "mask_tokens",
    "tokenize_documents",
    "truncate_seq_pair",
]

IGNORE_INDEX = -100
"""Label value that the MLM loss skips (PyTorch's and HF's ``ignore_index``)."""

OBJECTIVES = ("nsp", "sop", "mlm")
"""Sentence-level objectives: BERT's next sentence, ALBERT's sentence order, or none."""

BRANCHES = ("[MASK]", "random", "kept")
"""What can happen to an MLM target: replaced by [MASK], by a random token, or kept."""
_MASKED, _RANDOM, _KEPT = range(3)

# Streams of randomness the batch iterator derives from its seed (see PretrainingBatches).
_ORDER_STREAM = 0
_MASKING_STREAM = 1


def _check_int(name: str, value, least: int) -> None:
    """Raise unless ``value`` is an int (not a bool) >= ``least``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < least:
        raise ValueError(f"{name} must be >= {least}, got {value}")


def _check_probability(name: str, value, *, open_at_zero: bool, open_at_one: bool) -> None:
    """Raise unless ``value`` is a real number in the stated interval."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a float, got {type(value).__name__} {value!r}")
    low_ok = value > 0 if open_at_zero else value >= 0
    high_ok = value < 1 if open_at_one else value <= 1
    if not (low_ok and high_ok and math.isfinite(value)):
        interval = ("(" if open_at_zero else "[") + "0, 1" + (")" if open_at_one else "]")
        raise ValueError(f"{name} must be in {interval}, got {value!r}")


@dataclass(frozen=True)
class PretrainingDataConfig:
    """Every choice of the data pipeline, with the defaults of Google's flags.

    ``objective`` and ``dynamic_masking`` are not Google flags: they select ALBERT's and
    RoBERTa's variants. Invalid values raise at construction.
    """

    # T: [CLS] A [SEP] B [SEP] must fit in this many positions; longer pairs are truncated.
    max_seq_length: int = 128
    # Fraction of the (unpadded) sequence chosen as MLM targets.
    masked_lm_prob: float = 0.15
    # Cap on MLM targets per sequence; also P, the width of masked_lm_positions in a batch.
    max_predictions_per_seq: int = 20
    # Chance that a document aims for a shorter random length, so the model also sees the
    # short sequences fine-tuning will give it.
    short_seq_prob: float = 0.1
    # Passes over the corpus; each pass cuts different segments and (static) draws new masks.
    dupe_factor: int = 10
    # Seed of the np.random.Generator behind every random choice.
    random_seed: int = 12345
    # Mask all WordPiece pieces of a word together (the later "whole word masking" models).
    do_whole_word_mask: bool = False
    # "nsp" (BERT), "sop" (ALBERT) or "mlm" (single segment, no sentence-level label).
    objective: str = "nsp"
    # False: masks fixed at creation (BERT). True: re-masked every epoch (RoBERTa).
    dynamic_masking: bool = False

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        _check_int("max_seq_length", self.max_seq_length, 1)
        least = self.num_special_tokens + self.min_segment_tokens
        if self.max_seq_length < least:
            layout = "[CLS] A [SEP]" if self.objective == "mlm" else "[CLS] A [SEP] B [SEP]"
            raise ValueError(
                f"max_seq_length={self.max_seq_length} is too small for {layout} with "
                f"objective={self.objective!r}; it must be >= {least}"
            )
        _check_probability(
            "masked_lm_prob", self.masked_lm_prob, open_at_zero=True, open_at_one=True
        )
        _check_int("max_predictions_per_seq", self.max_predictions_per_seq, 1)
        _check_probability(
            "short_seq_prob", self.short_seq_prob, open_at_zero=False, open_at_one=False
        )
        _check_int("dupe_factor", self.dupe_factor, 1)
        _check_int("random_seed", self.random_seed, 0)
        for name in ("do_whole_word_mask", "dynamic_masking"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")

    @property
    def num_special_tokens(self) -> int:
        """How many [CLS]/[SEP] an instance carries: 3 for a pair, 2 for one segment."""
        return 2 if self.objective == "mlm" else 3

    @property
    def min_segment_tokens(self) -> int:
        """Fewest text tokens an instance can hold: one per segment."""
        return 1 if self.objective == "mlm" else 2


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


def _as_vocab(tokenizer_or_vocab) -> PretrainingVocab:
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


@dataclass(frozen=True)
class PretrainingInstance:
    """One training sequence ``[CLS] A [SEP] B [SEP]`` (or ``[CLS] A [SEP]`` for "mlm").

    ``next_sentence_label`` is 0 (IsNext / in order), 1 (NotNext / swapped) or None when the
    objective is "mlm". ``a_document``/``b_document`` index the token documents the
    segments came from (``b_document`` is None without a B segment). ``masking`` holds fixed
    masks under static masking and is None when the batches mask dynamically.
    """

    token_ids: tuple[int, ...]  # (T,) unmasked
    token_type_ids: tuple[int, ...]  # (T,) 0 for [CLS] A [SEP], 1 for B [SEP]
    next_sentence_label: int | None
    a_document: int
    b_document: int | None
    masking: MaskedTokens | None = None


def truncate_seq_pair(
    tokens_a: list[int], tokens_b: list[int], max_num_tokens: int, rng: np.random.Generator
) -> tuple[list[int], list[int]]:
    """Shorten A and B until together they hold at most ``max_num_tokens`` tokens.

    One token at a time is cut from the longer segment (B on a tie), from its front or its
    back with equal chance: always cutting the end would teach the model that sequences
    never start mid-sentence. Returns new lists; the inputs are untouched.
    """
    _check_int("max_num_tokens", max_num_tokens, 2)
    tokens_a, tokens_b = list(tokens_a), list(tokens_b)
    if not tokens_a or not tokens_b:
        raise ValueError(
            f"tokens_a and tokens_b must both be non-empty, got lengths {len(tokens_a)} and "
            f"{len(tokens_b)}"
        )
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        longer = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()
    return tokens_a, tokens_b


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
    vocab = _as_vocab(vocab)
    _check_probability("masked_lm_prob", masked_lm_prob, open_at_zero=True, open_at_one=True)
    _check_int("max_predictions_per_seq", max_predictions_per_seq, 1)
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


def tokenize_documents(documents, tokenizer) -> list[list[list[int]]]:
    """Turn documents of sentences into documents of sentences of token ids.

    Sentences with no tokens are dropped, then documents with no sentences, as in Google's
    code; instance ``a_document`` indices refer to the returned list.
    """
    if not isinstance(documents, (list, tuple)) or not documents:
        raise ValueError(f"documents must be a non-empty list of documents, got {documents!r:.80}")
    token_documents = []
    for d, document in enumerate(documents):
        if isinstance(document, str) or not isinstance(document, (list, tuple)):
            raise TypeError(
                f"documents[{d}] must be a list of sentence strings, got {type(document).__name__}"
            )
        sentences = []
        for s, sentence in enumerate(document):
            if not isinstance(sentence, str):
                raise TypeError(f"documents[{d}][{s}] must be a str, got {type(sentence).__name__}")
            ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(sentence))
            if ids:
                sentences.append([int(i) for i in ids])
        if sentences:
            token_documents.append(sentences)
    if not token_documents:
        raise ValueError("documents hold no tokens after tokenization; the corpus is empty")
    return token_documents


def _random_other_document(num_documents: int, document_index: int, rng) -> int:
    """Draw a document index uniformly from all except ``document_index``."""
    other = int(rng.integers(num_documents - 1))
    return other + 1 if other >= document_index else other


def _split_single_segment(sentence: list[int], vocab: PretrainingVocab, rng):
    """Cut one sentence in two at a random word start; None if it is a single word."""
    word_starts = [j for j in range(1, len(sentence)) if not vocab.is_continuation[sentence[j]]]
    if not word_starts:
        return None
    cut = word_starts[int(rng.integers(len(word_starts)))]
    return sentence[:cut], sentence[cut:]


def _segment_pair(all_documents, document_index, chunk, target_seq_length, objective, vocab, rng):
    """Split a chunk of sentences into (A, B, label, b_document, unused sentences) or None."""
    a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
    tokens_a = [t for sentence in chunk[:a_end] for t in sentence]
    if objective == "sop":
        if len(chunk) >= 2:
            tokens_b = [t for sentence in chunk[a_end:] for t in sentence]
        else:
            # ALBERT falls back to a random document here; cutting the sentence keeps A and B
            # consecutive text from one document, which is what the order task is about.
            halves = _split_single_segment(chunk[0], vocab, rng)
            if halves is None:
                return None
            tokens_a, tokens_b = halves
        if rng.random() < 0.5:
            return tokens_b, tokens_a, 1, document_index, 0
        return tokens_a, tokens_b, 0, document_index, 0

    # NSP. A one-sentence chunk has no true continuation to offer, so it is always NotNext.
    if len(chunk) == 1 or rng.random() < 0.5:
        b_document = _random_other_document(len(all_documents), document_index, rng)
        random_document = all_documents[b_document]
        target_b_length = target_seq_length - len(tokens_a)
        tokens_b = []
        for sentence in random_document[int(rng.integers(len(random_document))) :]:
            tokens_b.extend(sentence)
            if len(tokens_b) >= target_b_length:
                break
        # The sentences after A were not used: hand them back so no text is wasted.
        return tokens_a, tokens_b, 1, b_document, len(chunk) - a_end
    tokens_b = [t for sentence in chunk[a_end:] for t in sentence]
    return tokens_a, tokens_b, 0, document_index, 0


def create_instances_from_document(
    all_documents: list[list[list[int]]],
    document_index: int,
    config: PretrainingDataConfig,
    vocab,
    rng: np.random.Generator,
) -> list[PretrainingInstance]:
    """Cut one document into segment-pair instances ("nsp" or "sop").

    Sentences are gathered into a chunk until it reaches the target length (or the document
    ends); a random number of leading sentences becomes A, the rest B. For "nsp", half the
    time B is replaced by text from another document, starting at a random sentence. The
    target length is ``max_seq_length - 3`` except, with probability ``short_seq_prob``, a
    random length in [2, max_seq_length - 3] drawn once for the whole document (as Google
    does). Under static masking each instance is masked here.

    Args:
        all_documents: every document as sentences of token ids (all non-empty).
        document_index: the document to cut.
    """
    if config.objective == "mlm":
        raise ValueError('objective "mlm" has no segment pairs; use create_instances_from_ids')
    vocab = _as_vocab(vocab)
    document = all_documents[document_index]
    max_num_tokens = config.max_seq_length - 3
    target_seq_length = max_num_tokens
    if rng.random() < config.short_seq_prob:
        target_seq_length = int(rng.integers(2, max_num_tokens + 1))

    instances = []
    chunk: list[list[int]] = []
    chunk_length = 0
    i = 0
    while i < len(document):
        chunk.append(document[i])
        chunk_length += len(document[i])
        if i == len(document) - 1 or chunk_length >= target_seq_length:
            pair = _segment_pair(
                all_documents,
                document_index,
                chunk,
                target_seq_length,
                config.objective,
                vocab,
                rng,
            )
            if pair is not None:
                tokens_a, tokens_b, label, b_document, unused = pair
                i -= unused
                tokens_a, tokens_b = truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
                tokens = [
                    vocab.cls_token_id,
                    *tokens_a,
                    vocab.sep_token_id,
                    *tokens_b,
                    vocab.sep_token_id,
                ]
                token_types = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
                instances.append(
                    _finish(
                        tokens, token_types, label, document_index, b_document, config, vocab, rng
                    )
                )
            chunk = []
            chunk_length = 0
        i += 1
    return instances


def _finish(tokens, token_types, label, a_document, b_document, config, vocab, rng):
    """Build the instance, masking it now under static masking."""
    masking = None
    if not config.dynamic_masking:
        masking = mask_tokens(
            tokens,
            rng,
            vocab,
            masked_lm_prob=config.masked_lm_prob,
            max_predictions_per_seq=config.max_predictions_per_seq,
            do_whole_word_mask=config.do_whole_word_mask,
        )
    return PretrainingInstance(
        tuple(tokens), tuple(token_types), label, a_document, b_document, masking
    )


def _create_stream_instances(all_documents, config, vocab, rng) -> list[PretrainingInstance]:
    """One "mlm" pass: documents in random order as one token stream, cut into windows.

    A [SEP] separates documents inside the stream (RoBERTa's FULL-SENTENCES packing), so a
    window may hold the end of one document and the start of the next.
    """
    max_num_tokens = config.max_seq_length - 2
    stream: list[int] = []
    owner: list[int] = []
    for d in rng.permutation(len(all_documents)):
        for sentence in all_documents[d]:
            stream.extend(sentence)
            owner.extend([int(d)] * len(sentence))
        stream.append(vocab.sep_token_id)
        owner.append(int(d))

    instances = []
    start = 0
    while start < len(stream):
        # A window never starts with a document separator, and one at its end separates
        # nothing, so it is dropped (separators are never adjacent: documents are non-empty).
        if stream[start] == vocab.sep_token_id:
            start += 1
            continue
        target_length = max_num_tokens
        if rng.random() < config.short_seq_prob:
            target_length = int(rng.integers(1, max_num_tokens + 1))
        window = stream[start : start + target_length]
        a_document = owner[start]
        start += target_length
        if window[-1] == vocab.sep_token_id:
            window.pop()
        tokens = [vocab.cls_token_id, *window, vocab.sep_token_id]
        instances.append(
            _finish(tokens, [0] * len(tokens), None, a_document, None, config, vocab, rng)
        )
    return instances


def create_instances_from_ids(
    token_documents: list[list[list[int]]], vocab, config: PretrainingDataConfig | None = None
) -> list[PretrainingInstance]:
    """Make every instance of the corpus: ``dupe_factor`` passes, then one shuffle.

    Google also shuffles the documents first; since NotNext documents are drawn uniformly and
    the instances are shuffled at the end, that changes nothing, and skipping it keeps
    ``a_document`` an index into ``token_documents``.

    "nsp" needs a second document to draw NotNext segments from, so a one-document corpus
    raises ValueError; "sop" and "mlm" work on one document.
    """
    config = PretrainingDataConfig() if config is None else config
    if not isinstance(config, PretrainingDataConfig):
        raise TypeError(f"config must be a PretrainingDataConfig, got {type(config).__name__}")
    vocab = _as_vocab(vocab)
    if not token_documents:
        raise ValueError("token_documents is empty; the corpus needs at least one document")
    for d, document in enumerate(token_documents):
        if not document or not all(len(sentence) for sentence in document):
            raise ValueError(
                f"token_documents[{d}] has an empty document or sentence; tokenize_documents "
                "drops those"
            )
    if config.objective == "nsp" and len(token_documents) < 2:
        raise ValueError(
            'objective "nsp" needs at least 2 documents to draw NotNext segments from, got 1; '
            'use objective="sop" or "mlm" for a one-document corpus'
        )
    rng = np.random.default_rng(config.random_seed)
    instances: list[PretrainingInstance] = []
    for _ in range(config.dupe_factor):
        if config.objective == "mlm":
            instances.extend(_create_stream_instances(token_documents, config, vocab, rng))
        else:
            for document_index in range(len(token_documents)):
                instances.extend(
                    create_instances_from_document(
                        token_documents, document_index, config, vocab, rng
                    )
                )
    return [instances[k] for k in rng.permutation(len(instances))]


def create_pretraining_instances(
    documents: list[list[str]], tokenizer, config: PretrainingDataConfig | None = None
) -> list[PretrainingInstance]:
    """Tokenize text documents and make their pretraining instances (see ``config``).

    Args:
        documents: documents, each a list of sentence strings (``ToyCorpus.train`` or
            ``read_corpus(path)``).
        tokenizer: a ``BertTokenizer`` (``tokenize``, ``convert_tokens_to_ids``, ``vocab``,
            special token ids).
    """
    vocab = PretrainingVocab.from_tokenizer(tokenizer)
    return create_instances_from_ids(tokenize_documents(documents, tokenizer), vocab, config)


@dataclass(frozen=True, eq=False)
class PretrainingBatch:
    """Padded arrays for a batch of instances, in HF's and Google's conventions.

    input_ids (B, T) int64 masked ids, [PAD] after the end; token_type_ids (B, T) int64;
    attention_mask (B, T) int64, 1 real / 0 padding; labels (B, T) int64, the original id at
    each MLM target and -100 elsewhere; next_sentence_label (B,) int64 or None for "mlm";
    masked_lm_positions / masked_lm_ids (B, P) int64 and masked_lm_weights (B, P) float32,
    1.0 for a real target and 0.0 for padding (Google's layout).
    """

    input_ids: np.ndarray  # (B, T)
    token_type_ids: np.ndarray  # (B, T)
    attention_mask: np.ndarray  # (B, T)
    labels: np.ndarray  # (B, T)
    next_sentence_label: np.ndarray | None  # (B,)
    masked_lm_positions: np.ndarray  # (B, P)
    masked_lm_ids: np.ndarray  # (B, P)
    masked_lm_weights: np.ndarray  # (B, P)

    def model_inputs(self) -> dict[str, np.ndarray]:
        """The keyword arguments of ``BertForPreTraining.__call__`` (no NSP label for "mlm")."""
        inputs = {
            "input_ids": self.input_ids,
            "token_type_ids": self.token_type_ids,
            "attention_mask": self.attention_mask,
            "labels": self.labels,
        }
        if self.next_sentence_label is not None:
            inputs["next_sentence_label"] = self.next_sentence_label
        return inputs


def collate_instances(
    instances: list[PretrainingInstance],
    pad_token_id: int,
    *,
    max_seq_length: int | None = None,
    max_predictions_per_seq: int = 20,
) -> PretrainingBatch:
    """Pad masked instances into one ``PretrainingBatch``.

    Args:
        instances: B instances, each with ``masking`` set.
        pad_token_id: the id that fills positions after each sequence's end.
        max_seq_length: T; None pads to the longest instance of the batch instead.
        max_predictions_per_seq: P, the width of the Google-style ``masked_lm_*`` arrays.
    """
    if not instances:
        raise ValueError("instances is empty; a batch needs at least one instance")
    for b, instance in enumerate(instances):
        if instance.masking is None:
            raise ValueError(
                f"instances[{b}] has no masking; mask it with mask_tokens first (or let "
                "PretrainingBatches do it)"
            )
        if len(instance.masking.masked_lm_positions) > max_predictions_per_seq:
            raise ValueError(
                f"instances[{b}] has {len(instance.masking.masked_lm_positions)} MLM targets, "
                f"more than max_predictions_per_seq={max_predictions_per_seq}"
            )
    labels_given = [instance.next_sentence_label is not None for instance in instances]
    if any(labels_given) and not all(labels_given):
        raise ValueError("instances mix pair instances and single-segment ('mlm') instances")
    longest = max(len(instance.token_ids) for instance in instances)
    seq_length = longest if max_seq_length is None else max_seq_length
    if longest > seq_length:
        raise ValueError(
            f"an instance has {longest} tokens, more than max_seq_length={max_seq_length}"
        )

    batch_size = len(instances)
    input_ids = np.full((batch_size, seq_length), pad_token_id, dtype=np.int64)  # (B, T)
    token_type_ids = np.zeros((batch_size, seq_length), dtype=np.int64)  # (B, T)
    attention_mask = np.zeros((batch_size, seq_length), dtype=np.int64)  # (B, T)
    labels = np.full((batch_size, seq_length), IGNORE_INDEX, dtype=np.int64)  # (B, T)
    masked_lm_positions = np.zeros((batch_size, max_predictions_per_seq), dtype=np.int64)
    masked_lm_ids = np.zeros((batch_size, max_predictions_per_seq), dtype=np.int64)
    masked_lm_weights = np.zeros((batch_size, max_predictions_per_seq), dtype=np.float32)
    for b, instance in enumerate(instances):
        length = len(instance.token_ids)
        masking = instance.masking
        input_ids[b, :length] = masking.input_ids
        token_type_ids[b, :length] = instance.token_type_ids
        attention_mask[b, :length] = 1
        num_predictions = len(masking.masked_lm_positions)
        labels[b, list(masking.masked_lm_positions)] = masking.masked_lm_ids
        masked_lm_positions[b, :num_predictions] = masking.masked_lm_positions
        masked_lm_ids[b, :num_predictions] = masking.masked_lm_ids
        masked_lm_weights[b, :num_predictions] = 1.0
    next_sentence_label = None
    if all(labels_given):
        next_sentence_label = np.array(
            [instance.next_sentence_label for instance in instances], dtype=np.int64
        )  # (B,)
    return PretrainingBatch(
        input_ids,
        token_type_ids,
        attention_mask,
        labels,
        next_sentence_label,
        masked_lm_positions,
        masked_lm_ids,
        masked_lm_weights,
    )


class PretrainingBatches:
    """An endless, resumable stream of batches: shuffled each epoch, masked afresh if dynamic.

    Instances whose ``masking`` is None (dynamic masking) are masked when their batch is
    made; instances with fixed masks (static masking) are used as they are.

    Randomness is counter-based: epoch e's order comes from a generator seeded with
    ``(seed, 0, e)`` and the masks of batch i of epoch e from one seeded with
    ``(seed, 1, e, i)``. So the whole future of the stream is fixed by ``(seed, epoch,
    index)``; ``state_dict()`` is those integers, JSON-able, and a run resumed from it
    yields exactly the batches the uninterrupted run would have.

    Args:
        instances: from ``create_pretraining_instances``.
        tokenizer: a tokenizer or ``PretrainingVocab`` (special ids, random replacements).
        config: masking settings and ``max_seq_length``; its ``random_seed`` is the default
            seed.
        batch_size: B.
        shuffle: draw a new order each epoch; False keeps the given order.
        padding: "max_length" pads every batch to ``config.max_seq_length``; "longest" to
            the longest instance of the batch (less work, shapes vary).
        drop_last: skip an epoch's last, smaller batch.
        seed: overrides ``config.random_seed``.
    """

    def __init__(
        self,
        instances: list[PretrainingInstance],
        tokenizer,
        config: PretrainingDataConfig | None = None,
        *,
        batch_size: int = 32,
        shuffle: bool = True,
        padding: str = "max_length",
        drop_last: bool = False,
        seed: int | None = None,
    ):
        self.config = PretrainingDataConfig() if config is None else config
        if not isinstance(self.config, PretrainingDataConfig):
            raise TypeError(f"config must be a PretrainingDataConfig, got {type(config).__name__}")
        if not instances:
            raise ValueError("instances is empty; there is nothing to batch")
        _check_int("batch_size", batch_size, 1)
        if padding not in ("max_length", "longest"):
            raise ValueError(f"padding must be 'max_length' or 'longest', got {padding!r}")
        if drop_last and len(instances) < batch_size:
            raise ValueError(
                f"drop_last=True with {len(instances)} instances and batch_size={batch_size} "
                "would give no batch at all"
            )
        self.seed = self.config.random_seed if seed is None else seed
        _check_int("seed", self.seed, 0)
        self.instances = list(instances)
        self.vocab = _as_vocab(tokenizer)
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        self.padding = padding
        self.drop_last = drop_last
        self.epoch = 0
        self.index = 0
        self._order_epoch: int | None = None
        self._order = np.arange(len(self.instances))

    def __len__(self) -> int:
        """Batches per epoch."""
        if self.drop_last:
            return len(self.instances) // self.batch_size
        return math.ceil(len(self.instances) / self.batch_size)

    def __iter__(self) -> PretrainingBatches:
        return self

    def __next__(self) -> PretrainingBatch:
        if self.index >= len(self):
            self.epoch += 1
            self.index = 0
        order = self._epoch_order(self.epoch)
        chosen = order[self.index * self.batch_size : (self.index + 1) * self.batch_size]
        rng = np.random.default_rng([self.seed, _MASKING_STREAM, self.epoch, self.index])
        batch = [self._masked(self.instances[k], rng) for k in chosen]
        self.index += 1
        return collate_instances(
            batch,
            self.vocab.pad_token_id,
            max_seq_length=self.config.max_seq_length if self.padding == "max_length" else None,
            max_predictions_per_seq=self.config.max_predictions_per_seq,
        )

    def _epoch_order(self, epoch: int) -> np.ndarray:
        """The instance order of ``epoch`` (cached: an epoch asks for it once per batch)."""
        if self._order_epoch != epoch:
            if self.shuffle:
                rng = np.random.default_rng([self.seed, _ORDER_STREAM, epoch])
                self._order = rng.permutation(len(self.instances))
            self._order_epoch = epoch
        return self._order

    def _masked(self, instance: PretrainingInstance, rng) -> PretrainingInstance:
        """The instance with masks: its own fixed ones, or fresh ones drawn from ``rng``."""
        if instance.masking is not None:
            return instance
        masking = mask_tokens(
            instance.token_ids,
            rng,
            self.vocab,
            masked_lm_prob=self.config.masked_lm_prob,
            max_predictions_per_seq=self.config.max_predictions_per_seq,
            do_whole_word_mask=self.config.do_whole_word_mask,
        )
        return dataclasses.replace(instance, masking=masking)

    def state_dict(self) -> dict[str, int]:
        """The position as JSON-able ints: the next batch is batch ``index`` of ``epoch``."""
        return {
            "seed": int(self.seed),
            "epoch": int(self.epoch),
            "index": int(self.index),
            "num_instances": len(self.instances),
            "batch_size": self.batch_size,
        }

    def load_state_dict(self, state: dict) -> None:
        """Resume from ``state_dict()``; the instances and batch size must be the same."""
        expected = ("seed", "epoch", "index", "num_instances", "batch_size")
        if not isinstance(state, dict) or sorted(state) != sorted(expected):
            raise ValueError(f"state must be a dict with keys {expected}, got {state!r:.120}")
        for key in expected:
            _check_int(f"state[{key!r}]", state[key], 0)
        for key, own in (("num_instances", len(self.instances)), ("batch_size", self.batch_size)):
            if state[key] != own:
                raise ValueError(
                    f"state[{key!r}] = {state[key]} does not match this iterator's {own}; "
                    "resume with the same instances and batch size"
                )
        if state["index"] > len(self):
            raise ValueError(
                f"state['index'] = {state['index']} exceeds the {len(self)} batches of an epoch"
            )
        self.seed = int(state["seed"])
        self.epoch = int(state["epoch"])
        self.index = int(state["index"])
        self._order_epoch = None


def explain_rows(
    instance: PretrainingInstance, tokenizer, masking: MaskedTokens | None = None
) -> list[dict]:
    """One dict per position: what the model reads there and what it must predict.

    Keys: ``position``, ``segment`` (token type), ``token`` (original), ``input`` (what the
    model reads), ``target`` (the token to predict, "" if none) and ``branch`` ("[MASK]",
    "random", "kept", or "" when the position was not chosen). ``masking`` defaults to the
    instance's own fixed masks.
    """
    masking = instance.masking if masking is None else masking
    if masking is None:
        raise ValueError(
            "instance has no masking; pass masking=mask_tokens(instance.token_ids, rng, vocab)"
        )
    if len(masking.input_ids) != len(instance.token_ids):
        raise ValueError(
            f"masking has {len(masking.input_ids)} positions but the instance has "
            f"{len(instance.token_ids)}"
        )
    originals = tokenizer.convert_ids_to_tokens(list(instance.token_ids))
    inputs = tokenizer.convert_ids_to_tokens(list(masking.input_ids))
    branch_at = dict(zip(masking.masked_lm_positions, masking.masked_lm_branches, strict=True))
    rows = []
    for position, (original, read, segment) in enumerate(
        zip(originals, inputs, instance.token_type_ids, strict=True)
    ):
        chosen = position in branch_at
        rows.append(
            {
                "position": position,
                "segment": int(segment),
                "token": original,
                "input": read,
                "target": original if chosen else "",
                "branch": branch_at.get(position, ""),
            }
        )
    return rows


def explain_instance(
    instance: PretrainingInstance, tokenizer, masking: MaskedTokens | None = None
) -> str:
    """A printable table of ``explain_rows`` under a line saying what the pair label means."""
    rows = explain_rows(instance, tokenizer, masking)
    label = instance.next_sentence_label
    if label is None:
        header = f"single segment (objective 'mlm'), starting in document {instance.a_document}"
    elif instance.a_document != instance.b_document:
        header = (
            f"next_sentence_label = {label} (NotNext: A from document "
            f"{instance.a_document}, B from document {instance.b_document})"
        )
    elif label == 1:
        header = (
            f"next_sentence_label = {label} (swapped: B came before A in document "
            f"{instance.a_document})"
        )
    else:
        header = (
            f"next_sentence_label = {label} (IsNext: B follows A in document {instance.a_document})"
        )
    columns = ("position", "segment", "token", "input", "target", "branch")
    cells = [[str(row[column]) for column in columns] for row in rows]
    widths = [
        max(len(column), *(len(line[c]) for line in cells)) for c, column in enumerate(columns)
    ]
    lines = [header]
    for line in [list(columns), *cells]:
        padded = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        lines.append("  ".join(padded).rstrip())
    branches = [row["branch"] for row in rows if row["branch"]]
    lines.append(
        f"{len(branches)} of {len(rows)} positions are MLM targets: "
        f"{branches.count('[MASK]')} [MASK], {branches.count('random')} random, "
        f"{branches.count('kept')} kept"
    )
    return "\n".join(lines)
