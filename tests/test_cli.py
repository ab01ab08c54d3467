"""The command line: every subcommand has --help, works, and fails in one line."""

import json
import subprocess
import sys

import pytest

from minibert.trainer import TrainingConfig, pretrain

COMMANDS = ["gradcheck", "pretrain", "fill-mask", "attention", "finetune", "info"]


def cli(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "minibert", *args], capture_output=True,
                          text=True, timeout=timeout)


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
    (["--layer", "7"], "layer must be in 0..1"),
    (["--layer", "0", "--head", "5"], "head must be in 0..1"),
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
