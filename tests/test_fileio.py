"""Atomic writes: all or nothing, and the permissions a plain open() would give."""

import os
import stat

import numpy as np
import pytest

import minibert as mb
from minibert.io import safetensors
from minibert.io.fileio import atomic_open, atomic_write_bytes, atomic_write_text

pytestmark = pytest.mark.skipif(os.name != "posix", reason="umask and modes are POSIX")


@pytest.fixture
def umask():
    """Set the process umask for one test and restore it afterwards."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077, 0o027], ids=oct)
def test_new_files_follow_the_umask(tmp_path, umask, mask):
    umask(mask)
    plain = tmp_path / "plain.txt"
    with open(plain, "w") as handle:
        handle.write("x")
    atomic_write_text(tmp_path / "text.txt", "x")
    atomic_write_bytes(tmp_path / "deep" / "bytes.bin", b"x")
    safetensors.save_file({"w": np.zeros(3, np.float32)}, tmp_path / "w.safetensors")
    expected = 0o666 & ~mask
    assert mode(plain) == expected
    for name in ("text.txt", "deep/bytes.bin", "w.safetensors"):
        assert mode(tmp_path / name) == expected, name
    assert mode(tmp_path / "deep") == 0o777 & ~mask


@pytest.mark.parametrize("mask", [0o022, 0o077], ids=oct)
def test_model_folders_follow_the_umask(tmp_path, umask, mask):
    umask(mask)
    model = mb.BertForPreTraining(mb.BertConfig.preset("tiny", vocab_size=50), seed=0)
    tokenizer = mb.BertTokenizer.train(["a small corpus of words"] * 3, vocab_size=50)
    folder = model.save_pretrained(tmp_path / "model", tokenizer=tokenizer)
    assert mode(folder) == 0o777 & ~mask
    for path in folder.iterdir():
        assert mode(path) == 0o666 & ~mask, path.name


def test_a_replaced_file_keeps_its_mode(tmp_path, umask):
    umask(0o022)
    target = tmp_path / "shared.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    atomic_write_text(target, "new")
    assert target.read_text() == "new" and mode(target) == 0o640


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "keep.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(target, "w", encoding="utf-8") as handle:
        handle.write("half")
        raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]
