"""What a command writes: never over a file or folder it does not own, nothing when the
output cannot be written (found before any work), nothing half-written on a full disk, one
writer of a folder at a time. Each case runs the real entry point."""

import errno
import os
import shutil

import pytest
from small_models import MASKED_TEXT, cli, refused

from minibert.cli import main


def test_pretrain_refuses_to_overwrite(model_dir):
    result = cli("pretrain", "--out", str(model_dir), "--steps", "2")
    assert result.returncode == 2
    assert "already holds a model; pass --overwrite" in result.stderr


def test_attention_into_a_read_only_folder(model_dir, tmp_path, unprivileged):
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = unprivileged("attention", "--model", str(model_dir), "the bank",
                              "-o", str(folder / "heat.png"))
    finally:
        folder.chmod(0o755)
    refused(result, f"{str(folder / 'heat.png')!r}: permission denied",
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
    refused(result, str(weights), "permission denied")


def test_pretrain_into_a_read_only_folder(tmp_path, unprivileged):
    folder = tmp_path / "readonly"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = unprivileged("pretrain", "--out", str(folder / "run"), "--steps", "2",
                              "--num-documents", "20", "--vocab-size", "200")
    finally:
        folder.chmod(0o755)
    refused(result, "permission denied", "must be a folder you can write to")
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


def test_output_under_a_file(model_dir, tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file where a folder should be")
    result = cli("attention", "--model", str(model_dir), "the bank",
                 "-o", str(blocker / "heat.png"))
    refused(result, f"{str(blocker)!r}: is a file, not a folder")


@pytest.mark.parametrize("command", [
    ["pretrain", "--steps", "2"],
    ["finetune", "--task", "classify"],
    ["distil", "--model", "tiny-toy"],
    ["figures", "--model", "tiny-toy"],
    ["attention", "the bank", "--model", "tiny-toy"],
])
def test_an_empty_out_is_refused_and_nothing_written(command, tmp_path):
    result = cli(*command, "-o", "", cwd=tmp_path)
    refused(result, "'' is empty")
    assert list(tmp_path.iterdir()) == []


def test_attention_does_not_replace_a_file_without_overwrite(tmp_path):
    target = tmp_path / "a.png"
    target.write_bytes(b"a lecturer's own picture")
    refused(cli("attention", "the bank", "--model", "tiny-toy", "-o", str(target)),
            "already exists; pass --overwrite")
    assert target.read_bytes() == b"a lecturer's own picture"
    result = cli("attention", "the bank", "--model", "tiny-toy", "--output", str(target),
                 "--max-length", "64", "--overwrite")  # the old spellings still work
    assert result.returncode == 0 and target.read_bytes().startswith(b"\x89PNG")
    assert result.stdout.startswith(f"wrote {target}")


@pytest.mark.parametrize("command, marker", [
    (["finetune", "--task", "classify", "--model", "tiny-toy"], "task classify"),
    (["distil", "--model", "tiny-toy"], "student:"),
])
def test_an_unusable_out_is_refused_before_any_work(command, marker, tmp_path):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file where the output folder should go")
    result = cli(*command, "--out", str(blocker / "run"))
    refused(result, "notes.txt")
    assert marker not in result.stderr
    assert blocker.read_text() == "a file where the output folder should go"


def test_a_folder_a_running_job_writes_is_in_use(reference, tmp_path):
    from minibert.io.fileio import run_folder

    folder = tmp_path / "run"
    shutil.copytree(reference, folder)  # an earlier model, about to be replaced
    with run_folder(folder):
        refused(cli("fill-mask", MASKED_TEXT, "--model", str(folder)),
                f"--model {str(folder)!r} is in use by a running job (pid ")
    assert cli("fill-mask", MASKED_TEXT, "--model", str(folder)).returncode == 0


def test_a_file_another_command_writes_is_refused(tmp_path):
    from minibert.io.fileio import output_lock

    target = tmp_path / "same.png"
    with output_lock(target):
        refused(cli("attention", "the bank", "--model", "tiny-toy", "-o", str(target)),
                f"-o {str(target)!r} is being written by a running job (pid ")
    assert not target.exists() and sorted(tmp_path.iterdir()) == []
