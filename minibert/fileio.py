"""Atomic file writes: a file is either the old one or the complete new one, never half.

Every writer in minibert goes through here: write a temporary file in the destination
folder, flush and fsync it, then ``os.replace`` it over the target (atomic on POSIX and
Windows when both live on one file system).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_open", "atomic_write_bytes", "atomic_write_text", "atomic_write_json"]


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb",
                encoding: str | None = None) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success rename it over ``path``.

    If the body raises, the temporary file is removed and ``path`` is untouched.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"mode must be 'wb' or 'w', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=encoding if mode == "w" else None) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


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
