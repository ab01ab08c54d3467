"""WordPieceTrainer and BertTokenizer.train: the likelihood-scored merges and the vocabulary.

The training text comes from a seeded generator in this file: made-up words built from
syllables (some with accents), capitalized sentences, commas, contractions, numbers.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections import Counter

import numpy as np
import pytest

from minibert.tokenization import BertTokenizer
from minibert.tokenization.trainer import Merge, WordPieceTrainer

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ONSETS = ["", "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
          "st", "tr", "pl", "ch", "sh", "th", "qu", "x", "z", "j", "y"]  # fmt: skip
VOWELS = ["a", "e", "i", "o", "u", "ea", "ou", "ai", "é", "ü", "ñ"]
CODAS = ["", "", "n", "r", "s", "t", "l", "nd", "ng", "st"]
ENDINGS = [".", ".", ".", "!", "?"]


def make_lexicon(rng: np.random.Generator, size: int) -> list[str]:
    words = set()
    while len(words) < size:
        syllables = int(rng.integers(1, 4))
        words.add("".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
                          for _ in range(syllables)))  # fmt: skip
    return sorted(words)


def make_sentences(rng: np.random.Generator, count: int, lexicon: list[str]) -> list[str]:
    """Sentences of Zipf-distributed words with capitals, commas, contractions and numbers."""
    probabilities = 1.0 / np.arange(1, len(lexicon) + 1)
    probabilities /= probabilities.sum()
    sentences = []
    for _ in range(count):
        words = [lexicon[i] for i in rng.choice(len(lexicon), int(rng.integers(3, 12)),
                                                p=probabilities)]  # fmt: skip
        if rng.random() < 0.3:
            words[int(rng.integers(len(words)))] += ","
        if rng.random() < 0.2:
            words[int(rng.integers(len(words)))] += "n't"
        if rng.random() < 0.2:
            words.insert(int(rng.integers(len(words))), str(rng.integers(0, 1000)))
        if rng.random() < 0.1:
            words[-1] = words[-1].upper()
        sentence = " ".join(words)
        sentences.append(sentence[0].upper() + sentence[1:] + str(rng.choice(ENDINGS)))
    return sentences


@pytest.fixture(scope="module")
def lexicon():
    return make_lexicon(np.random.default_rng(0), 3000)


@pytest.fixture(scope="module")
def corpus(lexicon):
    return make_sentences(np.random.default_rng(1), 3000, lexicon)


def expected_decoding(text: str) -> str:
    """What decode(encode(text)) must give, written from the rules, not from the tokenizer."""
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(char for char in text if unicodedata.category(char) != "Mn")
    text = re.sub(r"([!-/:-@\[-`{-~])", r" \1 ", text)  # ASCII punctuation stands alone
    text = " ".join(text.split())
    for spaced, joined in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"),
                           (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"),
                           (" 're", "'re")]:  # fmt: skip
        text = text.replace(spaced, joined)
    return text


def naive_wordpiece_training(word_counts, vocab_size, specials, min_frequency):
    """Recount every piece and pair from scratch before each merge: slow and obviously right."""
    spellings = {word: [word[0]] + ["##" + char for char in word[1:]] for word in word_counts}
    characters = sorted({char for word in word_counts for char in word})
    vocab = list(specials) + characters + ["##" + char for char in characters]
    merges = []
    while len(vocab) < vocab_size:
        pieces, pairs = Counter(), Counter()
        for word, count in word_counts.items():
            spelling = spellings[word]
            for piece in spelling:
                pieces[piece] += count
            for pair in zip(spelling[:-1], spelling[1:], strict=True):
                pairs[pair] += count
        candidates = [
            (-count / (pieces[a] * pieces[b]), -count, a, b)
            for (a, b), count in pairs.items()
            if count >= min_frequency
        ]
        if not candidates:
            break
        negative_score, negative_count, left, right = min(candidates)
        merged = left + right[2:]
        merges.append(Merge(left, right, merged, -negative_score, -negative_count))
        if merged not in vocab:
            vocab.append(merged)
        for word, spelling in spellings.items():
            joined, position = [], 0
            while position < len(spelling):
                if spelling[position : position + 2] == [left, right]:
                    joined.append(merged)
                    position += 2
                else:
                    joined.append(spelling[position])
                    position += 1
            spellings[word] = joined
    return vocab, merges


# ----------------------------------------------------------------- the algorithm
def test_first_merges_on_the_hf_course_corpus():
    # hug x10, pug x5, pun x12, bun x4, hugs x5 (the HuggingFace course's example).
    texts = ["hug"] * 10 + ["pug"] * 5 + ["pun"] * 12 + ["bun"] * 4 + ["hugs"] * 5
    trainer = WordPieceTrainer(vocab_size=5 + 14 + 2, min_frequency=1)
    vocab = trainer.train(texts)
    # BPE would merge the most frequent pair (##u, ##g), seen 20 times; WordPiece prefers
    # (##g, ##s): 5 / (20 * 5) = 0.05 beats 20 / (36 * 20) = 0.028.
    assert trainer.merges[0] == Merge("##g", "##s", "##gs", 5 / (20 * 5), 5)
    # Then six pairs tie at exactly 1/36; the most frequent, (p, ##u) seen 17 times, wins.
    assert trainer.merges[1] == Merge("p", "##u", "pu", 1 / 36, 17)
    assert vocab[:5] == SPECIALS
    assert vocab[5:19] == ["b", "g", "h", "n", "p", "s", "u",
                           "##b", "##g", "##h", "##n", "##p", "##s", "##u"]  # fmt: skip
    assert vocab[19:] == ["##gs", "pu"]
    assert trainer.word_counts == {"bun": 4, "hug": 10, "hugs": 5, "pug": 5, "pun": 12}


def test_equal_scores_and_counts_fall_back_to_alphabetical_order():
    trainer = WordPieceTrainer(vocab_size=5 + 8 + 1, min_frequency=1)
    trainer.train(["cd ab"] * 3)
    assert trainer.merges == [Merge("a", "##b", "ab", 1 / 3, 3)]


def test_matches_naive_training_merge_for_merge(corpus):
    trainer = WordPieceTrainer(vocab_size=300, min_frequency=2)
    vocab = trainer.train(corpus[:200])
    expected_vocab, expected_merges = naive_wordpiece_training(
        trainer.word_counts, 300, SPECIALS, 2
    )
    assert trainer.merges == expected_merges
    assert vocab == expected_vocab
    assert len(vocab) == 300


def test_back_to_back_and_repeated_pieces_merge_like_the_naive_version():
    texts = ["aaaa abab ababab aaaaaaa baba aab"] * 3 + ["abba aaa"]
    trainer = WordPieceTrainer(vocab_size=60, min_frequency=1)
    vocab = trainer.train(texts)
    assert (vocab, trainer.merges) == naive_wordpiece_training(trainer.word_counts, 60, SPECIALS, 1)


def test_min_frequency_and_early_stop():
    trainer = WordPieceTrainer(vocab_size=1000, min_frequency=3)
    vocab = trainer.train(["abc abc abc abd abd xyz"])
    assert all(merge.count >= 3 for merge in trainer.merges)
    assert len(vocab) < 1000  # no pair left that occurs three times
    assert "abc" in vocab and "abd" not in vocab


def test_deterministic_and_independent_of_text_order(corpus):
    first = WordPieceTrainer(vocab_size=500)
    first.train(corpus)
    shuffled = list(corpus)
    np.random.default_rng(5).shuffle(shuffled)
    second = WordPieceTrainer(vocab_size=500)
    second.train(shuffled)
    assert first.vocab == second.vocab and first.merges == second.merges


def test_special_tokens_first_and_alphabet_complete(corpus):
    trainer = WordPieceTrainer(vocab_size=300)
    vocab = trainer.train(corpus)
    assert vocab[:5] == SPECIALS
    characters = {char for word in trainer.word_counts for char in word}
    for char in characters:
        assert char in vocab and "##" + char in vocab
    assert len(vocab) == len(set(vocab)) == 300


def test_literal_special_tokens_in_text_are_not_counted():
    trainer = WordPieceTrainer(vocab_size=100)
    trainer.train(["the [MASK] sat", "[CLS] a cat [SEP]"])
    assert set(trainer.word_counts) == {"the", "sat", "a", "cat"}


def test_texts_are_normalized_like_the_tokenizer():
    trainer = WordPieceTrainer(vocab_size=100)
    trainer.train(["Café, CAFÉ! naïve"])
    assert trainer.word_counts == {"!": 1, ",": 1, "cafe": 2, "naive": 1}
    cased = WordPieceTrainer(vocab_size=100, do_lower_case=False)
    cased.train(["Café, CAFÉ!"])
    assert cased.word_counts == {"!": 1, ",": 1, "CAFÉ": 1, "Café": 1}


# ----------------------------------------------------------------- BertTokenizer.train
def test_trained_tokenizer_round_trips_unseen_sentences(corpus, lexicon):
    tok = BertTokenizer.train(corpus, vocab_size=1500)
    assert tok.vocab_size == 1500
    assert [tok.pad_token_id, tok.unk_token_id, tok.cls_token_id] == [0, 1, 2]
    assert [tok.sep_token_id, tok.mask_token_id] == [3, 4]
    unseen = make_sentences(np.random.default_rng(99), 300, lexicon)
    for text in unseen:
        token_ids = tok.encode(text)
        assert tok.unk_token_id not in token_ids, text
        assert tok.decode(token_ids, skip_special_tokens=True) == expected_decoding(text), text


def test_min_frequency_trades_rare_merges_for_whole_frequent_words(corpus):
    # The score count(ab) / (count(a) count(b)) favours pairs of rare pieces: with the
    # default min_frequency=2 the vocabulary fills up with rare words' pieces (numbers
    # first), and frequent words made of frequent letters stay split. A higher threshold
    # keeps the rare pairs out.
    counts = WordPieceTrainer().count_words(corpus)
    most_common = [word for word, _ in Counter(counts).most_common(20)]

    def whole_and_pieces_per_word(tok):
        whole = sum(tok.tokenize(word) == [word] for word in most_common)
        pieces = sum(len(tok.tokenize(word)) * count for word, count in counts.items())
        return whole, pieces / sum(counts.values())

    default_whole, default_pieces = whole_and_pieces_per_word(
        BertTokenizer.train(corpus, vocab_size=2000)
    )
    strict_whole, strict_pieces = whole_and_pieces_per_word(
        BertTokenizer.train(corpus, vocab_size=2000, min_frequency=10)
    )
    assert strict_whole >= 18 and strict_pieces < 2.0
    assert default_whole < strict_whole and default_pieces > strict_pieces


def test_trained_tokenizer_saves_and_reloads(corpus, tmp_path):
    tok = BertTokenizer.train(corpus[:500], vocab_size=400)
    reloaded = BertTokenizer(tok.save_vocabulary(tmp_path))
    assert reloaded.vocab == tok.vocab
    assert reloaded(corpus[500:520], padding=True) == tok(corpus[500:520], padding=True)


def test_additional_special_tokens():
    specials = SPECIALS + ["[BOS]"]
    tok = BertTokenizer.train(["hello world [BOS] hello"] * 3, vocab_size=40,
                              special_tokens=specials)  # fmt: skip
    assert tok.vocab["[BOS]"] == 5
    assert tok.additional_special_tokens == ["[BOS]"]
    assert tok.tokenize("hello[BOS]") == ["hello", "[BOS]"]
    assert tok.decode(tok.encode("hello [BOS]"), skip_special_tokens=True) == "hello"


@pytest.mark.slow
def test_training_on_200k_words_takes_seconds(lexicon):
    texts = make_sentences(np.random.default_rng(2), 27_000, lexicon)
    assert sum(len(text.split()) for text in texts) > 190_000
    start = time.perf_counter()
    trainer = WordPieceTrainer(vocab_size=4000)
    trainer.train(texts)
    seconds = time.perf_counter() - start
    assert len(trainer.vocab) == 4000
    assert seconds < 30, f"training took {seconds:.1f} s"


# ----------------------------------------------------------------- bad input
def test_vocab_size_smaller_than_alphabet_and_specials():
    with pytest.raises(ValueError, match=r"vocab_size=10 is too small.*need 11"):
        WordPieceTrainer(vocab_size=10).train(["abc"])  # 5 specials + a b c ##a ##b ##c
    with pytest.raises(ValueError, match="vocab_size=10"):
        BertTokenizer.train(["abc"], vocab_size=10)


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"vocab_size": 0}, ValueError, "vocab_size must be >= 1, got 0"),
        ({"vocab_size": "100"}, TypeError, "vocab_size must be an int"),
        ({"vocab_size": 100.0}, TypeError, "vocab_size must be an int"),
        ({"min_frequency": 0}, ValueError, "min_frequency must be >= 1"),
        ({"max_input_chars_per_word": 0}, ValueError, "max_input_chars_per_word"),
        ({"special_tokens": "[PAD]"}, TypeError, "special_tokens must be a sequence"),
        ({"special_tokens": ["[PAD]", "[PAD]"]}, ValueError, "must be distinct"),
        ({"special_tokens": ["[P AD]"]}, ValueError, "without whitespace"),
        ({"special_tokens": [""]}, ValueError, "non-empty"),
    ],
)
def test_bad_trainer_options(options, error, message):
    with pytest.raises(error, match=message):
        WordPieceTrainer(**options)


def test_bad_texts():
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str, got int"):
        WordPieceTrainer().train(["ok", 5])
    with pytest.raises(TypeError, match="texts must be an iterable of str"):
        WordPieceTrainer().train("just one string")


def test_tokenizer_needs_the_bert_special_tokens():
    with pytest.raises(ValueError, match=r"lacks the special tokens \['\[MASK\]'\]"):
        BertTokenizer.train(["hello world"] * 3, vocab_size=30,
                            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])  # fmt: skip
