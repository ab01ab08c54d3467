"""The command line: every subcommand has --help, works, and fails in one line."""

import errno
import json
import os
import shutil
import subprocess
import sys

import pytest
from small_models import cli

from minibert.cli import main
from minibert.training.pretrain import TrainingConfig, pretrain

COMMANDS = ["gradcheck", "pretrain", "fill-mask", "attention", "finetune", "info"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "tiny"
    config = TrainingConfig(steps=4, batch_size=8, max_seq_length=32, vocab_size=400,
                            num_documents=60, num_heldout_documents=10, dupe_factor=1,
                            eval_every=4, eval_batches=1, log_every=2)
    pretrain(config, out, progress=lambda message: None)
    return out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    result = cli(command, "--help")
    assert result.returncode == 0 and "usage: minibert" in result.stdout


def test_no_command_prints_help_and_fails():
    result = cli()
    assert result.returncode == 2 and "COMMAND" in result.stdout


@pytest.mark.parametrize("suffix, magic", [("png", b"\x89PNG"), ("svg", b"<svg"),
                                           ("pdf", b"%PDF")])
def test_attention_exports(model_dir, tmp_path, suffix, magic):
    target = tmp_path / f"heat.{suffix}"
    result = cli("attention", "--model", str(model_dir), "the bank of the river",
                 "--pair", "she fished there", "--layer", "1", "--head", "0", "-o", str(target))
    assert result.returncode == 0, result.stderr
    data = target.read_bytes()
    assert len(data) > 1000 and magic in data[:400]


@pytest.mark.parametrize("view", ["layer", "model", "average", "rollout"])
def test_attention_views(model_dir, tmp_path, view):
    target = tmp_path / f"{view}.png"
    result = cli("attention", "--model", str(model_dir), "the bank of the river", "--view",
                 view, "-o", str(target))
    assert result.returncode == 0, result.stderr
    assert target.stat().st_size > 1000


@pytest.mark.parametrize("args, message", [
    (["--layer", "7"], "--layer must be 0 to 1, got 7"),
    (["--layer", "0", "--head", "5"], "--head must be 0 to 1, got 5"),
    (["--view", "sideways"], "--view must be one of head, layer, model, token"),
    (["--view", "token", "--token", "zebra"], "token 'zebra' is not in the text"),
    (["-o", "out.gif"], "the extension must be one of .png, .svg, .pdf"),
])
def test_attention_bad_input_is_one_line(model_dir, tmp_path, args, message):
    result = cli("attention", "--model", str(model_dir), "the bank of the river", *args)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr
    assert result.stderr.strip().count("\n") == 0 and "Traceback" not in result.stderr


def test_attention_needs_a_vocabulary(model_dir, tmp_path):
    folder = tmp_path / "novocab"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_bytes((model_dir / name).read_bytes())
    result = cli("attention", "--model", str(folder), "the bank")
    assert result.returncode == 2 and "has no vocab.txt" in result.stderr


def test_fill_mask_cli(model_dir):
    result = cli("fill-mask", "--model", str(model_dir), "--top-k", "3", "--json",
                 "the [MASK] of the river.")
    assert result.returncode == 0, result.stderr
    answers = json.loads(result.stdout)
    assert len(answers) == 3 and {"score", "token", "token_str", "sequence"} == set(answers[0])
    result = cli("fill-mask", "--model", str(model_dir), "no mask")
    assert result.returncode == 2 and "must contain '[MASK]'" in result.stderr


def test_info_cli(model_dir):
    result = cli("info", "--json", str(model_dir))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["heads"] == ["cls.predictions", "cls.seq_relationship"] and summary["vocab"]


def test_pretrain_refuses_to_overwrite(model_dir):
    result = cli("pretrain", "--out", str(model_dir), "--steps", "2")
    assert result.returncode == 2
    assert "already holds a model; pass --overwrite" in result.stderr


# -- files that cannot be read or written: one line, exit 2, nothing half-written -------------

def _without_privileges():
    """The command prefix that makes permission bits apply, or None when that is impossible.

    root reads and writes anything, so as root the command runs with the capabilities that
    bypass permission checks dropped (setpriv, from util-linux).
    """
    if not hasattr(os, "geteuid"):
        return None
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search",
              "--inh-caps=-dac_override,-dac_read_search"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "pass"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.fixture
def unprivileged():
    prefix = _without_privileges()
    if prefix is None:
        pytest.skip("cannot run without the privilege to bypass file permissions here")

    def run(*args):
        return subprocess.run([*prefix, sys.executable, "-m", "minibert", *args],
                              capture_output=True, text=True, timeout=180)
    return run


def one_line_error(result, *fragments):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_attention_into_a_read_only_folder(model_dir, tmp_path, unprivileged):
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = unprivileged("attention", "--model", str(model_dir), "the bank",
                              "-o", str(folder / "heat.png"))
    finally:
        folder.chmod(0o755)
    one_line_error(result, f"{str(folder / 'heat.png')!r}: permission denied",
                   "-o must name a file in a folder you can write to")
    assert list(folder.iterdir()) == []


def test_fill_mask_on_unreadable_weights(model_dir, tmp_path, unprivileged):
    folder = tmp_path / "locked"
    shutil.copytree(model_dir, folder)
    weights = folder / "model.safetensors"
    weights.chmod(0)
    try:
        result = unprivileged("fill-mask", "--model", str(folder), "the [MASK] of the river")
    finally:
        weights.chmod(0o644)
    one_line_error(result, str(weights), "permission denied")


def test_pretrain_into_a_read_only_folder(tmp_path, unprivileged):
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = unprivileged("pretrain", "--out", str(folder / "run"), "--steps", "2",
                              "--num-documents", "20", "--vocab-size", "200")
    finally:
        folder.chmod(0o755)
    one_line_error(result, "permission denied", "must be a folder you can write to")
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("command, work", [
    (["finetune", "--task", "classify", "--model", "tiny-toy"], "task classify"),
    (["distil", "--model", "tiny-toy"], "student:"),
])
def test_a_read_only_out_is_found_before_any_work(tmp_path, unprivileged, command, work):
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = unprivileged(*command, "--out", str(folder / "run"))
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2 and "permission denied" in result.stderr, result.stderr
    assert "must be a folder you can write to" in result.stderr
    assert work not in result.stderr and list(folder.iterdir()) == []


def test_a_full_disk_leaves_nothing_half_written(model_dir, tmp_path, monkeypatch, capsys):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "heat.png"
    assert main(["attention", "--model", str(model_dir), "the bank", "-o", str(target)]) == 2
    message = capsys.readouterr().err
    assert message.count("\n") == 1 and "Traceback" not in message
    assert f"{str(target)!r}: no space left on the device" in message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["info"], ["fill-mask", "a [MASK]", "--model"],
                                     ["attention", "the bank", "--model"]])
def test_a_model_folder_that_is_a_file_or_missing(model_dir, tmp_path, command):
    result = cli(*command, str(model_dir / "config.json"))
    one_line_error(result, "config.json' is a file, not a model folder")
    result = cli(*command, str(tmp_path / "nowhere"))
    one_line_error(result, "nowhere' does not exist; expected a folder with config.json")
    assert "vocab.txt;" not in result.stderr


def test_pretrain_corpus_must_be_a_readable_file(tmp_path):
    result = cli("pretrain", "--out", str(tmp_path / "run"), "--corpus", str(tmp_path))
    one_line_error(result, f"--corpus {str(tmp_path)!r} is a folder; expected a UTF-8 text file")
    assert "Errno" not in result.stderr
    result = cli("pretrain", "--out", str(tmp_path / "run"), "--corpus",
                 str(tmp_path / "missing.txt"))
    one_line_error(result, "missing.txt' does not exist; expected a UTF-8 text file")
    assert not (tmp_path / "run").exists()


def test_output_under_a_file(model_dir, tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file where a folder should be")
    result = cli("attention", "--model", str(model_dir), "the bank",
                 "-o", str(blocker / "heat.png"))
    one_line_error(result, f"{str(blocker)!r}: is a file, not a folder")


# -- user text: refused when it cannot be read faithfully, never echoed at length -------------

def test_fill_mask_refuses_text_longer_than_the_model_reads(model_dir):
    text = "the river bank " * 60 + "she sat by the [MASK]."
    result = cli("fill-mask", "--model", str(model_dir), text)
    one_line_error(result, "tokens long ([CLS] and [SEP] included), more than the 128 the "
                           "model reads (max_position_embeddings)")
    assert len(result.stderr) < 400 and f"({len(text):,} characters)" in result.stderr


def test_fill_mask_without_a_mask_quotes_an_excerpt(model_dir):
    text = "word " * 5000
    result = cli("fill-mask", "--model", str(model_dir), text)
    one_line_error(result, "must contain '[MASK]'", "(25,000 characters)")
    assert len(result.stderr) < 300


def test_fill_mask_reads_up_to_max_position_embeddings_tokens(model_dir):
    import minibert as mb
    from minibert.fill_mask import fill_mask

    tokenizer = mb.BertTokenizer(model_dir / "vocab.txt")
    with pytest.warns(UserWarning, match="ignored 4 checkpoint weights"):
        model = mb.BertForMaskedLM.from_pretrained(model_dir)
    limit = model.config.max_position_embeddings
    word = next(w for w in tokenizer.vocab if w.isalpha() and tokenizer.tokenize(w) == [w])
    fits = f"{word} " * (limit - 3) + "[MASK]"  # with [CLS] and [SEP]: exactly the limit
    assert len(tokenizer(fits)["input_ids"]) == limit
    assert len(fill_mask(model, tokenizer, fits, top_k=1)) == 1
    with pytest.raises(ValueError, match=f"text is {limit + 1} tokens long"):
        fill_mask(model, tokenizer, f"{word} " + fits)


def test_non_utf8_arguments_are_refused(model_dir):
    result = subprocess.run([sys.executable, "-m", "minibert", "fill-mask", "--model",
                             str(model_dir), b"caf\xe9 au [MASK]"], capture_output=True,
                            timeout=180)
    stderr = result.stderr.decode("utf-8")
    assert result.returncode == 2 and stderr.count("\n") == 1 and "Traceback" not in stderr
    assert "argument 4 is not valid UTF-8 (byte 0xe9 at character 3" in stderr
    assert "command-line text must be UTF-8" in stderr


def test_long_arguments_are_quoted_as_excerpts(model_dir, capsys):
    view = "sideways" * 500
    assert main(["attention", "--model", str(model_dir), "the bank", "--view", view]) == 2
    message = capsys.readouterr().err
    assert "--view must be one of" in message and "(4,000 characters)" in message
    assert len(message) < 300


def test_the_resume_command_is_the_invocation_with_resume(tmp_path):
    import argparse

    from minibert.cli.train import _resume_command

    args = argparse.Namespace(program=["minibert"], resume=False,
                              argv=["pretrain", "--out", "runs/my run", "--overwrite",
                                    "--steps", "40"])
    assert _resume_command(args) == "minibert pretrain --out 'runs/my run' --steps 40 --resume"
    args.resume, args.argv = True, ["pretrain", "--out", "r", "--resume"]
    assert _resume_command(args) == "minibert pretrain --out r --resume"
