"""Everyday facts: well formed, apart from the room sentences, in every everyday document."""

import re

import numpy as np
import pytest

from minibert.data import ToyCorpus
from minibert.data.corpus import ALL_FACTS, _fill, _generate_document
from minibert.data.everyday import EVERYDAY_SCENES, SCENE_TABLE
from minibert.data.facts import FACTS, Fact, parse_facts
from minibert.data.room import ROOM_SETS, is_room_sentence


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


def _grams(text: str, n: int = 4) -> set:
    """Runs of ``n`` words, the gap written X and any other slot S."""
    text = re.sub(r"\[MASK\]|\{x\}", " X ", text)
    text = re.sub(r"\{\w+\}", " S ", text).lower()
    words = re.findall(r"[a-z0-9']+", text)
    words = ["X" if w == "x" else w for w in words]
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def test_no_frame_shares_four_words_in_a_row_with_a_room_sentence():
    room = set().union(*(_grams(r.text) for rooms in ROOM_SETS.values() for r in rooms))
    close = [frame for fact in ALL_FACTS for frame in fact.frames if _grams(frame) & room]
    assert not close, close


def test_an_everyday_document_says_facts_of_its_own_scene():
    rng = np.random.default_rng(3)
    fact_sentences = {frame.replace("{x}", word).split("{")[0]
                      for fact in FACTS["weather"] for frame in fact.frames
                      for word in fact.words}
    found = 0
    for _ in range(20):
        document = _generate_document(SCENE_TABLE["weather"], rng, cycles={},
                                      facts=FACTS["weather"])
        found += any(s.startswith(start) for start in fact_sentences if start
                     for s in document)
    assert found >= 18


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
