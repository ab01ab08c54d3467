"""The room sentences: well formed, and never in the training corpus."""

import pytest

from minibert.data import ToyCorpus
from minibert.data.room import ROOM_SENTENCES, is_room_sentence


def test_at_least_forty_room_sentences_each_with_one_mask_and_answers():
    assert len(ROOM_SENTENCES) >= 40
    assert len({room.text for room in ROOM_SENTENCES}) == len(ROOM_SENTENCES)
    for room in ROOM_SENTENCES:
        assert room.text.count("[MASK]") == 1, room.text
        assert room.sensible and all(word == word.lower() for word in room.sensible), room


@pytest.mark.parametrize("sentence, expected", [
    ("The dog barked at the postman.", True),
    ("the  CAT barked at the postman.", True),
    ("The dog barked at the postman", False),
    ("A dog barked at the postman.", False),
    ("There are 7 days in a week.", True),
])
def test_is_room_sentence_matches_any_word_in_the_mask(sentence, expected):
    assert is_room_sentence(sentence) is expected


def test_the_training_corpus_never_holds_a_room_sentence():
    corpus = ToyCorpus.generate(seed=0)
    found = [s for s in corpus.sentences("train") + corpus.sentences("heldout")
             if is_room_sentence(s)]
    assert not found, found[:5]
