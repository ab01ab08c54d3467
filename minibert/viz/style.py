"""Lecture style, figure sizing, tick-label thinning and export for every minibert figure.

The style is applied with a context manager (``with lecture_style(): ...``) so that
importing minibert never changes a notebook's own matplotlib settings.

Colour map: ``"cividis"`` (Nuñez, Anderton & Renslow, 2018). Like ``"viridis"`` it is
perceptually uniform and its lightness rises monotonically from dark to light, so a
heatmap still reads correctly on a washed-out projector and when printed in grayscale;
cividis was in addition tuned to look the same to readers with red-green colour-vision
deficiency and its lightness ramp is close to linear, so equal steps in attention look
like equal steps in brightness.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import matplotlib
from matplotlib import cycler
from matplotlib.figure import Figure

from minibert.checks import check_int, check_real
from minibert.io.fileio import atomic_write_bytes

__all__ = [
    "ATTENTION_CMAP",
    "SAVE_FORMATS",
    "DEFAULT_DPI",
    "MAX_FIGURE_SIZE",
    "lecture_style",
    "save_figure",
    "thin_labels",
    "figure_size",
]

ATTENTION_CMAP = "cividis"
SAVE_FORMATS = ("png", "svg", "pdf")
DEFAULT_DPI = 200
# Inches (width, height): the largest figure that still fits a 16:9 or 4:3 slide at full size.
MAX_FIGURE_SIZE = (16.0, 12.0)

# Okabe & Ito (2008) colour-blind safe palette; lines also differ in style where it matters.
_LINE_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]

_LECTURE_RC = {
    "font.size": 16,
    "axes.titlesize": 18,
    "axes.labelsize": 16,
    "xtick.labelsize": 13,
    "ytick.labelsize": 13,
    "legend.fontsize": 13,
    "figure.titlesize": 20,
    "lines.linewidth": 2.5,
    "lines.markersize": 7,
    "axes.prop_cycle": cycler(color=_LINE_COLORS),
    "image.cmap": ATTENTION_CMAP,
    # Each cell is one token pair: smoothing between cells would invent values.
    "image.interpolation": "nearest",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
}


@contextlib.contextmanager
def lecture_style() -> Iterator[None]:
    """Large fonts, thick lines and the cividis colour map, only inside the ``with`` block.

    Fonts are fixed when an artist is created, so build the figure inside the block; the
    figure keeps its look after the block ends, and global ``rcParams`` are restored.
    """
    with matplotlib.rc_context(_LECTURE_RC):
        yield


def save_figure(fig: Figure, path: str | os.PathLike, dpi: int = DEFAULT_DPI) -> Path:
    """Write ``fig`` to ``path`` atomically, in the format named by the file extension.

    Inputs:
        fig: a matplotlib Figure.
        path: destination ending in ``.png``, ``.svg`` or ``.pdf`` (any letter case).
        dpi: dots per inch for PNG (200 is sharp on a 1080p projector); vector formats
            ignore it except for embedded images.
    Returns:
        the path written, as a ``Path``.

    The figure is rendered to memory first and then written with
    :func:`minibert.io.fileio.atomic_write_bytes`, so an interrupted save never leaves a
    half-written file.
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    path = Path(path)
    file_format = path.suffix.lower().lstrip(".")
    if file_format not in SAVE_FORMATS:
        raise ValueError(
            f"path must end in one of {', '.join('.' + f for f in SAVE_FORMATS)}; "
            f"got {str(path)!r} (extension {path.suffix!r})"
        )
    check_real("dpi", dpi, 0.0, above=True)
    buffer = io.BytesIO()
    # TrueType fonts in PDF (read when saving, not when drawing) keep text editable in slides.
    with matplotlib.rc_context({"pdf.fonttype": 42}):
        fig.savefig(buffer, format=file_format, dpi=dpi, bbox_inches="tight")
    atomic_write_bytes(path, buffer.getvalue())
    return path


def thin_labels(labels: Sequence[str], max_labels: int = 40) -> tuple[list[int], list[str]]:
    """Pick every k-th label so that at most ``max_labels`` are printed on one axis.

    Inputs:
        labels: one label per row or column (T,).
        max_labels: the most labels that stay legible on the axis.
    Returns:
        (positions, labels) of the labels to print; every ``ceil(T / max_labels)``-th one,
        starting at position 0, so all labels are printed when T <= max_labels.
    """
    check_int("max_labels", max_labels, minimum=1)
    stride = max(1, math.ceil(len(labels) / max_labels))
    positions = list(range(0, len(labels), stride))
    return positions, [labels[i] for i in positions]


def figure_size(
    width: float,
    height: float,
    max_size: tuple[float, float] = MAX_FIGURE_SIZE,
    min_size: tuple[float, float] = (4.0, 3.0),
    keep_aspect: bool = True,
) -> tuple[float, float]:
    """Clamp a wanted figure size (inches) into [min_size, max_size].

    Long inputs would ask for huge figures. With ``keep_aspect`` both sides shrink by the
    same factor, which keeps heatmap cells square; without it each side is clamped alone
    (for stretchable images and line plots).
    """
    if keep_aspect:
        scale = min(1.0, max_size[0] / width, max_size[1] / height)
        width, height = width * scale, height * scale
    else:
        width, height = min(width, max_size[0]), min(height, max_size[1])
    return max(min_size[0], width), max(min_size[1], height)
