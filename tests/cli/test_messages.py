"""What the command line prints: one line for an error, never cut, wrapped at words on a
terminal; long arguments quoted as excerpts; Python warnings as one line without source;
out of memory as one line; a closed pipe ends quietly."""

import json
import shutil
import subprocess
import sys

from small_models import MASKED_TEXT, cli, refused

from minibert.cli import main
from minibert.reference import reference_path


def test_long_arguments_are_quoted_as_excerpts(model_dir, capsys):
    view = "sideways" * 500
    assert main(["attention", "--model", str(model_dir), "the bank", "--view", view]) == 2
    message = capsys.readouterr().err
    assert "--view must be one of" in message and "(4,000 characters)" in message
    assert len(message) < 300


def test_a_closed_pipe_ends_quietly():
    command = (f"{sys.executable} -m minibert fill-mask --model tiny-toy --json --top-k 3000 "
               f"'{MASKED_TEXT}' | head -1")
    result = subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                            timeout=180)
    assert result.stdout == "[\n" and result.stderr == "", result.stderr


def test_out_of_memory_is_one_line(monkeypatch, capsys):
    import minibert.cli.check as check_commands
    from minibert.cli import main

    def exhausted(args):
        raise MemoryError("Unable to allocate 3.2 GiB for an array with shape (800000000,)")

    monkeypatch.setattr(check_commands, "_run_info", exhausted)
    assert main(["info", "--model", "tiny-toy"]) == 2
    assert capsys.readouterr().err == (
        "minibert info: error: out of memory (unable to allocate 3.2 GiB for an array with "
        "shape (800000000,)); choose smaller sizes (--batch-size, --max-seq-length, "
        "--preset, ...)\n")


def test_a_long_message_is_never_cut_and_wraps_at_words_on_a_terminal(tmp_path):
    deep = tmp_path / ("a-folder-with-a-long-name-" * 4) / "cfg"
    shutil.copytree(reference_path("tiny-toy"), deep)
    config = json.loads((deep / "config.json").read_text())
    (deep / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 3,
                                                  "intermediate_size": 100}))
    result = cli("fill-mask", MASKED_TEXT, "--model", str(deep))
    refused(result)
    message = result.stderr.strip()
    assert len(message) > 300 and message.endswith("it does not describe these weights")

    from minibert.checks import wrap_for_terminal

    class Terminal:
        def isatty(self):
            return True

    lines = wrap_for_terminal(message, Terminal()).splitlines()
    assert len(lines) > 1 and " ".join(line.strip() for line in lines) == message


def test_python_warnings_are_one_line_without_source(tmp_path):
    corpus = tmp_path / "two.txt"
    corpus.write_text("One sentence here.\nAnother one.\n\nSecond document.\nAnd more.\n")
    result = cli("pretrain", "-o", str(tmp_path / "run"), "--corpus", str(corpus), "--steps",
                 "1", "--batch-size", "8", "--workers", "1", "--save-seconds", "0")
    assert result.returncode == 0, result.stderr
    assert "minibert pretrain: warning: the corpus has only 2 documents" in result.stderr
    assert "UserWarning" not in result.stderr and "warnings.warn" not in result.stderr
