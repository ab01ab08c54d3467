"""The everyday toy world: sixteen scenes, room grammar, reproducible, and the common words.

The coverage test reads the 3,000 most frequent English words from ``wordfreq`` (the dev
extra; a test-time dependency only) and checks that at least 95% of them occur at least 20
times in the training text of the everyday corpus, and are whole tokens of a vocabulary
learned from it the way ``minibert pretrain`` learns one.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from minibert.data import ToyCorpus
from minibert.data.corpus import WORLDS
from minibert.data.everyday import EVERYDAY_SCENES, SCENE_TABLE
from minibert.data.words import WORD_SLOTS
from minibert.tokenization import BertTokenizer
from minibert.tokenization.basic import BasicTokenizer

# The documents the reference run generates (`python -m minibert.data.make_corpus --documents
# 20000`, or `--world everyday --num-documents 19000`, the same 95% for training), and pretrain's
# vocabulary size. 12,000 were enough before the facts took the place of part of the frames.
DOCUMENTS, VOCAB_SIZE = 20_000, 12_000
TOP_WORDS, MIN_COUNT, MIN_SHARE = 3000, 20, 0.95


@pytest.fixture(scope="module")
def small():
    return ToyCorpus.generate(600, 40, seed=5, world="everyday")


@pytest.fixture(scope="module")
def training_text():
    """The training documents of the reference run: the corpus file less pretrain's 5%."""
    from minibert.training.pretrain_data import split_documents

    corpus = ToyCorpus.generate(DOCUMENTS, 0, seed=0, world="everyday")
    train, _ = split_documents(corpus.train, seed=0)
    return [sentence for document in train for sentence in document]


def test_the_everyday_world_has_sixteen_scenes_beside_the_themes(small):
    assert WORLDS == ("themes", "everyday") and len(EVERYDAY_SCENES) == 16
    assert set(EVERYDAY_SCENES) <= set(small.train_topics)
    assert {"banking", "cricket", "football"} <= set(small.train_topics)


def test_the_everyday_world_is_reproducible_from_its_seed(small):
    again = ToyCorpus.generate(600, 40, seed=5, world="everyday")
    assert again.train == small.train and again.heldout == small.heldout
    other = ToyCorpus.generate(600, 40, seed=6, world="everyday")
    assert other.train != small.train


def test_the_default_world_is_still_the_themes():
    themes = ToyCorpus.generate(30, 3, seed=1)
    assert themes.train == ToyCorpus.generate(30, 3, seed=1, world="themes").train
    assert not set(themes.train_topics) & set(SCENE_TABLE)


def test_an_unknown_world_is_refused():
    with pytest.raises(ValueError, match="world must be one of"):
        ToyCorpus.generate(3, 1, world="moon")


def test_every_template_slot_has_words(small):
    text = " ".join(small.sentences())
    assert "{" not in text and "}" not in text


@pytest.mark.parametrize("pattern", [
    r"\bI\b", r"\b[Yy]ou\b", r"\b[Ww]e\b", r"\?", r"!", r",", r"\d", r"n't\b", r"'s\b",
    r"\w+ing\b", r"\bwill\b", r"\b(?:did not|didn't|don't|doesn't)\b", r"\w+'s \w+",
])
def test_the_grammar_a_room_uses_comes_up(small, pattern):
    assert len(re.findall(pattern, " ".join(small.sentences()))) >= 20, pattern


def test_two_slots_of_one_list_in_a_sentence_get_two_words():
    corpus = ToyCorpus.generate(300, 0, seed=2, world="everyday")
    said = [s for s in corpus.sentences() if s.startswith("The teacher asked us about the ")]
    assert said and any(len(set(re.findall(r"the (\w+)", s)[1:])) > 1 for s in said)


def _top_words():
    wordfreq = pytest.importorskip("wordfreq")
    return wordfreq.top_n_list("en", TOP_WORDS)


def _counts(sentences):
    basic = BasicTokenizer(do_lower_case=True)
    words = Counter(token for sentence in sentences for token in basic.tokenize(sentence))
    written = Counter(word.strip('.,!?";:') for sentence in sentences
                      for word in sentence.lower().split())
    return basic, words, written


@pytest.mark.slow
def test_the_common_english_words_each_come_up_twenty_times(training_text):
    top = _top_words()
    basic, words, written = _counts(training_text)
    # A word the basic tokenizer splits (don't, e.g) is counted as written.
    rare = [w for w in top if (words[w] if len(basic.tokenize(w)) == 1 else written[w]) < MIN_COUNT]
    assert len(rare) <= (1 - MIN_SHARE) * len(top), rare


@pytest.mark.slow
def test_the_common_english_words_are_whole_tokens_of_the_learned_vocabulary(training_text):
    top = _top_words()
    tokenizer = BertTokenizer.train(training_text, vocab_size=VOCAB_SIZE)
    split = [w for w in top
             if any(piece.startswith("##") or piece == "[UNK]" for piece in tokenizer.tokenize(w))]
    assert len(split) <= (1 - MIN_SHARE) * len(top), split


def test_the_word_lists_hold_no_word_twice():
    for slot, words in WORD_SLOTS.items():
        assert len(set(words)) == len(words), slot
