"""Unknown words are said, never hidden: the report, fill-mask, attention and explore."""

from __future__ import annotations

import pytest

import minibert as mb
from minibert.cli import main
from minibert.fill_mask import fill_mask
from minibert.tokenization import BertTokenizer, lowercase_mask, unknown_words
from minibert.viz.explorer import explore

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat",
         "sleep", "##ing", ".", "a", "##b"]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return BertTokenizer(str(path))


@pytest.fixture(scope="module")
def toy():
    return mb.load_reference("tiny-toy")


def test_a_known_text_reports_nothing(tokenizer):
    report = unknown_words(tokenizer, "The cat sat on the [MASK].")
    assert not report and report.line() == ""


@pytest.mark.parametrize("text, kind, word, pieces", [
    ("the cat sleeping", "pieces", "sleeping", ("sleep", "##ing")),
    ("the dog sat", "unknown", "dog", ("[UNK]",)),
    ("the cat sat?", "character", "?", ("[UNK]",)),
    ("the cat sat 7", "character", "7", ("[UNK]",)),
    ("the cat \U0001F642", "character", "\U0001F642", ("[UNK]",)),
    ("the \u05e9\u05dc\u05d5\u05dd cat", "unknown", "\u05e9\u05dc\u05d5\u05dd", ("[UNK]",)),
])
def test_each_kind_of_unknown_is_named_with_what_it_became(tokenizer, text, kind, word, pieces):
    report = unknown_words(tokenizer, text)
    assert [(w.kind, w.text, w.pieces) for w in report.words] == [(kind, word, pieces)]
    assert word in report.line() and "\n" not in report.line()


def test_words_come_once_as_written_and_control_characters_are_named(tokenizer):
    report = unknown_words(tokenizer, "Dog dog the\x07 cat")
    assert [w.text for w in report.words] == ["Dog"]
    assert report.removed == ("\x07",) and "U+0007" in report.line()


def test_a_long_text_gives_one_short_line(tokenizer):
    report = unknown_words(tokenizer, " ".join(f"word{i}" for i in range(10_000)))
    line = report.line()
    assert len(report.words) == 10_000 and "\n" not in line and len(line) < 600
    assert "and 9,988 more" in line


def test_lowercase_mask_is_found(tokenizer):
    assert lowercase_mask(tokenizer, "the [mask] sat") == "[mask]"
    assert lowercase_mask(tokenizer, "the [MASK] sat") is None


def test_fill_mask_carries_the_unknown_words_and_refuses_a_lowercase_mask(toy):
    model, tokenizer = toy
    answers = fill_mask(model, tokenizer, "the xqzvw sat on the [MASK] \U0001F642", top_k=2)
    assert len(answers) == 2 and "xqzvw" in answers.unknown_line
    assert "\U0001F642" in answers.unknown_line
    with pytest.raises(ValueError, match=r"\[mask\].*\[MASK\]"):
        fill_mask(model, tokenizer, "the [mask] sat")


def test_explore_marks_the_unknown_tokens(toy, tmp_path):
    model, tokenizer = toy
    page = explore(model, tokenizer, "the xqzvw sat by the river [MASK].", backward="none")
    tokens, marked = page.data["tokens"], page.data["unknown"]
    assert len(marked) == len(tokens) and any(marked)
    assert not marked[tokens.index("river")]
    assert "xqzvw" in page.data["unknown_line"]
    saved = page.save(tmp_path / "page.html").read_text(encoding="utf-8")
    assert "mbx-unknown" in saved and "xqzvw" in saved


@pytest.mark.parametrize("command", ["fill-mask", "attention", "explore"])
def test_cli_names_unknown_words_in_one_line_before_its_answers(command, tmp_path, capsys):
    out = tmp_path / ("a.png" if command == "attention" else "a.html")
    args = [command, "the xqzvw sat by the river [MASK] \U0001F642", "--model", "tiny-toy"]
    args += [] if command == "fill-mask" else ["-o", str(out)]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("note: ") and "xqzvw" in lines[0] and "\U0001F642" in lines[0]
    assert sum(line.startswith("note: ") for line in lines) == 1


@pytest.mark.parametrize("command", ["fill-mask", "attention", "explore"])
@pytest.mark.parametrize("text, expected", [
    ("", "empty"),
    ("the [mask] sat", "[mask]"),
    (" ".join(["word"] * 10_000) + " [MASK]", "tokens long"),
    ("\x07\x00\x1b", "no word"),
])
def test_cli_refuses_bad_input_in_one_line_and_writes_nothing(command, text, expected, tmp_path,
                                                             capsys):
    out = tmp_path / ("a.png" if command == "attention" else "a.html")
    args = [command, text, "--model", "tiny-toy"]
    args += [] if command == "fill-mask" else ["-o", str(out)]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert expected in captured.err and len(captured.err.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_goes_on_with_a_sentence_of_only_unknown_words_and_says_so(capsys):
    assert main(["fill-mask", "xqzvw qqjjq [MASK]", "--model", "tiny-toy", "--top-k", "1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("note: ") and "xqzvw" in first and "qqjjq" in first
