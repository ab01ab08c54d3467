"""The room sentences: well formed, and never in the training corpus."""

import pytest

import minibert as mb
from minibert.data import ToyCorpus
from minibert.data.room import ROOM_SENTENCES, is_room_sentence
from minibert.tokenization import unknown_words


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


def test_the_room_benchmark_scores_a_model_and_names_its_unknown_words(tmp_path, capsys):
    import importlib.util
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "room_sentences.py"
    spec = importlib.util.spec_from_file_location("room_sentences", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "room.json"
    assert bench.main(["--model", "tiny-toy", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    rows, score = result["rows"], result["score"]
    assert len(rows) == len(ROOM_SENTENCES) and score["sentences"] == len(rows)
    assert score["sensible"] == sum(row["sensible"] for row in rows)
    assert all(len(row["top"]) == 3 for row in rows)
    for row, room in zip(rows, ROOM_SENTENCES):
        assert row["sensible"] == any(word in room.sensible for word in row["top"])
    _, tokenizer = mb.load_reference("tiny-toy")
    assert [row["unknown"] for row in rows] == [unknown_words(tokenizer, room.text).line()
                                                for room in ROOM_SENTENCES]
    printed = capsys.readouterr().out
    assert f"{score['sensible']}/{score['sentences']} sentences" in printed
    assert bench.main(["--model", str(tmp_path / "nothing")]) == 2
