"""Pretraining instances: segment pairs (or single segments) cut from tokenized documents.

The recipe is Google's ``create_pretraining_data.py`` (github.com/google-research/bert),
rewritten for NumPy with each step a function a student can call on its own:

1. ``tokenize_documents``: documents of sentences -> documents of sentences of token ids.
2. ``create_instances_from_document``: walk a document, gather sentences into a chunk up to
   a target length, split the chunk into segment A and segment B, and label the pair.
   Objectives: ``"nsp"`` (BERT: B is the true continuation half the time, else text from
   another document), ``"sop"`` (ALBERT, Lan et al. 2019: A and B are always consecutive
   text from one document, and half the time their order is swapped), ``"mlm"`` (RoBERTa's
   full-sentence packing, Liu et al. 2019: one segment filling the sequence, no pair label).
3. Masking (``minibert.data.masking``): static masking (BERT) masks each instance here, once
   per pass, ``dupe_factor`` passes with different masks; dynamic masking (RoBERTa; HF's
   ``DataCollatorForLanguageModeling``) leaves instances unmasked for
   ``minibert.data.batches.PretrainingBatches`` to mask afresh every epoch.

``next_sentence_label`` follows HF: 0 for IsNext (or in order), 1 for NotNext (or swapped).
Dimension legend: T sequence length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minibert.checks import check_bool, check_int, check_probability
from minibert.data.masking import (
    MaskedTokens,
    PretrainingVocab,
    as_pretraining_vocab,
    mask_tokens,
)

__all__ = [
    "OBJECTIVES",
    "PretrainingDataConfig",
    "PretrainingInstance",
    "create_instances_from_document",
    "create_instances_from_ids",
    "create_pretraining_instances",
    "balance_next_sentence_labels",
    "tokenize_documents",
    "truncate_seq_pair",
]

OBJECTIVES = ("nsp", "sop", "mlm")
"""Sentence-level objectives: BERT's next sentence, ALBERT's sentence order, or none."""


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
    # "nsp" only. False: the labels fall as Google's recipe cuts them: a chunk of one
    # sentence can only get a random B, so short sequences carry more NotNext than IsNext
    # (62% NotNext at T = 32 on the toy corpus). True: NotNext instances drawn at random are
    # dropped until the two labels are equally many, the paper's 50/50.
    balance_next_sentence: bool = False

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {self.objective!r}")
        check_int("max_seq_length", self.max_seq_length, minimum=1)
        least = self.num_special_tokens + self.min_segment_tokens
        if self.max_seq_length < least:
            layout = "[CLS] A [SEP]" if self.objective == "mlm" else "[CLS] A [SEP] B [SEP]"
            raise ValueError(
                f"max_seq_length={self.max_seq_length} is too small for {layout} with "
                f"objective={self.objective!r}; it must be >= {least}"
            )
        check_probability(
            "masked_lm_prob", self.masked_lm_prob, open_at_zero=True, open_at_one=True
        )
        check_int("max_predictions_per_seq", self.max_predictions_per_seq, minimum=1)
        check_probability("short_seq_prob", self.short_seq_prob)
        check_int("dupe_factor", self.dupe_factor, minimum=1)
        check_int("random_seed", self.random_seed, minimum=0)
        check_bool("do_whole_word_mask", self.do_whole_word_mask)
        check_bool("dynamic_masking", self.dynamic_masking)
        check_bool("balance_next_sentence", self.balance_next_sentence)

    @property
    def num_special_tokens(self) -> int:
        """How many [CLS]/[SEP] an instance carries: 3 for a pair, 2 for one segment."""
        return 2 if self.objective == "mlm" else 3

    @property
    def min_segment_tokens(self) -> int:
        """Fewest text tokens an instance can hold: one per segment."""
        return 1 if self.objective == "mlm" else 2


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
    check_int("max_num_tokens", max_num_tokens, minimum=2)
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
    vocab = as_pretraining_vocab(vocab)
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
    vocab = as_pretraining_vocab(vocab)
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
    if config.balance_next_sentence and config.objective == "nsp":
        instances = balance_next_sentence_labels(instances, rng)
    return [instances[k] for k in rng.permutation(len(instances))]


def balance_next_sentence_labels(
    instances: list[PretrainingInstance], rng: np.random.Generator
) -> list[PretrainingInstance]:
    """Drop instances of the commoner next-sentence label, chosen at random, until both
    labels are equally many; the others keep their order.

    Google's cutting gives NotNext to every chunk of a single sentence, so with short
    sequences NotNext outnumbers IsNext (docs/data.md); this restores the 50/50 of the
    paper.
    """
    labels = np.array([instance.next_sentence_label for instance in instances])
    counts = [int(np.sum(labels == label)) for label in (0, 1)]
    commoner = int(np.argmax(counts))
    surplus = np.flatnonzero(labels == commoner)
    dropped = set(rng.choice(surplus, size=abs(counts[0] - counts[1]), replace=False).tolist())
    return [instance for k, instance in enumerate(instances) if k not in dropped]


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
