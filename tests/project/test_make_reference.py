"""docs/make_reference.py, which installs a pretrain folder as tiny-toy: it refuses a folder
that is not a finished run before writing anything, installs whole or not at all, records
its answers, and writes the lecture checklist from the model's own answers."""

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

import minibert as mb

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("make_reference",
                                                  ROOT / "docs" / "make_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def shipped(tool, tmp_path, monkeypatch):
    """A copy of the shipped reference as the folder the tool replaces, and a run made of
    its files (a finished pretrain folder)."""
    root = tmp_path / "references"
    shutil.copytree(mb.reference_path("tiny-toy"), root / "tiny-toy")
    monkeypatch.setattr(tool, "REFERENCE_ROOT", root)
    run = tmp_path / "run"
    run.mkdir()
    for name in tool.KEPT_FILES:
        shutil.copy2(root / "tiny-toy" / name, run / name)
    return root / "tiny-toy", run


def test_a_folder_that_is_not_a_finished_run_is_refused_before_anything_is_written(
        tool, shipped, capsys):
    destination, run = shipped
    before = sorted(path.name for path in destination.iterdir())
    (run / "history.json").unlink()
    assert tool.main([str(run), "--skip", "docs", "--skip", "figures", "--skip", "notebooks",
                      "--skip", "site"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "lacks history.json" in error, error
    (run / "checkpoint").mkdir()
    shutil.copy2(destination / "history.json", run / "history.json")
    with pytest.raises(tool.StepError, match="checkpoint/: the run has not finished"):
        tool.check_run(run)
    assert sorted(path.name for path in destination.iterdir()) == before
    assert sorted(path.name for path in destination.parent.iterdir()) == ["tiny-toy"]


@pytest.mark.slow
def test_install_records_the_answers_and_swaps_the_folder_whole(tool, shipped, monkeypatch):
    destination, run = shipped
    checked = tool.check_run(run)
    facts = tool.install(run, checked, float16=False, corpus_command=tool.CORPUS_COMMAND)
    files = {path.name for path in destination.iterdir()}
    assert set(tool.KEPT_FILES) | set(tool.RECORDS) <= files
    assert facts["size"] <= mb.reference.MAX_REFERENCE_BYTES
    assert sorted(path.name for path in destination.parent.iterdir()) == ["tiny-toy"]
    room = json.loads((destination / "room_sentences.json").read_text())
    assert set(room) == set(tool.ROOM_SETS)
    checklist = json.loads((destination / "checklist.json").read_text())
    assert len(checklist) == len(tool.LECTURE_SENTENCES) + sum(map(len, tool.ROOM_SETS.values()))
    # A step that fails after staging leaves the installed folder as it was, and no stage.
    kept = (destination / "checklist.json").read_bytes()

    def broken(*args, **kwargs):
        raise RuntimeError("the probes failed")

    monkeypatch.setattr(tool, "probe_results", broken)
    with pytest.raises(RuntimeError, match="the probes failed"):
        tool.install(run, checked, float16=False, corpus_command=tool.CORPUS_COMMAND)
    assert (destination / "checklist.json").read_bytes() == kept
    assert sorted(path.name for path in destination.parent.iterdir()) == ["tiny-toy"]


def test_the_checklist_says_what_the_model_answered(tool):
    def row(text, first, score, top, unknown="", source="room a"):
        return {"text": text, "source": source, "sensible": ["dog"], "first": first,
                "score": score, "top": top, "unknown": unknown}

    rows = [row("The [MASK] barked.", "dog", 0.95, ["dog", "cat", "fox"]),
            row("A [MASK] barked.", "cat", 0.5, ["cat", "dog", "fox"], source="lecture"),
            row("The [MASK] woofed.", "cow", 0.4, ["cow", "pig", "hen"],
                unknown='not in the vocabulary as whole words: "woofed" (pieces woof ##ed)'),
            row("My [MASK] barks.", "car", 0.6, ["car", "bus", "van"])]
    facts = {"checklist": rows, "config": {"vocab_size": 100}, "metrics": {},
             "room": {"a": {"score": {"sensible": 2, "sentences": 4}}}}
    text = tool.checklist_section(facts)
    assert '| "The [MASK] barked." | dog | works |' in text
    assert '| "A [MASK] barked." | cat | unsure |' in text
    assert '| "The [MASK] woofed." | cow | fails |' in text
    assert '"woofed" (pieces woof ##ed)' in " ".join(text.split())
    assert "knows every word and answers *car* 0.60" in " ".join(text.split())
