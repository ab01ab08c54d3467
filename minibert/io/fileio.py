"""Atomic file writes: a file is either the old one or the complete new one, never half.

Every writer in minibert goes through here: write a temporary file in the destination
folder, flush and fsync it, then ``os.replace`` it over the target (atomic on POSIX and
Windows when both live on one file system). ``atomic_folder`` does the same for a folder
of files: fill a staging folder, then swap it in by two renames.

The result has the permissions a plain ``open(path, "w")`` would give: a new file gets
0666 minus the user's umask (``tempfile.mkstemp`` would make every file 0600, unreadable
to the colleagues a lecturer shares figures and models with), and a replaced file keeps
its mode.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import json
import os
import re
import shutil
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from minibert.checks import short_repr

try:
    import fcntl
except ImportError:  # Windows: the lock is a file created exclusively, without liveness
    fcntl = None

__all__ = ["existing_folder", "writable_destination", "DuplicateKeyError", "FolderInUse",
           "RUN_FILES", "LOCK_NAME", "atomic_open",
           "atomic_write_bytes", "atomic_write_text", "atomic_write_json", "atomic_folder",
           "folder_versions", "remove_folder", "strict_json_loads", "run_folder",
           "clear_run_files", "open_to_read", "read_bounded", "read_json_object", "running_job",
           "output_lock"]


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb",
                encoding: str | None = None) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success rename it over ``path``.

    If the body raises, the temporary file is removed and ``path`` is untouched. An
    operating-system error (permission, full disk) names ``path``, not the temporary file.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    named = Path(path)
    path = writable_destination(named)
    if path is None:  # a stream (a terminal, a pipe, /dev/stdout, /dev/null): written into
        with _open_stream(named, mode, encoding) as handle:
            yield handle
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = _create_temporary(path)
    try:
        with os.fdopen(fd, mode, encoding=encoding if mode == "w" else None) as handle:
            _keep_mode(handle.fileno(), path)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(error, OSError) and error.filename in (None, tmp_name):
            error.filename = str(path)
        raise


# The folders whose entries are a process's open files: /dev/stdout is /proc/self/fd/1.
_DESCRIPTOR_FOLDER = re.compile(r"^/(proc/(self|thread-self|\d+)|dev)/fd$")


def writable_destination(path: str | os.PathLike) -> Path | None:
    """Where an atomic write of ``path`` renames its file: what is there is respected.

    - nothing there, or a regular file: ``path`` itself;
    - a symbolic link (a chain of them) to a regular file, or to nothing yet: the file it
      leads to, so the link stays a link;
    - a stream, a character device or a FIFO (a terminal, a pipe, ``/dev/null``,
      ``/dev/stdout`` and other open descriptors, even of a regular file): None, meaning
      "write into it as it is": renaming a file over it would replace the device node, or
      the file a shell opened, by a new file;
    - anything else (a folder, a block device, a socket): IsADirectoryError or
      FileExistsError naming ``path`` and what it is; never renamed over.
    """
    named = Path(path)
    current = named
    for _ in range(40):  # the kernel's own limit on a chain of links
        if _DESCRIPTOR_FOLDER.match(os.path.realpath(current.parent)):
            return None  # an open descriptor: the write goes where it points
        try:
            info = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):
            return current  # not there (making its folder names what is in the way)
        if stat.S_ISLNK(info.st_mode):
            link = Path(os.readlink(current))
            current = link if link.is_absolute() else current.parent / link
            continue
        if stat.S_ISREG(info.st_mode):
            return current
        if stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode):
            return None
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder; expected a file name", str(named))
        kind = "a block device" if stat.S_ISBLK(info.st_mode) else \
            "a socket" if stat.S_ISSOCK(info.st_mode) else "not a regular file"
        raise FileExistsError(errno.EEXIST, f"exists and is {kind}; minibert writes only "
                                            f"files, never replaces this", str(named))
    raise OSError(errno.ELOOP, "too many levels of symbolic links", str(named))


@contextlib.contextmanager
def _open_stream(path: Path, mode: str, encoding: str | None) -> Iterator[IO]:
    """``path`` (a terminal, pipe, device or open descriptor) opened to write into, as
    ``open(path, mode)`` does: nothing renamed, no fsync (a pipe cannot)."""
    with open(path, mode, encoding=encoding if mode == "w" else None) as handle:
        yield handle


def _create_temporary(path: Path) -> tuple[int, str]:
    """Create a new, empty, uniquely named file beside ``path``; returns (fd, name).

    Created with mode 0666 so that the kernel applies the umask (and any default ACL) just
    as it would for ``open()``; reading the umask instead would mean changing it, which
    races with other threads.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        name = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(name, flags, 0o666)
        except FileExistsError:
            continue
        except OSError as error:
            error.filename = str(path)  # the user knows the destination, not this hidden name
            raise
        break
    else:
        raise FileExistsError(f"could not create a temporary file beside {str(path)!r}")
    return fd, name


def _keep_mode(fd: int, path: Path) -> None:
    """Give the new file the mode of the file it replaces, as rewriting it in place would."""
    try:
        existing = os.stat(path)
    except OSError:
        return
    if stat.S_ISREG(existing.st_mode) and hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(existing.st_mode))


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb") as handle:
        handle.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    with atomic_open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def atomic_write_json(path: str | os.PathLike, obj, indent: int = 2) -> None:
    """Write ``obj`` as pretty JSON (sorted keys, trailing newline) atomically."""
    atomic_write_text(path, json.dumps(obj, indent=indent, sort_keys=True) + "\n")


def _swap_folders(path: Path) -> tuple[Path, Path]:
    """The staging and the old folder of ``atomic_folder``: ``.<name>.new``, ``.<name>.old``."""
    return path.parent / f".{path.name}.new", path.parent / f".{path.name}.old"


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike) -> Iterator[Path]:
    """Fill a staging folder beside ``path``; on success, swap it in for ``path``.

    The body writes into the yielded folder (``.<name>.new``). If it raises, that folder is
    removed and ``path`` is untouched. On success the old ``path`` is renamed to
    ``.<name>.old``, the new folder to ``path``, and the old one deleted: at every moment a
    complete version exists, under ``path`` or, if the process dies between the two
    renames, under ``.<name>.old`` (``folder_versions`` lists both).
    """
    path = _folder_destination(Path(path))
    staging, previous = _swap_folders(path)
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
        yield staging
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)  # a full disk keeps no partial copy
        _name_the_target(error, path, staging)
        raise
    try:
        shutil.rmtree(previous, ignore_errors=True)
        if path.exists():
            os.replace(path, previous)
        os.replace(staging, path)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        _name_the_target(error, path, staging)
        raise
    shutil.rmtree(previous, ignore_errors=True)


def _folder_destination(path: Path) -> Path:
    """The folder an ``atomic_folder`` swap replaces: ``path``, or the folder a symbolic link
    at ``path`` leads to (the link stays); anything else there is refused, never replaced."""
    if path.is_symlink():
        if not path.is_dir():
            raise FileExistsError(errno.EEXIST, "is a symbolic link that does not lead to a "
                                                "folder; expected a folder name", str(path))
        return Path(os.path.realpath(path))
    if os.path.lexists(path) and not path.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a folder", str(path))
    return path


def _name_the_target(error: BaseException, path: Path, staging: Path) -> None:
    """An OSError about the staging folder (or a file in it) names the user's ``path``:
    the user never asked for ``.<name>.new``."""
    if not isinstance(error, OSError):
        return
    for attribute in ("filename", "filename2"):
        name = getattr(error, attribute, None)
        if isinstance(name, (str, os.PathLike)) and str(name).startswith(str(staging)):
            setattr(error, attribute, str(path) + str(name)[len(str(staging)):])


def folder_versions(path: str | os.PathLike) -> tuple[Path, Path]:
    """Where a complete version of an ``atomic_folder`` may be, newest first: ``path``, then
    the ``.<name>.old`` an interrupted swap leaves."""
    path = Path(path)
    return path, _swap_folders(path)[1]


def remove_folder(path: str | os.PathLike) -> None:
    """Delete an ``atomic_folder`` with its staging and old copies, if any."""
    path = Path(path)
    for folder in (path, *_swap_folders(path)):
        shutil.rmtree(folder, ignore_errors=True)


class DuplicateKeyError(ValueError):
    """A JSON object names one key twice."""

    def __init__(self, key: str):
        super().__init__(f"the key {key!r} appears twice")
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    # json.loads would keep the last of two equal keys without a word.
    result = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKeyError(key)
        result[key] = value
    return result


def _reject_constant(name: str) -> None:
    # Python's json accepts NaN and Infinity, which the JSON standard does not.
    raise ValueError(f"{name} is not a JSON value")


def strict_json_loads(text: str):
    """``json.loads`` that refuses what JSON itself refuses.

    Two equal keys in one object raise DuplicateKeyError (a ValueError with ``.key``);
    NaN and Infinity raise ValueError; deep nesting raises RecursionError, as in json.loads.
    """
    return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)


# -- run folders: one run at a time, and what a run wrote ----------------------------------

LOCK_NAME = ".minibert.lock"  # in a run folder while a run writes into it: its pid and host
# What minibert's jobs write into an output folder (glob patterns): an overwrite removes
# these and nothing else, so a user's own files beside a model survive it.
RUN_FILES = ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json",
             "metrics.json", "history.json", "training_config.json", "distill_config.json",
             "fill_mask.json", "fill_mask.txt", "attention_*.png", "training_curves.png",
             "command.txt", "checkpoint", ".checkpoint.new", ".checkpoint.old")


class FolderInUse(FileExistsError):
    """Another live process holds the run folder's lock."""


def _lock_text(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 200).decode("utf-8", "replace").strip()


def _holder(text: str) -> str:
    """'pid N' (and its host when it is another machine) from a lock file's text."""
    pid, _, host = text.partition(" ")
    where = f" on {host}" if host and host != socket.gethostname() else ""
    return f"pid {pid}{where}" if pid.isdigit() else "pid unknown"


def _take_lock(lock: Path, argument: str, path: Path) -> tuple[int, str]:
    """Hold ``lock`` (flock, released by the kernel when the holder dies); returns the open
    descriptor and what the previous holder wrote in it ('' when it finished cleanly)."""
    if fcntl is None:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            raise FolderInUse(f"{argument} {str(path)!r} is in use by a job "
                              f"({_holder(lock.read_text(encoding='utf-8').strip())}); if "
                              f"it no longer runs, delete {str(lock)!r}") from None
        os.write(fd, f"{os.getpid()} {socket.gethostname()}\n".encode())
        return fd, ""
    for _ in range(100):
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(_lock_text(fd))
            os.close(fd)
            raise FolderInUse(f"{argument} {str(path)!r} is in use by a running job "
                              f"({holder}); wait for it to finish or stop it, or choose "
                              f"another {argument}") from None
        except BaseException:
            os.close(fd)
            raise
        try:  # the holder before us may have removed the file after we opened it
            current = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            current = False
        if not current:
            os.close(fd)
            continue
        previous = _lock_text(fd)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()} {socket.gethostname()}\n".encode())
        return fd, previous
    raise FolderInUse(f"{argument} {str(path)!r}: could not take its lock {LOCK_NAME}; other "
                      f"jobs keep taking it")


def running_job(path: str | os.PathLike) -> str | None:
    """'pid N' of the live job that holds the run folder ``path``'s lock, or None.

    For a command that reads a folder: a folder a running job writes into holds a model
    only half made (or an older one about to be replaced). The lock is tested, never
    taken for longer than the test, and no file is created.
    """
    lock = Path(path) / LOCK_NAME
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        if fcntl is None:
            return _holder(_lock_text(fd))
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(_lock_text(fd))
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@contextlib.contextmanager
def output_lock(path: str | os.PathLike, argument: str = "-o") -> Iterator[Path]:
    """Hold a lock on the output file ``path`` while a command makes it.

    Two commands writing one file at once would each say "wrote" and the later rename
    would silently win; the second is refused instead (FolderInUse naming the first's
    pid). The lock is ``.<name>.lock`` beside the file, held with flock (released by the
    kernel if the holder dies) and removed at the end.
    """
    named = Path(path)
    # a folder of outputs (figures -o DIR) is locked beside it, as a file is
    path = named if named.is_dir() else writable_destination(named)
    if path is None:  # a stream (/dev/stdout, a pipe) is written into, not made: no lock
        yield named
        return
    lock = path.parent / f".{path.name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, _ = _take_lock(lock, argument, path)
    except FolderInUse as error:
        raise FolderInUse(str(error).replace(" is in use by a running job",
                                             " is being written by a running job")) from None
    except OSError as error:
        error.filename = str(path)  # the user named the file, not its hidden lock
        raise
    try:
        yield named
    finally:
        _release(lock, fd)


@contextlib.contextmanager
def run_folder(path: str | os.PathLike, argument: str = "--out",
               notice=None) -> Iterator[Path]:
    """Create (if needed) and lock the output folder ``path`` for the duration of a run.

    The lock is the file ``.minibert.lock``, held with ``flock`` (so the kernel releases it
    when its process dies, however it dies) and holding the pid and host of its holder. A
    second run is refused while the holder lives (FolderInUse naming the pid); the folder
    of a run that died is taken over, and ``notice`` is told so. Creating the lock also
    proves that the folder is writable before any work is done. The lock file is removed
    at the end; if the body fails and the folder was created here and holds nothing, the
    folder is removed too.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"{argument} {str(path)!r} exists and is not a folder")
    created = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    lock = path / LOCK_NAME
    try:
        fd, previous = _take_lock(lock, argument, path)
    except BaseException:
        _remove_created(created)
        raise
    if previous and notice is not None:
        notice(f"a job ({_holder(previous)}) that wrote into {str(path)!r} "
               f"has died; taking the folder over")
    try:
        yield path
    except BaseException:
        _release(lock, fd)
        _remove_created(created)
        raise
    _release(lock, fd)


def _release(lock: Path, fd: int) -> None:
    # Removed while still held: a job that opened this file meanwhile sees it is gone.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(lock)
    os.close(fd)


def _remove_created(created: list[Path]) -> None:
    """Remove the folders ``run_folder`` created, deepest first, where they stayed empty."""
    for folder in created:
        try:
            folder.rmdir()
        except OSError:
            return


def clear_run_files(path: str | os.PathLike) -> list[Path]:
    """Delete what a previous minibert run wrote into ``path`` (RUN_FILES), nothing else.

    Returns the paths removed. A user's own files, and folders minibert did not write,
    are kept.
    """
    path = Path(path)
    removed = []
    for entry in sorted(path.iterdir()) if path.is_dir() else []:
        if not any(fnmatch.fnmatchcase(entry.name, pattern) for pattern in RUN_FILES):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
        removed.append(entry)
    return removed


# The largest JSON file read (config.json, tokenizer.json, tokenizer_config.json): BERT's
# tokenizer.json is 0.7 MB, a multilingual one 3 MB; a config.json a few KB.
MAX_JSON_BYTES = 32 * 2**20
# A config file nests a few levels (id2label is two); deeper is no config, and would
# overflow the stack of code that walks it (json.dumps, copy.deepcopy).
MAX_JSON_DEPTH = 64


def _kind_of(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket"
            if stat.S_ISSOCK(mode) else "a block device" if stat.S_ISBLK(mode)
            else "not a regular file")


def open_to_read(path: Path, what: str) -> IO[bytes]:
    """``open(path, "rb")`` of a regular file, with errors that name ``what`` and the path.

    A device (``/dev/zero``), a FIFO or a socket is refused (ValueError) before anything is
    read: such an input has no size and may never end. Only the common failures are
    reworded; any other OSError already names the path.
    """
    try:
        # O_NONBLOCK: opening a FIFO without a writer would wait forever; no effect on files
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"{what} {str(path)!r} is a folder; expected a file") from None
    except PermissionError:
        raise PermissionError(
            f"{what} {str(path)!r} cannot be read: permission denied"
        ) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(f"{what} {str(path)!r} is a folder; expected a file")
        raise ValueError(f"{what} {str(path)!r} is {_kind_of(mode)}, not a regular file; "
                         f"expected a file (its size must be known before it is read)")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_bounded(path: str | os.PathLike, what: str, limit: int,
                 chunk: int = 16 * 2**20) -> bytes:
    """The bytes of the regular file ``path``, refused (ValueError naming ``what``, its size
    and ``limit``) when it holds more than ``limit`` bytes: checked before reading, and again
    while reading (a file can grow). Read in chunks, so that a signal is answered promptly."""
    with open_to_read(Path(path), what) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise ValueError(f"{what} {str(path)!r} holds {size:,} bytes, more than the "
                             f"{limit:,} such a file may hold")
        parts, total = [], 0
        while True:
            # no larger a request than the file (a buffer of that size is allocated)
            part = handle.read(min(chunk, limit + 1 - total, max(size - total, 0) + 1))
            if not part:
                return b"".join(parts)
            parts.append(part)
            total += len(part)
            if total > limit:
                raise ValueError(f"{what} {str(path)!r} grew past {limit:,} bytes while "
                                 f"it was read")


def _json_depth(value) -> int:
    """How deeply ``value`` nests lists and objects, measured without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            if depth <= MAX_JSON_DEPTH:
                pending += [(child, depth + 1) for child in
                            (item.values() if isinstance(item, dict) else item)]
    return deepest


def read_json_object(path: str | os.PathLike, what: str) -> dict[str, Any]:
    """The JSON object in the file ``path`` (config.json, tokenizer_config.json).

    UTF-8 (a byte-order mark, as some Windows editors write, is allowed), strict JSON (no key
    twice, no NaN). Every error names ``what`` and the path: FileNotFoundError or
    PermissionError for a file that cannot be read, ValueError for anything else.
    """
    where = f"{what} {str(path)!r}"
    raw = read_bounded(path, what, MAX_JSON_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{where} is not UTF-8 text: byte {error.start} is "
                         f"{raw[error.start:error.start + 1]!r}") from None
    try:
        data = strict_json_loads(text)
    except DuplicateKeyError as error:
        raise ValueError(f"{where} has the key {short_repr(error.key)} twice") from None
    except RecursionError:
        raise ValueError(f"{where} is not valid JSON: nested too deeply") from None
    except ValueError as error:
        raise ValueError(f"{where} is not valid JSON: {short_repr(str(error), 120)}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where} must hold a JSON object, "
                         f"got {type(data).__name__} {short_repr(data)}")
    if _json_depth(data) > MAX_JSON_DEPTH:
        raise ValueError(f"{where} nests lists and objects more than {MAX_JSON_DEPTH} levels "
                         f"deep; a config file nests a few")
    return data


# What save_pretrained writes: the folder a model is read from.
MODEL_FOLDER_FILES = "config.json and model.safetensors (as save_pretrained writes)"


def existing_folder(directory, what: str, holding: str = MODEL_FOLDER_FILES,
                    argument: str | None = None) -> Path:
    """``directory`` as a Path, after checking that it is a folder that exists: TypeError
    (naming ``argument``, ``what`` by default), FileNotFoundError or NotADirectoryError
    that say which ``what`` it is and what it should hold."""
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"{argument or what} must be a str or os.PathLike, got "
                        f"{type(directory).__name__}")
    directory = Path(directory)
    if not directory.exists():
        raise FileNotFoundError(f"{what} {str(directory)!r} does not exist")
    if not directory.is_dir():
        raise NotADirectoryError(f"{what} {str(directory)!r} is a file; expected a folder "
                                 f"holding {holding}")
    return directory
