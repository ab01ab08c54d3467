"""Tests for pretraining instances, masking, batching and explain (minibert.data.pretraining,
.masking, .batches, .explain).

Most tests run on synthetic documents whose every word says where it came from: the word
``d3p17`` is token 17 of document 3. A tiny explicit tokenizer maps each word to one id, so
every segment of every instance can be traced back to its document and position, and the
properties of Google's algorithm (NotNext from another document, swapped order, contiguous
segments) are checked exactly. The last tests run the real ``BertTokenizer`` on the toy corpus.
"""

import json
import math
import re

import numpy as np
import pytest

from minibert.checks import IGNORE_INDEX
from minibert.data.batches import PretrainingBatches, collate_instances
from minibert.data.corpus import ToyCorpus
from minibert.data.explain import explain_instance, explain_rows
from minibert.data.masking import BRANCHES, PretrainingVocab, mask_tokens
from minibert.data.pretraining import (
    PretrainingDataConfig,
    PretrainingInstance,
    balance_next_sentence_labels,
    create_instances_from_ids,
    create_pretraining_instances,
    tokenize_documents,
    truncate_seq_pair,
)

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
PAD, UNK, CLS, SEP, MASK = range(5)


class TinyTokenizer:
    """A stand-in for BertTokenizer with an explicit vocabulary and the same attributes.

    Words are split on whitespace; a word listed in ``pieces`` becomes those WordPiece pieces.
    """

    def __init__(self, words, pieces=None):
        self.pieces = pieces or {}
        piece_tokens = {piece for split in self.pieces.values() for piece in split}
        self.tokens = list(SPECIALS) + sorted(set(words) | piece_tokens)
        self.vocab = {token: i for i, token in enumerate(self.tokens)}
        self.pad_token_id, self.unk_token_id, self.cls_token_id = PAD, UNK, CLS
        self.sep_token_id, self.mask_token_id = SEP, MASK
        self.all_special_ids = list(range(len(SPECIALS)))

    def __len__(self):
        return len(self.tokens)

    def tokenize(self, text):
        return [piece for word in text.split() for piece in self.pieces.get(word, [word])]

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab.get(token, UNK) for token in tokens]

    def convert_ids_to_tokens(self, ids):
        return [self.tokens[i] for i in ids]


def traceable_documents(num_documents, seed, min_sentences=1, max_sentences=8):
    """Documents of sentences of words ``d{document}p{position in document}``."""
    rng = np.random.default_rng(seed)
    documents = []
    for d in range(num_documents):
        position = 0
        sentences = []
        for _ in range(int(rng.integers(min_sentences, max_sentences + 1))):
            length = int(rng.integers(1, 10))
            sentences.append(" ".join(f"d{d}p{position + k}" for k in range(length)))
            position += length
        documents.append(sentences)
    return documents


def origin(token: str) -> tuple[int, int]:
    """(document, position) of a traceable word."""
    document, position = re.fullmatch(r"d(\d+)p(\d+)", token).groups()
    return int(document), int(position)


def segments(instance):
    """The token ids of segment A and segment B (B empty for single-segment instances)."""
    ids = np.array(instance.token_ids)
    types = np.array(instance.token_type_ids)
    a = ids[1 : np.flatnonzero(types == 0)[-1]]
    b = ids[types == 1][:-1]
    return a.tolist(), b.tolist()


def binomial_interval(n: int, p: float, alpha: float = 1e-6) -> tuple[int, int]:
    """[lo, hi] holding X ~ Binomial(n, p) except with probability <= alpha (exact tails)."""
    k = np.arange(n + 1)
    log_pmf = (
        np.array(
            [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(n + 1)]
        )
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )
    cdf = np.cumsum(np.exp(log_pmf))
    return int(np.searchsorted(cdf, alpha / 2)), int(np.searchsorted(cdf, 1 - alpha / 2))


@pytest.fixture(scope="module")
def documents():
    return traceable_documents(80, seed=0)


@pytest.fixture(scope="module")
def tokenizer(documents):
    return TinyTokenizer(word for document in documents for s in document for word in s.split())


def config(**changes):
    """A small, fast configuration: short sequences so chunking and truncation happen."""
    settings = dict(max_seq_length=32, dupe_factor=3, random_seed=11)
    settings.update(changes)
    return PretrainingDataConfig(**settings)


# ----------------------------------------------------------------------- determinism


@pytest.mark.parametrize("objective", ["nsp", "sop", "mlm"])
def test_same_seed_same_instances_and_new_seed_new_ones(documents, tokenizer, objective):
    first = create_pretraining_instances(documents, tokenizer, config(objective=objective))
    again = create_pretraining_instances(documents, tokenizer, config(objective=objective))
    other = create_pretraining_instances(
        documents, tokenizer, config(objective=objective, random_seed=12)
    )
    assert first == again
    assert first != other


# ----------------------------------------------------------------------- segments


def test_nsp_pairs_are_true_continuations_or_from_another_document(documents, tokenizer):
    instances = create_pretraining_instances(documents, tokenizer, config(objective="nsp"))
    labels = [instance.next_sentence_label for instance in instances]
    assert set(labels) == {0, 1}
    for instance in instances:
        a, b = segments(instance)
        a_origin = [origin(token) for token in tokenizer.convert_ids_to_tokens(a)]
        b_origin = [origin(token) for token in tokenizer.convert_ids_to_tokens(b)]
        assert a and b
        assert {d for d, _ in a_origin} == {instance.a_document}
        assert {d for d, _ in b_origin} == {instance.b_document}
        # Truncation cuts only ends, so each segment stays one contiguous run of text.
        for run in (a_origin, b_origin):
            assert [p for _, p in run] == list(range(run[0][1], run[0][1] + len(run)))
        if instance.next_sentence_label == 0:
            assert instance.b_document == instance.a_document
            assert a_origin[-1][1] < b_origin[0][1]
        else:
            assert instance.b_document != instance.a_document


def test_nsp_hands_back_the_sentences_a_random_b_displaced(documents, tokenizer):
    # Long sequences, so nothing is truncated: one pass must then use every token of every
    # document in an A segment or in its own IsNext B segment.
    instances = create_pretraining_instances(
        documents, tokenizer, config(max_seq_length=512, short_seq_prob=0.0, dupe_factor=1)
    )
    covered = set()
    for instance in instances:
        a, b = segments(instance)
        covered |= {origin(token) for token in tokenizer.convert_ids_to_tokens(a)}
        if instance.next_sentence_label == 0:
            covered |= {origin(token) for token in tokenizer.convert_ids_to_tokens(b)}
    every_token = {
        origin(word) for document in documents for sentence in document for word in sentence.split()
    }
    assert covered == every_token


def test_balanced_nsp_drops_only_surplus_notnext_and_keeps_googles_pairs(documents, tokenizer):
    # Short sequences: many chunks of one sentence, which Google's cut always pairs with a
    # random B, so NotNext is the majority until the surplus is dropped.
    google = create_pretraining_instances(documents, tokenizer, config(objective="nsp"))
    balanced = create_pretraining_instances(
        documents, tokenizer, config(objective="nsp", balance_next_sentence=True)
    )
    google_labels = np.array([instance.next_sentence_label for instance in google])
    labels = np.array([instance.next_sentence_label for instance in balanced])
    assert google_labels.mean() > 0.55  # NotNext is the majority as cut
    assert (labels == 0).sum() == (labels == 1).sum() == (google_labels == 0).sum()
    # The same cut, the same masks: every IsNext instance survives and every balanced
    # instance is one Google's cut made (only NotNext ones are missing).
    assert {i for i in balanced if i.next_sentence_label == 0} == {
        i for i in google if i.next_sentence_label == 0
    }
    assert set(balanced) <= set(google)
    again = create_pretraining_instances(
        documents, tokenizer, config(objective="nsp", balance_next_sentence=True)
    )
    assert balanced == again
    # "sop" is 50/50 by construction: the setting changes nothing there.
    assert create_pretraining_instances(
        documents, tokenizer, config(objective="sop", balance_next_sentence=True)
    ) == create_pretraining_instances(documents, tokenizer, config(objective="sop"))


def test_balance_next_sentence_labels_keeps_order_and_drops_the_commoner_label():
    def instance(k, label):
        return PretrainingInstance((2, 5 + k, 3, 6, 3), (0, 0, 0, 1, 1), label, k, k + 1)

    labels = [0, 0, 1, 0, 0, 0, 1]  # IsNext the majority this time
    instances = [instance(k, label) for k, label in enumerate(labels)]
    kept = balance_next_sentence_labels(instances, np.random.default_rng(3))
    assert [i.next_sentence_label for i in kept].count(0) == 2
    assert [i.next_sentence_label for i in kept].count(1) == 2
    assert [i.a_document for i in kept] == sorted(i.a_document for i in kept)
    assert balance_next_sentence_labels(kept, np.random.default_rng(4)) == kept


def test_sop_pairs_are_consecutive_and_swapped_half_the_time(documents, tokenizer):
    instances = create_pretraining_instances(
        documents, tokenizer, config(objective="sop", dupe_factor=10)
    )
    for instance in instances:
        a, b = segments(instance)
        a_origin = [origin(token) for token in tokenizer.convert_ids_to_tokens(a)]
        b_origin = [origin(token) for token in tokenizer.convert_ids_to_tokens(b)]
        assert {d for d, _ in a_origin + b_origin} == {instance.a_document}
        assert instance.b_document == instance.a_document
        if instance.next_sentence_label == 0:
            assert a_origin[-1][1] < b_origin[0][1]
        else:
            assert b_origin[-1][1] < a_origin[0][1]
    swapped = sum(instance.next_sentence_label for instance in instances)
    low, high = binomial_interval(len(instances), 0.5)
    assert low <= swapped <= high


def test_sop_cuts_a_lone_sentence_at_a_word_start():
    tokenizer = TinyTokenizer(["red", "green", "blue"], {"greenish": ["green", "##ish"]})
    documents = [["red greenish blue"]]
    instances = create_pretraining_instances(
        documents, tokenizer, config(objective="sop", dupe_factor=20)
    )
    assert len(instances) == 20
    for instance in instances:
        a, b = (tokenizer.convert_ids_to_tokens(ids) for ids in segments(instance))
        in_order = a + b if instance.next_sentence_label == 0 else b + a
        assert in_order == ["red", "green", "##ish", "blue"]
        assert not a[0].startswith("##") and not b[0].startswith("##")
    assert {instance.next_sentence_label for instance in instances} == {0, 1}


def test_mlm_instances_are_single_segments_packed_across_documents(documents, tokenizer):
    instances = create_pretraining_instances(
        documents, tokenizer, config(objective="mlm", short_seq_prob=0.0)
    )
    full = 0
    for instance in instances:
        assert instance.next_sentence_label is None and instance.b_document is None
        assert set(instance.token_type_ids) == {0}
        assert instance.token_ids[0] == CLS and instance.token_ids[-1] == SEP
        text = tokenizer.convert_ids_to_tokens(instance.token_ids[1:-1])
        runs = " ".join(text).split("[SEP]")
        assert origin(runs[0].split()[0])[0] == instance.a_document
        for run in runs:
            run_origin = [origin(token) for token in run.split()]
            assert len({d for d, _ in run_origin}) == 1
            assert [p for _, p in run_origin] == list(
                range(run_origin[0][1], run_origin[0][1] + len(run_origin))
            )
        full += len(instance.token_ids) >= 31
    # Without short sequences every window fills the sequence, up to a dropped separator,
    # except the last window of each of the 3 passes.
    assert full >= len(instances) - 3


@pytest.mark.parametrize("objective", ["nsp", "sop", "mlm"])
def test_instances_fit_max_seq_length_and_token_types_mark_segments(
    documents, tokenizer, objective
):
    instances = create_pretraining_instances(
        documents, tokenizer, config(objective=objective, max_seq_length=24)
    )
    for instance in instances:
        ids, types = instance.token_ids, instance.token_type_ids
        assert len(ids) == len(types) <= 24
        assert ids[0] == CLS and ids[-1] == SEP
        separators = [i for i, token in enumerate(ids) if token == SEP]
        if objective == "mlm":
            assert set(types) == {0}
            continue
        assert len(separators) == 2
        first_sep = separators[0]
        assert list(types) == [0] * (first_sep + 1) + [1] * (len(ids) - first_sep - 1)


def test_short_seq_prob_makes_shorter_sequences(documents, tokenizer):
    def mean_length(short_seq_prob):
        instances = create_pretraining_instances(
            documents, tokenizer, config(objective="mlm", short_seq_prob=short_seq_prob)
        )
        return np.mean([len(instance.token_ids) for instance in instances])

    assert mean_length(1.0) < 0.7 * mean_length(0.0)


def test_nsp_needs_two_documents_but_sop_and_mlm_do_not(tokenizer, documents):
    one = documents[:1]
    with pytest.raises(ValueError, match='"nsp".*2 documents'):
        create_pretraining_instances(one, tokenizer, config(objective="nsp"))
    for objective in ("sop", "mlm"):
        assert create_pretraining_instances(one, tokenizer, config(objective=objective))


# ----------------------------------------------------------------------- truncation


def test_truncate_seq_pair_cuts_the_longer_segment_at_random_ends():
    rng = np.random.default_rng(0)
    cut_front = cut_back = 0
    for _ in range(500):
        length_a, length_b = (int(n) for n in rng.integers(1, 40, size=2))
        max_num_tokens = int(rng.integers(2, 60))
        tokens_a, tokens_b = list(range(length_a)), list(range(100, 100 + length_b))
        a, b = truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)
        assert tokens_a == list(range(length_a))  # inputs untouched
        # The lengths depend only on the rule "cut the longer one, B on a tie".
        expected_a, expected_b = length_a, length_b
        while expected_a + expected_b > max_num_tokens:
            if expected_a > expected_b:
                expected_a -= 1
            else:
                expected_b -= 1
        assert (len(a), len(b)) == (expected_a, expected_b)
        for kept, original in ((a, tokens_a), (b, tokens_b)):
            start = original.index(kept[0])
            assert kept == original[start : start + len(kept)]
            cut_front += start > 0
            cut_back += start + len(kept) < len(original)
    assert cut_front > 100 and cut_back > 100


def test_truncate_seq_pair_rejects_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="tokens_a and tokens_b"):
        truncate_seq_pair([], [1, 2], 5, rng)
    with pytest.raises(ValueError, match="max_num_tokens"):
        truncate_seq_pair([1], [2], 1, rng)


# ----------------------------------------------------------------------- masking


@pytest.fixture(scope="module")
def masked_instances(documents, tokenizer):
    return create_pretraining_instances(
        documents, tokenizer, config(max_seq_length=64, dupe_factor=20)
    )


def test_specials_are_never_chosen_and_random_tokens_are_never_special(masked_instances):
    for instance in masked_instances:
        masking = instance.masking
        for position, branch in zip(
            masking.masked_lm_positions, masking.masked_lm_branches, strict=True
        ):
            assert instance.token_ids[position] not in (CLS, SEP, PAD)
            if branch == "random":
                assert masking.input_ids[position] >= len(SPECIALS)
        unchosen = set(range(len(instance.token_ids))) - set(masking.masked_lm_positions)
        assert all(masking.input_ids[p] == instance.token_ids[p] for p in unchosen)


def test_number_of_targets_follows_googles_formula(masked_instances):
    for instance in masked_instances:
        expected = min(20, max(1, round(len(instance.token_ids) * 0.15)))
        masking = instance.masking
        assert len(masking.masked_lm_positions) == expected
        assert list(masking.masked_lm_positions) == sorted(set(masking.masked_lm_positions))
        assert masking.masked_lm_ids == tuple(
            instance.token_ids[p] for p in masking.masked_lm_positions
        )


def test_padding_is_neither_chosen_nor_counted():
    vocab = PretrainingVocab.from_tokenizer(TinyTokenizer([f"w{i}" for i in range(50)]))
    rng = np.random.default_rng(1)
    ids = [CLS, *range(5, 23), SEP] + [PAD] * 40
    for _ in range(200):
        masking = mask_tokens(ids, rng, vocab)
        assert len(masking.masked_lm_positions) == round(20 * 0.15)
        assert all(ids[p] not in (CLS, SEP, PAD) for p in masking.masked_lm_positions)


def test_branches_split_80_10_10_within_binomial_bounds(masked_instances):
    branches = [
        branch for instance in masked_instances for branch in instance.masking.masked_lm_branches
    ]
    assert set(branches) == set(BRANCHES)
    n = len(branches)
    low, high = binomial_interval(n, 0.8)
    assert low <= branches.count("[MASK]") <= high
    not_masked = n - branches.count("[MASK]")
    low, high = binomial_interval(not_masked, 0.5)
    assert low <= branches.count("kept") <= high


def test_every_eligible_position_is_equally_likely():
    vocab = PretrainingVocab.from_tokenizer(TinyTokenizer([f"w{i}" for i in range(50)]))
    ids = [CLS, *range(5, 17), SEP, *range(20, 33), SEP]  # 25 text tokens, 28 in all
    num_to_predict = round(28 * 0.15)
    rng = np.random.default_rng(2)
    trials = 3000
    counts = np.zeros(len(ids), dtype=int)
    for _ in range(trials):
        counts[list(mask_tokens(ids, rng, vocab).masked_lm_positions)] += 1
    text = [i for i, token in enumerate(ids) if token not in (CLS, SEP)]
    assert counts[[0, 13, 27]].sum() == 0
    # Bonferroni over the 25 positions keeps the family's false-alarm rate at 1e-6.
    low, high = binomial_interval(trials, num_to_predict / len(text), alpha=1e-6 / len(text))
    assert all(low <= counts[i] <= high for i in text), counts


def test_random_replacements_cover_the_vocabulary_but_no_special():
    tokenizer = TinyTokenizer([f"w{i}" for i in range(30)])
    vocab = PretrainingVocab.from_tokenizer(tokenizer)
    rng = np.random.default_rng(3)
    ids = [CLS, *range(5, 35), SEP]
    replacements = set()
    for _ in range(400):
        masking = mask_tokens(ids, rng, vocab, masked_lm_prob=0.5)
        replacements |= {
            masking.input_ids[p]
            for p, branch in zip(
                masking.masked_lm_positions, masking.masked_lm_branches, strict=True
            )
            if branch == "random"
        }
    assert replacements == set(range(5, 35))


def test_whole_word_masking_chooses_every_piece_of_a_word_together():
    words = [f"w{i}" for i in range(40)]
    pieces = {word: [word, "##x", "##y"] for word in words[::3]}
    tokenizer = TinyTokenizer(words, pieces)
    vocab = PretrainingVocab.from_tokenizer(tokenizer)
    sentence = " ".join(words)
    ids = [CLS, *tokenizer.convert_tokens_to_ids(tokenizer.tokenize(sentence)), SEP]
    word_of = []  # word index of each position, -1 for specials
    for token in tokenizer.convert_ids_to_tokens(ids):
        if token in SPECIALS:
            word_of.append(-1)
        else:
            word_of.append(word_of[-1] if token.startswith("##") else max(word_of + [-1]) + 1)
    rng = np.random.default_rng(4)
    partial_without_wwm = 0
    for _ in range(300):
        for whole in (True, False):
            chosen = set(
                mask_tokens(
                    ids, rng, vocab, do_whole_word_mask=whole, max_predictions_per_seq=30
                ).masked_lm_positions
            )
            words_hit = {word_of[p] for p in chosen}
            complete = all(
                {p for p, w in enumerate(word_of) if w == word} <= chosen for word in words_hit
            )
            if whole:
                assert complete
            else:
                partial_without_wwm += not complete
    assert partial_without_wwm > 100  # the check above is able to fail


def test_unk_is_never_a_target_and_whole_words_stop_at_sep():
    """Two departures from Google's code, which skips only [CLS] and [SEP] as candidates:
    [UNK] is never a target, and a segment that starts with a ``##`` piece does not join the
    last word before [SEP] (Google's candidate list would glue them into one word)."""
    tokenizer = TinyTokenizer(["a", "b"], {"bc": ["b", "##c"]})
    vocab = PretrainingVocab.from_tokenizer(tokenizer)
    a, b, c = tokenizer.convert_tokens_to_ids(["a", "b", "##c"])
    ids = [CLS, a, UNK, b, SEP, c, a, SEP]  # B starts with the cut-off word's ## piece
    rng = np.random.default_rng(0)
    chosen_alone = set()
    for _ in range(200):
        # One target (round(8 * 0.15)): a two-piece word "b ##c" would never fit.
        one = mask_tokens(ids, rng, vocab, do_whole_word_mask=True).masked_lm_positions
        chosen_alone.update(one)
        every = mask_tokens(ids, rng, vocab, do_whole_word_mask=True, masked_lm_prob=0.9)
        assert every.masked_lm_positions == (1, 3, 5, 6)
    assert chosen_alone == {1, 3, 5, 6}


def test_mask_tokens_rejects_bad_input():
    vocab = PretrainingVocab.from_tokenizer(TinyTokenizer(["a", "b"]))
    rng = np.random.default_rng(0)
    with pytest.raises(IndexError, match=r"token_ids\[2\] = 7"):
        mask_tokens([CLS, 5, 7, SEP], rng, vocab)
    with pytest.raises(TypeError, match="token_ids"):
        mask_tokens([CLS, 5.0, SEP], rng, vocab)
    for probability in (0.0, 1.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="masked_lm_prob"):
            mask_tokens([CLS, 5, SEP], rng, vocab, masked_lm_prob=probability)
    with pytest.raises(ValueError, match="max_predictions_per_seq"):
        mask_tokens([CLS, 5, SEP], rng, vocab, max_predictions_per_seq=0)
    with pytest.raises(TypeError, match="tokenizer must have"):
        mask_tokens([CLS, 5, SEP], rng, object())


# ----------------------------------------------------------------------- batches


def test_collate_puts_labels_exactly_at_the_targets(masked_instances):
    instances = masked_instances[:16]
    for max_seq_length in (64, None):
        batch = collate_instances(instances, PAD, max_seq_length=max_seq_length)
        longest = max(len(instance.token_ids) for instance in instances)
        assert batch.input_ids.shape == (16, max_seq_length or longest)
        for array in (
            batch.input_ids,
            batch.token_type_ids,
            batch.attention_mask,
            batch.labels,
            batch.next_sentence_label,
            batch.masked_lm_positions,
            batch.masked_lm_ids,
        ):
            assert array.dtype == np.int64
        assert batch.masked_lm_weights.dtype == np.float32
        assert batch.masked_lm_positions.shape == (16, 20)
        for b, instance in enumerate(instances):
            length = len(instance.token_ids)
            masking = instance.masking
            targets = np.zeros(batch.labels.shape[1], dtype=bool)
            targets[list(masking.masked_lm_positions)] = True
            assert np.array_equal(batch.labels[b] != IGNORE_INDEX, targets)
            assert np.array_equal(batch.labels[b, targets], masking.masked_lm_ids)
            assert np.array_equal(batch.attention_mask[b], np.arange(targets.size) < length)
            assert np.all(batch.input_ids[b, length:] == PAD)
            assert np.all(batch.token_type_ids[b, length:] == 0)
            assert np.array_equal(batch.input_ids[b, :length], masking.input_ids)
            count = len(masking.masked_lm_positions)
            assert np.array_equal(batch.masked_lm_positions[b, :count], masking.masked_lm_positions)
            assert np.array_equal(batch.masked_lm_weights[b], np.arange(20) < count)
            assert batch.next_sentence_label[b] == instance.next_sentence_label
        assert set(batch.model_inputs()) == {
            "input_ids",
            "token_type_ids",
            "attention_mask",
            "labels",
            "next_sentence_label",
        }


def test_collate_rejects_bad_input(masked_instances, documents, tokenizer):
    unmasked = create_pretraining_instances(
        documents, tokenizer, config(dynamic_masking=True, dupe_factor=1)
    )
    mlm = create_pretraining_instances(documents, tokenizer, config(objective="mlm"))
    with pytest.raises(ValueError, match="instances is empty"):
        collate_instances([], PAD)
    with pytest.raises(ValueError, match=r"instances\[0\] has no masking"):
        collate_instances(unmasked[:2], PAD)
    with pytest.raises(ValueError, match="max_seq_length=8"):
        collate_instances(masked_instances[:2], PAD, max_seq_length=8)
    with pytest.raises(ValueError, match="max_predictions_per_seq=2"):
        collate_instances(masked_instances[:2], PAD, max_predictions_per_seq=2)
    with pytest.raises(ValueError, match="mix"):
        collate_instances([masked_instances[0], mlm[0]], PAD)
    batch = collate_instances(mlm[:3], PAD)
    assert batch.next_sentence_label is None and "next_sentence_label" not in batch.model_inputs()


def collect(batches, count):
    return [next(batches) for _ in range(count)]


def assert_same_batches(first, second):
    assert len(first) == len(second)
    for one, two in zip(first, second, strict=True):
        for name in (
            "input_ids",
            "token_type_ids",
            "attention_mask",
            "labels",
            "next_sentence_label",
            "masked_lm_positions",
        ):
            assert np.array_equal(getattr(one, name), getattr(two, name)), name


@pytest.mark.parametrize("dynamic", [True, False])
def test_resumed_iterator_yields_exactly_the_same_tail(documents, tokenizer, dynamic):
    settings = config(dynamic_masking=dynamic, dupe_factor=1)
    instances = create_pretraining_instances(documents, tokenizer, settings)
    run = PretrainingBatches(instances, tokenizer, settings, batch_size=12)
    assert len(run) == math.ceil(len(instances) / 12)
    head = collect(run, len(run) + 2)  # into the second epoch
    state = json.loads(json.dumps(run.state_dict()))
    assert (state["epoch"], state["index"]) == (1, 2)
    tail = collect(run, len(run) + 3)  # and across the next epoch boundary

    resumed = PretrainingBatches(instances, tokenizer, settings, batch_size=12)
    resumed.load_state_dict(state)
    assert_same_batches(collect(resumed, len(tail)), tail)
    fresh = PretrainingBatches(instances, tokenizer, settings, batch_size=12)
    assert_same_batches(collect(fresh, len(head)), head)


def test_dynamic_masks_change_every_epoch_static_masks_do_not(documents, tokenizer):
    for dynamic in (True, False):
        settings = config(dynamic_masking=dynamic, dupe_factor=1)
        instances = create_pretraining_instances(documents, tokenizer, settings)
        batches = PretrainingBatches(
            instances, tokenizer, settings, batch_size=len(instances), shuffle=False
        )
        first, second = next(batches), next(batches)
        assert np.array_equal(first.attention_mask, second.attention_mask)
        assert np.array_equal(first.input_ids, second.input_ids) == (not dynamic)


def test_shuffling_changes_the_order_each_epoch(documents, tokenizer):
    settings = config(dupe_factor=1)
    instances = create_pretraining_instances(documents, tokenizer, settings)
    batches = PretrainingBatches(
        instances, tokenizer, settings, batch_size=len(instances), padding="longest"
    )
    first, second = next(batches), next(batches)
    assert first.input_ids.shape[1] == max(len(instance.token_ids) for instance in instances)
    assert not np.array_equal(first.input_ids, second.input_ids)
    assert sorted(map(tuple, first.input_ids)) == sorted(map(tuple, second.input_ids))


def test_iterator_rejects_bad_input_and_foreign_state(masked_instances, tokenizer):
    with pytest.raises(ValueError, match="instances is empty"):
        PretrainingBatches([], tokenizer)
    with pytest.raises(ValueError, match="batch_size"):
        PretrainingBatches(masked_instances, tokenizer, batch_size=0)
    with pytest.raises(ValueError, match="padding"):
        PretrainingBatches(masked_instances, tokenizer, padding="left")
    with pytest.raises(ValueError, match="drop_last"):
        PretrainingBatches(masked_instances[:3], tokenizer, batch_size=4, drop_last=True)
    batches = PretrainingBatches(masked_instances, tokenizer, config(max_seq_length=64))
    state = batches.state_dict()
    with pytest.raises(ValueError, match="num_instances"):
        PretrainingBatches(masked_instances[:-1], tokenizer).load_state_dict(state)
    with pytest.raises(ValueError, match="batch_size"):
        PretrainingBatches(masked_instances, tokenizer, batch_size=8).load_state_dict(state)
    with pytest.raises(ValueError, match="keys"):
        batches.load_state_dict({"epoch": 1})
    with pytest.raises(ValueError, match="index"):
        batches.load_state_dict({**state, "index": 10**6})


# ----------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    "changes, error, match",
    [
        ({"masked_lm_prob": 0.0}, ValueError, "masked_lm_prob"),
        ({"masked_lm_prob": 1.0}, ValueError, "masked_lm_prob"),
        ({"masked_lm_prob": -0.2}, ValueError, "masked_lm_prob"),
        ({"masked_lm_prob": "0.15"}, TypeError, "masked_lm_prob"),
        ({"max_seq_length": 4}, ValueError, r"\[CLS\] A \[SEP\] B \[SEP\].*>= 5"),
        ({"max_seq_length": 4, "objective": "sop"}, ValueError, ">= 5"),
        ({"max_seq_length": 2, "objective": "mlm"}, ValueError, ">= 3"),
        ({"max_seq_length": 128.0}, TypeError, "max_seq_length"),
        ({"objective": "itc"}, ValueError, r"objective must be one of \('nsp', 'sop', 'mlm'\)"),
        ({"max_predictions_per_seq": 0}, ValueError, "max_predictions_per_seq"),
        ({"short_seq_prob": 1.5}, ValueError, "short_seq_prob"),
        ({"dupe_factor": 0}, ValueError, "dupe_factor"),
        ({"dupe_factor": True}, TypeError, "dupe_factor"),
        ({"random_seed": -1}, ValueError, "random_seed"),
        ({"do_whole_word_mask": 1}, TypeError, "do_whole_word_mask"),
        ({"balance_next_sentence": "yes"}, TypeError, "balance_next_sentence"),
    ],
)
def test_config_rejects_bad_values(changes, error, match):
    with pytest.raises(error, match=match):
        PretrainingDataConfig(**changes)


def test_config_defaults_are_googles():
    defaults = PretrainingDataConfig()
    assert (
        defaults.max_seq_length,
        defaults.masked_lm_prob,
        defaults.max_predictions_per_seq,
        defaults.short_seq_prob,
        defaults.dupe_factor,
        defaults.random_seed,
        defaults.do_whole_word_mask,
    ) == (128, 0.15, 20, 0.1, 10, 12345, False)
    assert PretrainingDataConfig(objective="mlm", max_seq_length=3).max_seq_length == 3


def test_empty_corpora_are_rejected(tokenizer):
    with pytest.raises(ValueError, match="documents must be a non-empty list"):
        create_pretraining_instances([], tokenizer)
    with pytest.raises(ValueError, match="no tokens"):
        create_pretraining_instances([["   "], [""]], tokenizer)
    with pytest.raises(TypeError, match=r"documents\[0\]"):
        create_pretraining_instances(["a whole document as one string"], tokenizer)
    with pytest.raises(ValueError, match=r"token_documents\[1\]"):
        create_instances_from_ids([[[5, 6]], [[]]], tokenizer)
    with pytest.raises(TypeError, match="config"):
        create_instances_from_ids([[[5, 6]], [[7]]], tokenizer, {"objective": "nsp"})


# ----------------------------------------------------------------------- explain


def test_explain_shows_every_branch_and_needs_masks(masked_instances, tokenizer):
    instance = next(i for i in masked_instances if len(set(i.masking.masked_lm_branches)) == 3)
    rows = explain_rows(instance, tokenizer)
    assert [row["position"] for row in rows] == list(range(len(instance.token_ids)))
    for row in rows:
        if row["branch"] == "[MASK]":
            assert row["input"] == "[MASK]" and row["target"] == row["token"]
        elif row["branch"] == "kept":
            assert row["input"] == row["token"] == row["target"]
        elif row["branch"] == "random":
            assert row["input"] != "[MASK]" and row["target"] == row["token"]
        else:
            assert row["input"] == row["token"] and row["target"] == ""
    text = explain_instance(instance, tokenizer)
    assert text.splitlines()[0].startswith("next_sentence_label = ")
    assert text.splitlines()[1].split() == [
        "position",
        "segment",
        "token",
        "input",
        "target",
        "branch",
    ]
    assert len(text.splitlines()) == len(rows) + 3
    bare = PretrainingInstance(instance.token_ids, instance.token_type_ids, 0, 0, 0)
    with pytest.raises(ValueError, match="no masking"):
        explain_rows(bare, tokenizer)


# ----------------------------------------------------------------------- real tokenizer


@pytest.fixture(scope="module")
def toy():
    from minibert.tokenization import BertTokenizer

    corpus = ToyCorpus.generate(num_documents=300, num_heldout_documents=0, seed=1)
    return corpus, BertTokenizer.train(corpus.sentences(), vocab_size=1500)


@pytest.mark.parametrize("objective", ["nsp", "sop", "mlm"])
def test_toy_corpus_with_bert_tokenizer_end_to_end(toy, objective):
    corpus, tokenizer = toy
    settings = PretrainingDataConfig(
        objective=objective,
        dupe_factor=2,
        dynamic_masking=True,
        do_whole_word_mask=objective == "sop",
    )
    instances = create_pretraining_instances(corpus.train, tokenizer, settings)
    assert len(instances) > 300
    batches = PretrainingBatches(instances, tokenizer, settings, batch_size=16)
    for batch in collect(batches, 5):
        assert batch.input_ids.shape == (16, 128)
        targets = batch.labels != IGNORE_INDEX
        # Exactly the formula's number of targets per row, never a special token.
        lengths = batch.attention_mask.sum(axis=1)
        expected = np.minimum(20, np.maximum(1, np.round(lengths * 0.15)))
        if objective != "sop":  # whole words may leave a row a piece short
            assert np.array_equal(targets.sum(axis=1), expected)
        assert not np.isin(batch.labels[targets], tokenizer.all_special_ids).any()
        cls_column = batch.input_ids[:, 0]
        assert np.all(cls_column == tokenizer.cls_token_id)
    table = explain_instance(
        instances[0],
        tokenizer,
        mask_tokens(instances[0].token_ids, np.random.default_rng(0), tokenizer),
    )
    assert "[CLS]" in table and "[SEP]" in table


def test_tokenize_documents_traces_sentences(toy):
    corpus, tokenizer = toy
    token_documents = tokenize_documents(corpus.train[:5], tokenizer)
    for document, token_document in zip(corpus.train[:5], token_documents, strict=True):
        assert len(document) == len(token_document)
        for sentence, ids in zip(document, token_document, strict=True):
            assert ids == tokenizer.convert_tokens_to_ids(tokenizer.tokenize(sentence))
