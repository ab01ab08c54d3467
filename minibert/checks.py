"""One home for the argument checks and constants that every part of minibert shares.

Each check raises ``TypeError`` (wrong kind of value) or ``ValueError`` (right kind, not
allowed) with a message that names the argument, what was given and what is allowed;
ids outside their table raise ``IndexError``. A check returns the value in its normal
form (``int``, ``float``, an int64 array), so a caller can write
``steps = check_int("steps", steps, minimum=1)``.

Python counts ``True`` and ``False`` as integers (``isinstance(True, int)`` holds); every
check here refuses them where a number is asked for, so ``steps=True`` is not one step.
"""

from __future__ import annotations

import errno
import math
import numbers
import shutil
import textwrap
from pathlib import Path

import numpy as np

__all__ = [
    "IGNORE_INDEX", "is_int", "is_real", "check_int", "check_real", "check_bool",
    "check_probability", "check_str", "check_float_array", "as_int_array", "check_ids",
    "short_repr", "exact_float", "OS_REASONS", "os_error_line", "wrap_for_terminal",
]

# The label of positions that carry no target (no MLM prediction, a [CLS]/[SEP]/padding
# token in token classification): skipped by the cross-entropy, as in PyTorch and HF.
IGNORE_INDEX = -100

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def short_repr(value, limit: int = 60) -> str:
    """repr cut to ``limit`` characters: a message never quotes a huge input whole."""
    # int.__repr__ of a number with thousands of digits is itself slow (and may be refused).
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and \
            int(value).bit_length() > 200:
        return f"an integer of {int(value).bit_length()} bits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_int(value) -> bool:
    """True for Python and NumPy integers, False for bools (and everything else)."""
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(
        value, (bool, np.bool_))


def is_real(value) -> bool:
    """True for Python and NumPy real numbers (ints included), False for bools."""
    return isinstance(value, (numbers.Real, np.floating, np.integer)) and not isinstance(
        value, (bool, np.bool_))


def check_int(name: str, value, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an int, after checking it is an integer in [minimum, maximum]."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {short_repr(value)}")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        low = "" if minimum is None else f">= {minimum}"
        high = "" if maximum is None else f"<= {maximum}"
        raise ValueError(f"{name} must be {' and '.join(p for p in (low, high) if p)}, "
                         f"got {short_repr(value)}")
    return int(value)


def check_real(name: str, value, minimum: float | None = None, *, above: bool = False,
               maximum: float | None = None, below: bool = False) -> float:
    """``value`` as a finite float, after checking it lies in the stated interval.

    ``minimum``/``maximum`` are inclusive bounds unless ``above``/``below`` make them
    strict: ``check_real("lr", lr, 0, above=True)`` asks for a finite number > 0.
    """
    if not is_real(value):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} "
                        f"{short_repr(value)}")
    value = float(value)
    ok = math.isfinite(value)
    if minimum is not None:
        ok = ok and (value > minimum if above else value >= minimum)
    if maximum is not None:
        ok = ok and (value < maximum if below else value <= maximum)
    if not ok:
        bounds = []
        if minimum is not None:
            bounds.append(f"{'>' if above else '>='} {minimum}")
        if maximum is not None:
            bounds.append(f"{'<' if below else '<='} {maximum}")
        allowed = "a finite number" + (" " + " and ".join(bounds) if bounds else "")
        raise ValueError(f"{name} must be {allowed}, got {short_repr(value)}")
    return value


def check_probability(name: str, value, *, open_at_zero: bool = False,
                      open_at_one: bool = False) -> float:
    """``value`` as a float in [0, 1], with either end open on request."""
    return check_real(name, value, 0.0, above=open_at_zero, maximum=1.0, below=open_at_one)


def check_bool(name: str, value) -> bool:
    """``value`` itself, after checking it is True or False (not 0/1, not a string)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} "
                        f"{short_repr(value)}")
    return bool(value)


def check_str(name: str, value) -> str:
    """``value`` if it is a str; otherwise a TypeError naming the argument, its type and value."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}: "
                        f"{short_repr(value, 80)}")
    return value


def check_float_array(name: str, x) -> None:
    """Raise unless ``x`` is a float32 or float64 NumPy array."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(x).__name__}")
    if x.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must have dtype float32 or float64, got {x.dtype}")


def as_int_array(name: str, value, shape: tuple | None = None) -> np.ndarray:
    """``value`` as an int64 array (integer or bool input only), checked against ``shape``."""
    array = np.asarray(value)
    if array.dtype == object or not (
        np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_
    ):
        raise TypeError(f"{name} must be an integer array, got dtype {array.dtype}")
    if shape is not None and array.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {array.shape}")
    return array.astype(np.int64, copy=False)


def check_ids(name: str, ids, upper: int, what: str = "", *, ignore: int | None = None
              ) -> np.ndarray:
    """``ids`` as an integer array whose entries lie in [0, upper) (or equal ``ignore``).

    ``what`` says where the bound comes from ("the vocabulary size"); IndexError names the
    first offending value.
    """
    ids = np.asarray(ids)
    if ids.dtype == object or not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array, got dtype {ids.dtype}")
    if ids.size:
        outside = (ids < 0) | (ids >= upper)
        if ignore is not None:
            outside &= ids != ignore
        if outside.any():
            where = f" ({what})" if what else ""
            also = f" or {ignore} (no target)" if ignore is not None else ""
            raise IndexError(f"{name} contains {ids[outside].ravel()[0]}; allowed: "
                             f"[0, {upper}){where}{also}")
    return ids


def exact_float(name: str, value) -> float:
    """``value`` as a float; an integer that float64 cannot hold exactly is refused."""
    try:
        as_float = float(value)
    except OverflowError:
        as_float = math.inf
    if as_float != value:
        raise ValueError(f"{name} must be a number that float64 holds exactly, got "
                         f"{short_repr(value)}")
    return as_float


# What an operating-system error means, in the words of a message (not "[Errno 13] ...").
OS_REASONS = {
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOENT: "does not exist",
    errno.EISDIR: "is a folder, not a file",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EEXIST: "already exists",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "the file system is read-only",
    errno.ENAMETOOLONG: "the name is too long",
}


def os_error_line(error: OSError) -> str:
    """One line for an operating-system error: the path and what went wrong, in words.

    minibert's own errors (no errno) already say everything and are passed through.
    """
    if error.errno is None:
        return str(error)
    reason = OS_REASONS.get(error.errno) or (error.strerror or str(error)).lower()
    if error.filename is None:
        return reason
    if error.errno == errno.EEXIST and Path(error.filename).is_file():
        reason = "is a file, not a folder"  # mkdir met a file where a folder should go
    return f"{str(error.filename)!r}: {reason}"


def wrap_for_terminal(message: str, stream) -> str:
    """``message`` wrapped at word breaks to the terminal's width when ``stream`` is a
    terminal, with the later lines indented; unchanged for a file or a pipe, where a script
    reads one line. Never cut: the end of a message holds its advice."""
    if not stream.isatty():
        return message
    width = max(40, shutil.get_terminal_size().columns - 1)
    return "\n".join(textwrap.wrap(message, width, subsequent_indent="    ",
                                   break_long_words=False, break_on_hyphens=False))
