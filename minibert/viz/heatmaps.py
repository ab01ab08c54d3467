"""Attention heatmaps for lectures: one head, one layer, the whole model, one token,
the head average and attention rollout, all through :func:`attention_figure`.

Arguments count layers and heads from 0 (``layer``, ``head``, the ``attention`` command's
``--layer``/``--head``), matching ``out.attentions[layer][:, head]`` and the HuggingFace
indices. Titles use the same numbers ("layer 1 · head 0" is ``layer=1, head=0``), with
the array they show (``out.attentions[1][:, 0]``) and the model's size in small type
underneath. Rows are queries, columns are keys. The numbers drawn come from the pure functions in
:mod:`minibert.viz.attention`, so they can be checked without a plot.

Projector rules every view follows: every token is labelled up to ``max_labels`` (40) tokens,
in a smaller font when the axis is short, never every other one; the colour scale is 0 to 1
unless asked otherwise (``vmax``), and a stretched scale is stated on the colour bar.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from minibert.checks import check_int, check_real
from minibert.viz.attention import (
    SPECIAL_TOKENS,
    AttentionDisplay,
    attention_example,
    attention_rollout,
    check_index,
    find_token,
    for_display,
    head_average,
    token_attention,
)
from minibert.viz.style import (
    ATTENTION_CMAP,
    MAX_FIGURE_SIZE,
    figure_size,
    lecture_style,
    thin_labels,
)

__all__ = ["VIEWS", "TOKEN_DIRECTIONS", "attention_figure", "color_scale", "tick_fontsize"]

VIEWS = ("head", "layer", "model", "token", "average", "rollout")
TOKEN_DIRECTIONS = ("both", "attends_to", "attended_by")

# Which of layer / head / token each view uses; "required" ones must be given.
_VIEW_ARGUMENTS = {
    "head": {"required": ("layer", "head"), "optional": ()},
    "layer": {"required": ("layer",), "optional": ()},
    "model": {"required": (), "optional": ()},
    "token": {"required": ("token",), "optional": ()},
    "average": {"required": (), "optional": ("layer",)},
    "rollout": {"required": (), "optional": ("layer",)},
}

_CELL_INCHES = 0.4  # one token row in a single heatmap, when it fits on the slide
_LABEL_INCHES = 0.2  # room one tick label needs (13 pt text plus a gap)
_MAX_TICK_POINTS = 13.0  # the lecture style's tick labels
_MIN_TICK_POINTS = 6.0  # still legible on a projected 1080p slide


def _check_view_arguments(view: str, given: dict) -> None:
    """Raise when a view misses an argument it needs or gets one it would ignore."""
    spec = _VIEW_ARGUMENTS[view]
    for name in spec["required"]:
        if given[name] is None:
            raise ValueError(f"view={view!r} needs {name}=...; got {name}=None")
    for name, value in given.items():
        if value is not None and name not in spec["required"] + spec["optional"]:
            raise ValueError(
                f"view={view!r} does not use {name} (got {name}={value!r}); "
                f"it uses: {', '.join(spec['required'] + spec['optional']) or 'none of them'}"
            )


def color_scale(matrices: np.ndarray, vmax) -> tuple[Normalize, str]:
    """The colour scale shared by every panel of a figure, and a note for its colour bar.

    Inputs:
        matrices: every value the figure draws.
        vmax: ``1.0`` (the default of every view: probabilities on their whole range, so
            that equal colours mean equal probabilities in every figure), another number
            > 0, or ``"auto"`` for the largest value drawn.
    Returns:
        (Normalize from 0 to the top, note): the note is ``""`` on the fixed 0-1 scale and
        otherwise states the top, so a stretched near-uniform map never passes for structure.
    """
    if isinstance(vmax, str):
        if vmax != "auto":
            raise ValueError(f"vmax must be a number > 0 or 'auto', got {vmax!r}")
        top = float(matrices.max()) if matrices.size else 1.0
        top = top if top > 0 else 1.0
    else:
        top = check_real("vmax", vmax, 0.0, above=True)
    note = "" if top == 1.0 else f"colour scale 0 to {top:.3g}, not 0 to 1"
    return Normalize(vmin=0.0, vmax=top), note


def _colorbar_label(label: str, note: str) -> str:
    return f"{label}\n({note})" if note else label


def tick_fontsize(n_labels: int, axis_inches: float) -> float:
    """Points for ``n_labels`` tick labels sharing ``axis_inches``: 13 pt when they fit,
    smaller down to 6 pt so that every token keeps its label rather than every other one."""
    if n_labels == 0:
        return _MAX_TICK_POINTS
    points = 0.85 * 72.0 * axis_inches / n_labels  # a label's room, minus a gap
    return float(min(_MAX_TICK_POINTS, max(_MIN_TICK_POINTS, points)))


def _segment_boundaries(token_type_ids: Sequence[int] | None) -> list[int]:
    """Indices k where sentence B starts (token_type_ids changes between k - 1 and k)."""
    if token_type_ids is None:
        return []
    return [k for k in range(1, len(token_type_ids)) if token_type_ids[k] != token_type_ids[k - 1]]


def _separator(ax: Axes, boundary: int) -> None:
    """A cased line (white under black) between segments: visible on any cell colour."""
    for color, width in (("white", 3.0), ("black", 1.2)):
        ax.axhline(boundary - 0.5, color=color, linewidth=width)
        ax.axvline(boundary - 0.5, color=color, linewidth=width)


def _annotate(ax: Axes, matrix: np.ndarray, norm: Normalize, cmap: str) -> None:
    """Print each value in its cell, dark on light cells and light on dark ones."""
    colors = colormaps[cmap](norm(matrix))  # (K, K, 4)
    # Rec. 709 luma of the cell colour decides the text colour.
    luma = colors[..., :3] @ np.array([0.2126, 0.7152, 0.0722])  # (K, K)
    fontsize = 11 if matrix.shape[-1] <= 12 else 8
    for (i, j), value in np.ndenumerate(matrix):
        ax.text(
            j,
            i,
            f"{value:.2f}",
            ha="center",
            va="center",
            fontsize=fontsize,
            color="black" if luma[i, j] > 0.5 else "white",
        )


def _label_axes(
    ax: Axes,
    rows: Sequence[str] | None,
    cols: Sequence[str] | None,
    max_labels: int,
    axis_inches: float,
) -> None:
    """Token labels on the axes, every one up to ``max_labels`` (then every k-th), in a font
    small enough to fit ``axis_inches``; None hides that axis' labels."""
    count = min(max_labels, len(rows if rows is not None else cols or []))
    fontsize = tick_fontsize(count, axis_inches)
    if cols is None:
        ax.set_xticks([])
    else:
        positions, labels = thin_labels(cols, max_labels)
        ax.set_xticks(positions, labels, rotation=90, fontsize=fontsize)
    if rows is None:
        ax.set_yticks([])
    else:
        positions, labels = thin_labels(rows, max_labels)
        ax.set_yticks(positions, labels, fontsize=fontsize)
    ax.tick_params(length=2)


def _heatmap(
    ax: Axes,
    matrix: np.ndarray,
    display: AttentionDisplay,
    norm: Normalize,
    cmap: str,
    max_labels: int,
    axis_inches: float,
    annotate: bool,
    rows: bool = True,
    cols: bool = True,
):
    """Draw one (K, K) matrix with its labels and segment separators; return the image."""
    image = ax.imshow(matrix, cmap=cmap, norm=norm, interpolation="nearest", aspect="equal")
    _label_axes(
        ax,
        display.labels if rows else None,
        display.labels if cols else None,
        max_labels,
        axis_inches,
    )
    for boundary in _segment_boundaries(display.token_type_ids):
        _separator(ax, boundary)
    if annotate:
        _annotate(ax, matrix, norm, cmap)
    return image


def _single_heatmap(
    display, title, subtitle, colorbar_label, cmap, vmax, annotate, max_labels, max_size
) -> Figure:
    """One (K, K) heatmap: the title in words, the array it shows in small type below it."""
    matrix = display.matrices  # (K, K)
    side = len(display.labels) * _CELL_INCHES
    wanted = (side + 3.5, side + 2.5)  # room for labels, titles and the colour bar
    width, height = figure_size(*wanted, max_size)
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot()
    norm, note = color_scale(matrix, vmax)
    axis_inches = side * min(width / wanted[0], height / wanted[1])
    image = _heatmap(ax, matrix, display, norm, cmap, max_labels, axis_inches, annotate)
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query (attending)")
    fig.suptitle(title)
    if subtitle:
        ax.set_title(subtitle, fontsize=13, color="0.3")
    fig.colorbar(image, ax=ax, label=_colorbar_label(colorbar_label, note), shrink=0.8)
    return fig


def _grid(
    display,
    panel_titles,
    title,
    colorbar_label,
    cmap,
    vmax,
    annotate,
    max_labels,
    max_size,
) -> Figure:
    """Small multiples: one (K, K) heatmap per panel, one shared colour bar, no empty cell.

    Labels are printed on the left column and bottom row only, every token up to
    ``max_labels``, in the font size that fits a panel. The "compressed" layout packs the
    square panels and their title together, so no blank band opens under the title.
    """
    matrices = display.matrices  # (panels, K, K)
    n_panels, size = matrices.shape[0], len(display.labels)
    n_cols = math.ceil(math.sqrt(n_panels))
    n_rows = math.ceil(n_panels / n_cols)
    panel = min(4.0, max(2.0, size * _LABEL_INCHES))
    label_room, colorbar_room = 1.8, 1.5
    wanted_width = n_cols * panel + label_room + colorbar_room
    wanted_height = n_rows * (panel + 0.45) + label_room + 0.7
    width, height = figure_size(wanted_width, wanted_height, max_size)
    fig = Figure(figsize=(width, height), layout="compressed")
    # Exactly n_panels axes: a last row with fewer panels is left-aligned, with no blank cell.
    grid = fig.add_gridspec(n_rows, n_cols)
    axes = [fig.add_subplot(grid[index // n_cols, index % n_cols]) for index in range(n_panels)]
    axis_inches = panel * min(width / wanted_width, height / wanted_height)
    norm, note = color_scale(matrices, vmax)
    image = None
    for index, ax in enumerate(axes):
        left_column = index % n_cols == 0
        bottom = index + n_cols >= n_panels  # no panel below this one
        image = _heatmap(
            ax,
            matrices[index],
            display,
            norm,
            cmap,
            max_labels,
            axis_inches,
            annotate,
            rows=left_column,
            cols=bottom,
        )
        ax.set_title(panel_titles[index], fontsize="medium")
    fig.suptitle(title)
    fig.colorbar(image, ax=axes, label=_colorbar_label(colorbar_label, note), shrink=0.6)
    return fig


def _model_grid(display, title, cmap, vmax, max_size) -> Figure:
    """Layers as rows, heads as columns: the (L, N) small multiples, no token labels.

    The margins are fixed in inches instead of solved by a layout engine, which would take
    longer than drawing the 144 panels of BERT-base.
    """
    matrices = display.matrices  # (L, N, K, K)
    n_layers, n_heads = matrices.shape[:2]
    panel = min(2.0, max(0.8, len(display.labels) * 0.08))
    left, right, top, bottom, gap = 1.0, 1.9, 0.8, 0.2, 0.08  # inches
    width, height = figure_size(
        left + right + n_heads * (panel + gap), top + bottom + n_layers * (panel + gap), max_size
    )
    fig = Figure(figsize=(width, height))
    axes = fig.subplots(
        n_layers,
        n_heads,
        squeeze=False,
        gridspec_kw={
            "left": left / width,
            "right": 1 - right / width,
            "top": 1 - top / height,
            "bottom": bottom / height,
            "wspace": 0.08,
            "hspace": 0.08,
        },
    )
    norm, note = color_scale(matrices, vmax)
    image = None
    for (layer, head), ax in np.ndenumerate(axes):
        image = ax.imshow(matrices[layer, head], cmap=cmap, norm=norm, interpolation="nearest")
        ax.set_xticks([])
        ax.set_yticks([])
        if layer == 0:
            ax.set_title(f"head {head}", fontsize="small")
        if head == 0:
            ax.set_ylabel(f"layer {layer}", fontsize="small")
    fig.suptitle(title, y=1 - 0.1 / height, va="top")
    colorbar_axes = fig.add_axes((1 - (right - 0.3) / width, 0.25, 0.25 / width, 0.5))
    fig.colorbar(
        image, cax=colorbar_axes, label=_colorbar_label("attention probability", note)
    )
    return fig


def _token_panels(display, index, direction, title, cmap, vmax, max_labels, max_size) -> Figure:
    """Token view: for the chosen token, a (L * N, K) image per direction, layer by layer."""
    attends_to, attended_by = token_attention(display.matrices, index)  # (L, N, K) each
    n_layers, n_heads, size = attends_to.shape
    label = display.labels[index]
    panels = {
        "attends_to": (attends_to, f"What {label!r} attends to"),
        "attended_by": (attended_by, f"What attends to {label!r}"),
    }
    shown = list(panels) if direction == "both" else [direction]
    width, height = figure_size(
        len(shown) * (size * 0.3 + 2.5) + 1.5,
        n_layers * n_heads * 0.15 + 3.5,
        max_size,
        keep_aspect=False,
    )
    fig = Figure(figsize=(width, height), layout="constrained")
    axis_inches = (width - 1.5) / len(shown) - 2.5
    axes = fig.subplots(1, len(shown), squeeze=False)[0]
    norm, note = color_scale(np.stack([panels[name][0] for name in shown]), vmax)
    image = None
    for ax, name in zip(axes, shown, strict=True):
        values, panel_title = panels[name]
        image = ax.imshow(
            values.reshape(n_layers * n_heads, size),
            cmap=cmap,
            norm=norm,
            interpolation="nearest",
            aspect="auto",
        )
        positions, labels = thin_labels(display.labels, max_labels)
        if index not in positions:
            # Always name the chosen token: it takes the place of the nearest printed label.
            nearest = min(range(len(positions)), key=lambda k: abs(positions[k] - index))
            positions[nearest], labels[nearest] = index, label
        ax.set_xticks(
            positions, labels, rotation=90, fontsize=tick_fontsize(len(positions), axis_inches)
        )
        for tick, position in zip(ax.get_xticklabels(), positions, strict=True):
            if position == index:
                tick.set_fontweight("bold")
        # One block of N rows per layer, head 0 on top; label the block centres.
        ax.set_yticks(
            [layer * n_heads + (n_heads - 1) / 2 for layer in range(n_layers)],
            [f"layer {layer}" for layer in range(n_layers)],
        )
        for layer in range(1, n_layers):
            ax.axhline(layer * n_heads - 0.5, color="white", linewidth=1.5)
        ax.set_xlabel("key (attended to)" if name == "attends_to" else "query (attending)")
        ax.set_title(panel_title)
    if n_heads > 1:
        axes[0].set_ylabel(f"heads 0 to {n_heads - 1}, top to bottom")
    fig.suptitle(title or f"{label!r} in all {n_layers} layers × {n_heads} heads")
    fig.colorbar(
        image, ax=axes, label=_colorbar_label("attention probability", note), shrink=0.8
    )
    return fig


def _size_words(n_layers: int, n_heads: int) -> str:
    """'2 layers × 2 heads, counted from 0': the model's size under a title that indexes it."""
    return f"{n_layers} layers × {n_heads} heads, counted from 0"


def attention_figure(
    attentions,
    tokens: Sequence[str],
    view: str = "head",
    layer: int | None = None,
    head: int | None = None,
    token: str | int | None = None,
    token_type_ids=None,
    attention_mask=None,
    hide_special="keep",
    merge_pieces: bool = False,
    span: tuple[int, int] | None = None,
    drop_padding: bool = True,
    direction: str = "both",
    batch_index: int = 0,
    annotate: bool = False,
    vmax: float | str = 1.0,
    cmap: str = ATTENTION_CMAP,
    max_labels: int = 40,
    max_size: tuple[float, float] = MAX_FIGURE_SIZE,
    title: str | None = None,
    special_tokens: Sequence[str] = SPECIAL_TOKENS,
) -> Figure:
    """Draw attention probabilities as a heatmap figure for slides.

    Inputs:
        attentions: ``out.attentions``, a tuple of L arrays (B, N, T, T) (one per layer), or
            one example's (L, N, T, T) stack.
        tokens: (T,) WordPiece tokens, padding included, e.g. from
            ``tokenizer.convert_ids_to_tokens(input_ids[0])``.
        view: what to draw:
            ``"head"``    one head (needs layer and head), title "layer 1 · head 0";
            ``"layer"``   every head of one layer as a grid (needs layer);
            ``"model"``   layers as rows and heads as columns, small multiples;
            ``"token"``   what one token attends to and what attends to it, in every
                          layer and head (needs token; see ``direction``);
            ``"average"`` the mean over heads, of one layer or of every layer;
            ``"rollout"`` attention rollout up to a layer (the last one by default).
        layer, head: counted from 0, as in ``out.attentions[layer][:, head]``; titles use
            the same numbers and show the array underneath.
        token: for ``view="token"``, a token as shown (a word when ``merge_pieces``; the
            first occurrence) or an int position in ``tokens``.
        token_type_ids: optional (T,) or (B, T); a line is drawn between sentences A and B.
        attention_mask: optional (T,) or (B, T), 1 = real token. Padding is dropped (see
            ``drop_padding``), found from this mask or else from the ``'[PAD]'`` tokens.
        hide_special: ``"keep"``, ``"hide"`` (drop [CLS]/[SEP] rows and columns) or
            ``"renormalize"`` (drop them and rescale rows to sum to 1); True means "hide".
        merge_pieces: merge word pieces into words: attention to a word sums its pieces'
            columns, attention from a word averages its pieces' rows.
        span: optional (start, stop) positions in ``tokens`` to zoom into (stop excluded).
        drop_padding: False keeps the padded rows and columns (their keys are exactly 0:
            useful to show that the mask works).
        direction: token view panels: ``"both"``, ``"attends_to"`` or ``"attended_by"``.
        batch_index: which example of the batch to draw.
        annotate: print each value in its cell (for small inputs).
        vmax: top of the colour scale, shared by all panels of the figure: 1.0 by default,
            so equal colours are equal probabilities in every figure and a near-uniform map
            looks uniform; a smaller number or ``"auto"`` (the largest value drawn)
            stretches it, and the colour bar then says so.
        cmap: colour map name; the default cividis reads in grayscale (see viz_style).
        max_labels: most token labels per axis: every token is labelled up to this many
            (the font shrinks to fit), longer inputs print every k-th label.
        max_size: largest figure size (inches); long inputs shrink the cells to fit.
        title: replaces the default title.
        special_tokens: the tokens ``hide_special`` acts on.
    Returns:
        a ``matplotlib.figure.Figure`` (not registered with pyplot: save it with
        :func:`minibert.viz.style.save_figure`, or let a notebook display it).

    Order of operations: padding is dropped, then the view's matrices are computed on the
    real tokens (so rollout flows through [CLS] and [SEP]), then special tokens are
    hidden or renormalized, word pieces merged and the span cropped.
    """
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    if direction not in TOKEN_DIRECTIONS:
        raise ValueError(
            f"direction must be one of {', '.join(TOKEN_DIRECTIONS)}, got {direction!r}"
        )
    check_int("max_labels", max_labels, minimum=1)
    if cmap not in colormaps:
        raise ValueError(f"cmap must be a matplotlib colour map name, got {cmap!r}")
    _check_view_arguments(view, {"layer": layer, "head": head, "token": token})
    example = attention_example(
        attentions, tokens, token_type_ids, attention_mask, batch_index, drop_padding
    )
    n_layers, n_heads = example.attentions.shape[:2]
    if layer is not None:
        layer = check_index(
            layer, "layer", n_layers, f"counted from 0; the model has {n_layers} layers"
        )
    if head is not None:
        head = check_index(head, "head", n_heads, f"counted from 0; each layer has {n_heads} heads")

    def display_of(matrices: np.ndarray) -> AttentionDisplay:
        return for_display(matrices, example, hide_special, merge_pieces, span, special_tokens)

    # How the single and grid views draw their heatmaps (the same for every view).
    drawing = {"cmap": cmap, "vmax": vmax, "annotate": annotate, "max_labels": max_labels,
               "max_size": max_size}
    size = _size_words(n_layers, n_heads)  # "2 layers × 4 heads, counted from 0"
    with lecture_style():
        if view == "head":
            return _single_heatmap(display_of(example.attentions[layer, head]),
                                   title or f"layer {layer} · head {head}",
                                   f"out.attentions[{layer}][:, {head}] · {size}",
                                   "attention probability", **drawing)
        if view == "layer":
            return _grid(display_of(example.attentions[layer]),
                         [f"head {h}" for h in range(n_heads)],
                         title or f"layer {layer}: its {n_heads} heads (counted from 0)",
                         "attention probability", **drawing)
        if view == "model":
            return _model_grid(display_of(example.attentions), title or f"All {size}", cmap,
                               vmax, max_size)
        if view == "token":
            display = display_of(example.attentions)
            index = find_token(display, token)
            return _token_panels(display, index, direction, title, cmap, vmax, max_labels, max_size)
        if view == "average":
            averaged = head_average(example.attentions)  # (L, T, T)
            if layer is not None:
                return _single_heatmap(display_of(averaged[layer]),
                                       title or f"layer {layer} · mean of its {n_heads} heads",
                                       f"out.attentions[{layer}].mean(axis=1) · {size}",
                                       "mean attention over heads", **drawing)
            return _grid(display_of(averaged), [f"layer {l}" for l in range(n_layers)],
                         title or f"Mean of {n_heads} heads in each layer, layers 0 to "
                                  f"{n_layers - 1}",
                         "mean attention over heads", **drawing)
        last = n_layers - 1 if layer is None else layer
        return _single_heatmap(display_of(attention_rollout(example.attentions)[last]),
                               title or f"Attention rollout through layers 0 to {last}",
                               f"attention_rollout(...)[{last}] · {size}", "rollout weight",
                               **drawing)
