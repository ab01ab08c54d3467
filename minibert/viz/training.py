"""Training curves from the trainer's history: losses, masked-LM and next-sentence accuracy
and the learning rate, with training steps and held-out evaluations told apart.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from minibert.checks import is_real
from minibert.viz.style import MAX_FIGURE_SIZE, figure_size, lecture_style

__all__ = ["HISTORY_PANELS", "history_series", "training_curves_figure"]

# (panel title, history keys drawn in it, y-axis label); a panel with no data is left out.
HISTORY_PANELS = (
    ("Loss", ("loss", "masked_lm_loss", "next_sentence_loss"), "cross-entropy"),
    ("Masked LM accuracy", ("masked_lm_accuracy",), "accuracy"),
    ("Next sentence accuracy", ("next_sentence_accuracy",), "accuracy"),
    ("Learning rate", ("lr",), "learning rate"),
    ("Gradient norm", ("grad_norm",), "global L2 norm"),
)
# The loss a run minimises is the sum (MLM + the weighted next-sentence loss); each task's
# own loss is drawn beside it, so each label says which one a curve is.
_KEY_NAMES = {"loss": "MLM + NSP (minimised)", "masked_lm_loss": "masked LM alone",
              "next_sentence_loss": "next sentence alone"}
_SPLIT_NAMES = {"heldout": "held-out"}
_PLOTTED_KEYS = {key for _, keys, _ in HISTORY_PANELS for key in keys}
# Training is a solid line; evaluations are sparse points, so they get markers and dashes.
# Line style, not only colour, tells them apart in grayscale.
_SPLIT_STYLES = [
    {"linestyle": "--", "marker": "o"},
    {"linestyle": ":", "marker": "s"},
    {"linestyle": "-.", "marker": "^"},
]


def _as_number(value) -> float | None:
    """A plain float from a Python or NumPy scalar (NaN for inf); None for anything else."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if not is_real(value):
        return None
    return float(value) if math.isfinite(value) else math.nan


def history_series(history: Sequence[Mapping]) -> dict[str, dict[str, tuple[np.ndarray, ...]]]:
    """Turn the trainer's list of logged dicts into one (steps, values) series per key and split.

    Inputs:
        history: a list of dicts, one per logged step, e.g. ``{"step": 10, "loss": 9.1,
            "lr": 1e-4, "masked_lm_accuracy": 0.1, "split": "train"}``. Missing keys are
            fine: ``"split"`` defaults to ``"train"``, ``"step"`` to the entry's index in
            the list, and a metric missing from an entry is simply not drawn there.
            Non-numeric values of keys that are not plotted (a time stamp, a file name) are
            ignored; a NaN or infinite value (a diverged run) is kept as NaN, a gap in the line.
    Returns:
        ``series[key][split] = (steps, values)``, two (n,) float arrays sorted by step.
    """
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
        raise TypeError(f"history must be a list of dicts, got {type(history).__name__}")
    collected: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for index, entry in enumerate(history):
        if not isinstance(entry, Mapping):
            raise TypeError(f"history[{index}] must be a dict, got {type(entry).__name__}")
        step = entry.get("step", index)
        if not is_real(step):
            raise TypeError(f"history[{index}]['step'] must be a number, got {step!r}")
        split = entry.get("split", "train")
        if not isinstance(split, str):
            raise TypeError(f"history[{index}]['split'] must be a str, got {split!r}")
        for key, value in entry.items():
            if key in ("step", "split") or value is None:
                continue
            value = _as_number(value)
            if value is None:
                if key in _PLOTTED_KEYS:
                    raise TypeError(
                        f"history[{index}][{key!r}] must be a number, got {entry[key]!r}"
                    )
                continue
            collected.setdefault(key, {}).setdefault(split, []).append((float(step), value))
    series: dict[str, dict[str, tuple[np.ndarray, ...]]] = {}
    for key, splits in collected.items():
        series[key] = {}
        for split, points in splits.items():
            points.sort(key=lambda point: point[0])
            steps, values = zip(*points, strict=True)
            series[key][split] = (np.array(steps), np.array(values))
    return series


def _split_order(split: str) -> tuple[int, str]:
    """Training first, then the evaluation splits alphabetically."""
    return (split != "train", split)


def _split_style(split: str, evaluation_splits: list[str]) -> dict:
    """Training thin and light underneath; each evaluation split drawn on top of it, thick,
    with its own dashes and white-edged markers, so held-out points stay visible."""
    if split == "train":
        return {"linestyle": "-", "linewidth": 1.6, "alpha": 0.55, "zorder": 2}
    style = _SPLIT_STYLES[evaluation_splits.index(split) % len(_SPLIT_STYLES)]
    return {**style, "linewidth": 2.8, "markeredgecolor": "white", "zorder": 3}


def _constant_lr(series: dict) -> float | None:
    """The learning rate when it never changed (one number), else None."""
    values = np.concatenate([values for _, values in series.get("lr", {}).values()])
    finite = values[np.isfinite(values)]
    if finite.size and np.all(finite == finite[0]):
        return float(finite[0])
    return None


def _panel_layout(n_panels: int) -> list[list[int]]:
    """A mosaic with no empty cell: 2 columns up to 4 panels, then 3; when the grid has a
    spare cell, the first panel (the loss, the one a lecture talks about) takes it."""
    n_cols = 1 if n_panels == 1 else 2 if n_panels <= 4 else 3
    n_rows = math.ceil(n_panels / n_cols)
    spare = n_rows * n_cols - n_panels
    cells = [0] * (spare + 1) + list(range(1, n_panels))
    return [cells[row * n_cols : (row + 1) * n_cols] for row in range(n_rows)]


def _lr_axis(ax, steps_values: dict) -> None:
    """Plot the learning rate in units of its power of ten: "learning rate (× 1e-3)" on the
    axis label, plain ticks (no offset text floating above the axis)."""
    top = max(float(np.nanmax(np.abs(values))) for _, values in steps_values.values())
    exponent = math.floor(math.log10(top)) if top > 0 else 0
    for split, (steps, values) in steps_values.items():
        ax.plot(steps, values / 10.0**exponent, label=split, linestyle="-")
    ax.set_ylabel(f"learning rate (× 1e{exponent})" if exponent else "learning rate")


def training_curves_figure(
    history: Sequence[Mapping],
    title: str | None = None,
    max_size: tuple[float, float] = MAX_FIGURE_SIZE,
) -> Figure:
    """Plot losses, masked-LM and next-sentence accuracy, learning rate and gradient norm.

    Inputs:
        history: the trainer's list of logged dicts (see :func:`history_series`).
        title: optional figure title.
        max_size: largest figure size (inches).
    Returns:
        a ``matplotlib.figure.Figure`` with one panel per quantity present in the history
        and no empty cell (the loss panel widens to fill the grid). Training is drawn thin
        and light, each evaluation split thick and dashed with markers on top of it. A
        learning rate that never changed gets no panel: its value goes into the title.
    """
    series = history_series(history)
    constant_lr = _constant_lr(series) if "lr" in series else None
    panels = [
        panel
        for panel in HISTORY_PANELS
        if any(key in series for key in panel[1]) and not (panel[1] == ("lr",) and constant_lr)
    ]
    if not panels:
        wanted = ", ".join(sorted(_PLOTTED_KEYS))
        found = ", ".join(sorted(series)) or "nothing numeric"
        raise ValueError(f"history has none of the keys {wanted}; it holds {found}")
    evaluation_splits = sorted(
        {split for splits in series.values() for split in splits if split != "train"}
    )
    layout = _panel_layout(len(panels))
    n_rows, n_cols = len(layout), len(layout[0])
    with lecture_style():
        fig = Figure(
            figsize=figure_size(6.5 * n_cols, 4.5 * n_rows, max_size, keep_aspect=False),
            layout="constrained",
        )
        mosaic = fig.subplot_mosaic(layout)
        colors = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        for index, (panel_title, keys, ylabel) in enumerate(panels):
            ax = mosaic[index]
            ax.set_ylabel(ylabel)
            if keys == ("lr",):
                _lr_axis(ax, series["lr"])
            for color, key in zip(colors, keys, strict=False):
                if key == "lr":
                    continue
                for split in sorted(series.get(key, {}), key=_split_order):
                    steps, values = series[key][split]
                    shown = _SPLIT_NAMES.get(split, split)
                    name = shown if len(keys) == 1 else f"{_KEY_NAMES.get(key, key)} · {shown}"
                    ax.plot(
                        steps,
                        values,
                        color=color,
                        label=name,
                        **_split_style(split, evaluation_splits),
                    )
            ax.set_title(panel_title)
            ax.set_xlabel("step")
            ax.grid(alpha=0.3)
            ax.ticklabel_format(axis="both", useOffset=False)
            if ylabel == "accuracy":
                ax.set_ylim(0.0, max(1.02, ax.get_ylim()[1]))
            ax.legend()
        if constant_lr is not None:
            note = f"learning rate {constant_lr:g} throughout"
            title = f"{title} · {note}" if title else note
        if title is not None:
            fig.suptitle(title)
    return fig
