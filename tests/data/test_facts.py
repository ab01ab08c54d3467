"""Everyday facts: well formed, apart from the room sentences, in every everyday document."""

import re

import numpy as np
import pytest

from minibert.data import ToyCorpus
from minibert.data.corpus import ALL_FACTS, _fill
from minibert.data.everyday import EVERYDAY_SCENES, SCENE_TABLE
from minibert.data.facts import FACTS, Fact, parse_facts
from minibert.data.room import ROOM_SETS, is_room_sentence, word_runs


def test_every_scene_has_facts_and_every_fact_its_words_and_frames():
    assert tuple(FACTS) == EVERYDAY_SCENES
    for scene, facts in FACTS.items():
        assert len(facts) >= 5, scene
        for fact in facts:
            assert fact.words and fact.frames, fact
            assert all("{x}" in frame for frame in fact.frames), fact


def test_parse_facts_reads_blocks_and_refuses_a_frame_without_words_or_gap():
    text = "= tea coffee\nA cup of {x}.\n\n= bed\nThe cat sleeps on the {x}.\nOn the {x}.\n"
    assert parse_facts(text) == (Fact(("tea", "coffee"), ("A cup of {x}.",)),
                                 Fact(("bed",), ("The cat sleeps on the {x}.", "On the {x}.")))
    with pytest.raises(ValueError, match="before any '= words' line"):
        parse_facts("A cup of {x}.")
    with pytest.raises(ValueError, match="has no {x} gap"):
        parse_facts("= tea\nA cup of tea.")


@pytest.mark.parametrize("scene", EVERYDAY_SCENES)
def test_every_frame_of_every_word_fills_to_a_plain_sentence(scene):
    rng = np.random.default_rng(0)
    entities = {"name": "Anna", "friend": "Tom", "place": "Ashford", "org": "the shop",
                "role": "a cook", "he": "she", "He": "She", "him": "her", "his": "her"}
    topic = SCENE_TABLE[scene]
    for fact in FACTS[scene]:
        for frame in fact.frames:
            for word in fact.words:
                sentence = _fill(frame.replace("{x}", word), entities, topic, rng, cycles={})
                assert "{" not in sentence and "}" not in sentence, sentence
                assert word in sentence and sentence[0].isupper(), sentence


def test_no_frame_shares_four_words_in_a_row_with_room_sets_a_b_d_and_e():
    room = set().union(*(word_runs(r.text) for name in "abde" for r in ROOM_SETS[name]))
    close = [frame for fact in ALL_FACTS for frame in fact.frames if word_runs(frame) & room]
    assert not close, close


def test_word_runs_write_the_gap_and_the_slots_alike():
    assert word_runs("The [MASK] barked at the postman.", 4) == word_runs(
        "the {x} barked at the postman", 4)
    assert ("S", "is", "in", "the") in word_runs("{name} is in the {x}, making lunch.")


def test_every_everyday_document_says_facts_of_its_own_scene():
    corpus = ToyCorpus.generate(300, 0, seed=3, world="everyday")
    for document, scene in zip(corpus.train, corpus.train_topics):
        if scene not in FACTS:
            continue
        patterns = [_pattern(frame, fact.words) for fact in FACTS[scene]
                    for frame in fact.frames]
        assert any(p.fullmatch(s) for p in patterns for s in document), (scene, document)


def _pattern(frame: str, words: tuple[str, ...]) -> re.Pattern:
    """A frame as a regular expression: its gap one of ``words``, any other slot any text."""
    parts = re.split(r"(\{\w+\})", frame)
    text = "".join("(?:" + "|".join(map(re.escape, words)) + ")" if part == "{x}"
                   else ".+" if part.startswith("{") else re.escape(part) for part in parts)
    return re.compile(text, re.IGNORECASE)


def test_the_everyday_corpus_holds_no_room_sentence_of_any_set():
    corpus = ToyCorpus.generate(800, 50, seed=0, world="everyday")
    found = [s for s in corpus.sentences("train") + corpus.sentences("heldout")
             if is_room_sentence(s)]
    assert not found, found[:5]


@pytest.mark.parametrize("name", sorted(ROOM_SETS))
def test_each_room_set_has_forty_sentences_one_mask_each_and_is_held_out(name):
    rooms = ROOM_SETS[name]
    assert len(rooms) >= 40 and len({room.text for room in rooms}) == len(rooms)
    for room in rooms:
        assert room.text.count("[MASK]") == 1, room.text
        assert room.sensible and all(word == word.lower() for word in room.sensible), room
        assert is_room_sentence(room.text.replace("[MASK]", room.sensible[0]))
    assert all(room.text[-1] in ".?!" for room in rooms)
