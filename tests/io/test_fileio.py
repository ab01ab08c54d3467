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


# -- destinations that are not regular files: respected, never renamed over -------------------

def _snapshot(folder):
    """What is in ``folder`` (recursively): each entry's kind, inode, device numbers, link
    text and, for a regular file, its bytes."""
    state = {}
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(root, name)
            info = os.lstat(path)
            entry = (stat.S_IFMT(info.st_mode), info.st_ino, info.st_rdev)
            if stat.S_ISLNK(info.st_mode):
                entry += (os.readlink(path),)
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as handle:
                    entry += (handle.read(),)
            state[os.path.relpath(path, folder)] = entry
    return state


@pytest.fixture
def odd_folder(tmp_path):
    """A folder of things that are not plain files: a FIFO, a character device (a twin of
    /dev/null, only when running as root), links to a file, to a folder, to nothing."""
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "real.html").write_text("old page", encoding="utf-8")
    (folder / "models").mkdir()
    os.symlink("real.html", folder / "link.html")
    os.symlink("models", folder / "models-link")
    os.symlink("nowhere.html", folder / "dangling.html")
    os.mkfifo(folder / "pipe.html")
    if os.geteuid() == 0:
        os.mknod(folder / "null.html", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return folder


def test_writes_follow_links_and_write_into_streams(odd_folder):
    import threading

    before = _snapshot(odd_folder)
    atomic_write_text(odd_folder / "link.html", "new page")
    assert os.readlink(odd_folder / "link.html") == "real.html"
    assert (odd_folder / "real.html").read_text(encoding="utf-8") == "new page"
    atomic_write_text(odd_folder / "dangling.html", "made")
    assert os.readlink(odd_folder / "dangling.html") == "nowhere.html"
    assert (odd_folder / "nowhere.html").read_text(encoding="utf-8") == "made"
    received = []
    reader = threading.Thread(target=lambda: received.append(
        (odd_folder / "pipe.html").read_bytes()))
    reader.start()
    safetensors.save_file({"w": np.ones(2, np.float32)}, odd_folder / "pipe.html")
    reader.join(timeout=30)
    assert received and received[0].endswith(np.ones(2, np.float32).tobytes())
    if (odd_folder / "null.html").exists():
        safetensors.save_file({"w": np.ones(2, np.float32)}, odd_folder / "null.html")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        atomic_write_text(odd_folder / "models", "x")
    model = mb.BertModel(mb.BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=8,
                                       max_position_embeddings=8))
    model.save_pretrained(odd_folder / "models-link")
    assert os.readlink(odd_folder / "models-link") == "models"
    after = _snapshot(odd_folder)
    changed = {name for name in set(before) | set(after) if before.get(name) != after.get(name)}
    assert changed == {"real.html", "nowhere.html", "models/config.json",
                       "models/model.safetensors"}, changed


@pytest.mark.skipif(os.geteuid() != 0, reason="creating a device node needs root")
def test_full_device_is_written_into_not_replaced(tmp_path):
    """/dev/full's twin: the write fails (no space), the device node stays a device."""
    full = tmp_path / "full"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    with pytest.raises(OSError, match="No space left"):
        safetensors.save_file({"w": np.ones(2, np.float32)}, full)
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_the_command_line_changes_only_its_output(odd_folder):
    """explore -o through a link, into a device and a FIFO: the folder around is untouched."""
    import subprocess
    import sys
    import threading

    before = _snapshot(odd_folder)

    def explore(target, *extra):
        return subprocess.run([sys.executable, "-m", "minibert", "explore", "--model",
                               "tiny-toy", "the bank", "-o", str(target), *extra],
                              capture_output=True, text=True, timeout=240)

    result = explore(odd_folder / "link.html", "--overwrite")
    assert result.returncode == 0, result.stderr
    received = []
    reader = threading.Thread(target=lambda: received.append(
        (odd_folder / "pipe.html").read_bytes()))
    reader.start()
    result = explore(odd_folder / "pipe.html")
    reader.join(timeout=60)
    assert result.returncode == 0, result.stderr
    assert received and received[0].startswith(b"<!DOCTYPE html")
    if (odd_folder / "null.html").exists():
        assert explore(odd_folder / "null.html").returncode == 0
    result = explore(odd_folder / "models")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    after = _snapshot(odd_folder)
    changed = {name for name in set(before) | set(after) if before.get(name) != after.get(name)}
    assert changed == {"real.html"}, changed
    assert os.readlink(odd_folder / "link.html") == "real.html"
    assert (odd_folder / "real.html").read_bytes().startswith(b"<!DOCTYPE html")


def test_output_lock_of_a_folder_is_taken_beside_it(tmp_path):
    """figures -o DIR writes into an existing folder: its lock sits beside the folder, and
    a stream such as /dev/stdout takes none."""
    from minibert.io.fileio import output_lock

    folder = tmp_path / "figures"
    folder.mkdir()
    with output_lock(folder):
        assert (tmp_path / ".figures.lock").exists()
    assert not (tmp_path / ".figures.lock").exists()
    with output_lock("/dev/stdout") as held:
        assert str(held) == "/dev/stdout"
