"""The pictures a lecturer draws on the board, drawn by code so that they are regenerated
with the model and never pasted: the input embedding as a sum, one encoder block as a
computation graph with shapes and the backward flow, the multi-head split and merge, a
bidirectional mask beside a causal one, the attention backward line by line, the
pretraining objective on one worked instance, learned position embeddings, and a
data-parallel step with its ring all-reduce.

Shapes use the dimension legend of the whole package: B batch, T tokens, H hidden size,
N heads, D head size (H/N), I intermediate size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from minibert.checks import check_int
from minibert.viz.attention import as_float_array
from minibert.viz.heatmaps import tick_fontsize
from minibert.viz.style import ATTENTION_CMAP, lecture_style

__all__ = [
    "embedding_sum_figure",
    "encoder_block_figure",
    "attention_backward_figure",
    "pretraining_objective_figure",
    "multihead_figure",
    "attention_masks_figure",
    "position_embeddings_figure",
    "data_parallel_figure",
    "ring_allreduce_figure",
]

_FORWARD, _BACKWARD, _RESIDUAL = "#000000", "#D55E00", "#0072B2"
ENCODER_TITLE = "One encoder block: forward (black), backward (dashed, vermillion)"
ATTENTION_BACKWARD_TITLE = "The attention backward: from dC to dV, dP, dS, dQ, dK"
OBJECTIVE_TITLE = "The pretraining objective: masked LM and NSP on one input"
_HEAD_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"]


def embedding_sum_figure(tokens: Sequence[str], word, segment, position, summed,
                         dims: int = 16) -> Figure:
    """Token + segment + position = the input of the first layer, one column per token.

    Inputs: tokens (T,); word, segment, position, summed: (T, H) vectors (the three table
    rows and their sum, before LayerNorm); dims: how many of the H dimensions to draw.
    """
    rows = {"token embedding": word, "segment embedding": segment,
            "position embedding": position, "sum (then LayerNorm)": summed}
    arrays = {name: as_float_array(value, name)[:, :dims].T for name, value in rows.items()}
    top = max(float(np.abs(a).max()) for a in arrays.values()) or 1.0
    width = max(8.0, 0.55 * len(tokens) + 3.0)
    with lecture_style():
        fig = Figure(figsize=(width, 9.0), layout="constrained")
        axes = fig.subplots(4, 1, sharex=True)
        for ax, (name, array), sign in zip(axes, arrays.items(), ["", "+", "+", "="],
                                           strict=True):
            image = ax.imshow(array, cmap="RdBu_r", vmin=-top, vmax=top, aspect="auto",
                              interpolation="nearest")
            ax.set_yticks([])
            ax.set_ylabel(f"{sign} {name}".strip(), rotation=0, ha="right", va="center")
            ax.set_xticks(range(len(tokens)), list(tokens), rotation=90,
                          fontsize=tick_fontsize(len(tokens), width - 3.0))
            ax.tick_params(axis="x", labelbottom=ax is axes[-1])
        hidden, shown = as_float_array(word, "word").shape[-1], len(arrays["token embedding"])
        label = (f"value (all H = {hidden} dimensions)" if shown == hidden
                 else f"value (first {shown} of H = {hidden} dimensions)")
        fig.colorbar(image, ax=axes, shrink=0.6, label=label)
        fig.suptitle("The input of layer 0: three table rows added, per token")
    return fig


def _box(ax, x, y, text, color="white", width=3.2, height=0.62, fontsize=12):
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                                boxstyle="round,pad=0.05", facecolor=color, edgecolor="black"))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, start, end, color, style="-", rad=0.0):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=20, color=color,
                                 linestyle=style, linewidth=2.5,
                                 connectionstyle=f"arc3,rad={rad}"))


def encoder_block_figure(hidden_size: int = 768, num_heads: int = 12,
                         intermediate_size: int = 3072, fontsize: float = 20) -> Figure:
    """One BERT encoder block as a computation graph, 16:9, for the board or a slide.

    Forward (black): x fans out to Q, K and V; only Q and K meet in the scores and the
    softmax, V is weighted by the probabilities; the output projection is added to x and
    normalized (a), and the feed-forward branch is added to a and normalized (y). Residual
    paths are blue. Backward (vermillion, dashed, labelled): the gradients that flow back,
    with the two sums the lesson is about: x receives dQ, dK, dV through their projections
    plus the residual's gradient, and each residual sum passes its gradient to both branches.
    Shapes use the package's dimension legend, filled in from the arguments.
    """
    hidden = check_int("hidden_size", hidden_size, minimum=1)
    heads = check_int("num_heads", num_heads, minimum=1)
    inter = check_int("intermediate_size", intermediate_size, minimum=1)
    head_size = hidden // heads
    size = float(fontsize)
    with lecture_style():
        fig = Figure(figsize=(12.8, 7.2))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, 12.8)
        ax.set_ylim(0, 7.2)
        ax.set_axis_off()
        ax.text(0.3, 6.85, ENCODER_TITLE, fontsize=size + 6, va="center", ha="left")

        def box(x, y, text, width, color="white"):
            _box(ax, x, y, text, color=color, width=width, height=0.6, fontsize=size)

        def label(x, y, text, color="black", **kwargs):
            ax.text(x, y, text, color=color, fontsize=size, va="center", **kwargs)

        def plus(x, y):
            ax.text(x, y, "+", color=_RESIDUAL, fontsize=size + 12, fontweight="bold",
                    ha="center", va="center")

        def dense_add_norm(y, start, dense_x, plus_x, norm_x, result):
            """A sublayer's end on row y: the arrow from x=start, dense, + residual,
            LayerNorm, '= result'."""
            box(dense_x, y, "dense", 1.2)
            _arrow(ax, (start, y), (dense_x - 0.65, y), _FORWARD)
            plus(plus_x, y)
            _arrow(ax, (dense_x + 0.65, y), (plus_x - 0.17, y), _FORWARD)
            box(norm_x, y, "LayerNorm", 2.0)
            _arrow(ax, (plus_x + 0.17, y), (norm_x - 1.05, y), _FORWARD)
            label(norm_x + 1.1, y, f"= {result}")

        # Attention sublayer, top row: x fans out to Q, K and V (three gradients come back).
        row, q_row, v_row = 4.9, 5.9, 3.9
        box(0.75, row, "x", 0.8)
        for name, y in (("Q", q_row), ("K", row), ("V", v_row)):
            box(2.9, y, name, 0.8)
            _arrow(ax, (1.2, row + 0.1), (2.45, y + 0.1), _FORWARD)
            _arrow(ax, (2.45, y - 0.12), (1.2, row - 0.12), _BACKWARD, style="--")
        label(1.35, 5.7, "dQ", _BACKWARD)
        label(1.8, 4.55, "dK", _BACKWARD)
        label(1.2, 3.85, "dV", _BACKWARD)
        box(5.45, 5.4, "P = softmax(QKᵀ/√D)", 3.4)
        _arrow(ax, (3.35, q_row), (3.7, 5.5), _FORWARD)
        _arrow(ax, (3.35, row), (3.7, 5.3), _FORWARD)
        box(5.65, v_row, "P V, merge heads", 2.9)
        _arrow(ax, (3.35, v_row), (4.15, v_row), _FORWARD)
        _arrow(ax, (6.1, 5.05), (6.1, 4.25), _FORWARD)
        dense_add_norm(v_row, 7.15, dense_x=7.95, plus_x=8.95, norm_x=10.5, result="a")
        # Residual x -> the first sum, over the top.
        _arrow(ax, (0.75, row + 0.35), (8.95, v_row + 0.3), _RESIDUAL, rad=-0.42)
        label(7.9, 6.45, "residual: x + attention(x)", _RESIDUAL)
        label(0.3, 3.1, "dx = dQ·W_Q + dK·W_K + dV·W_V + d(x+attn)", _BACKWARD)
        label(7.1, 3.1, "each + copies its gradient", _BACKWARD)
        label(7.1, 2.72, "to both of its inputs", _BACKWARD)
        # Feed-forward sublayer, bottom row.
        low = 2.0
        box(0.75, low, "a", 0.8)
        box(3.05, low, "dense, GELU", 2.2)
        _arrow(ax, (1.2, low), (1.9, low), _FORWARD)
        dense_add_norm(low, 4.2, dense_x=5.45, plus_x=6.75, norm_x=8.35,
                       result="y, to the next block")
        _arrow(ax, (0.75, low - 0.35), (6.75, low - 0.3), _RESIDUAL, rad=0.22)
        label(7.0, 1.3, "residual: a + FFN(a)", _RESIDUAL)
        label(1.3, 2.55, "da = d(a+FFN(a)) + d(FFN branch)", _BACKWARD)
        # Shapes, from the arguments.
        shapes = [("x, a, y", f"(B, T, H={hidden})"),
                  ("Q, K, V", f"(B, N={heads}, T, D={head_size})"),
                  ("P", "(B, N, T, T)"), ("GELU", f"(B, T, I={inter})")]
        for index, (name, shape) in enumerate(shapes):
            x, y = 0.3 + 5.4 * (index % 2), 0.75 - 0.45 * (index // 2)
            label(x, y, name)
            label(x + 1.35, y, shape, family="monospace")
    return fig


def _slide_canvas(title: str, size: float):
    """A 12.8 x 7.2 inch figure with one axes in inches over all of it, and its title."""
    fig = Figure(figsize=(12.8, 7.2))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 12.8)
    ax.set_ylim(0, 7.2)
    ax.set_axis_off()
    ax.text(0.3, 6.85, title, fontsize=size + 6, va="center", ha="left", fontweight="bold")
    return fig, ax


def attention_backward_figure(fontsize: float = 20) -> Figure:
    """The backward of scaled dot-product attention, each line beside the forward line it
    inverts, 16:9, for the board or a slide (docs/backprop.md, section "attention").

    Forward (black, top down): S = QKᵀ/√D, P = softmax(S) per query row, C = PV. Backward
    (vermillion, bottom up): dV = Pᵀ dC and dP = dC Vᵀ; the softmax Jacobian of one row,
    ∂pᵢ/∂sⱼ = pᵢ(δᵢⱼ − pⱼ), which collapses to dSᵢ = pᵢ ⊙ (dPᵢ − pᵢ·dPᵢ); dQ = dS K/√D and
    dK = dSᵀQ/√D. Notes: the 1/√D, the masked keys, and why the key bias gets exactly 0.
    """
    size = float(fontsize)
    with lecture_style():
        fig, ax = _slide_canvas(ATTENTION_BACKWARD_TITLE, size)

        def line(x, y, text, color="black", **kwargs):
            ax.text(x, y, text, fontsize=size + 2, color=color, va="center", **kwargs)

        ax.text(0.3, 6.2, "forward (cached: Q, K, V, P)", fontsize=size,
                fontweight="bold", va="center")
        ax.text(5.7, 6.2, "backward, from the last line up", fontsize=size,
                fontweight="bold", va="center", color=_BACKWARD)
        rows = [  # (forward, its shape, the backward of that line)
            (r"$S = QK^\top/\sqrt{D}$", "(B, N, T, T)",
             r"$dQ = dS\,K/\sqrt{D},\quad dK = dS^\top Q/\sqrt{D}$"),
            (r"$P = \mathrm{softmax}(S)$ per row", "(B, N, T, T)",
             r"$dS_i = p_i \odot (dP_i - p_i \cdot dP_i)$"),
            (r"$C = P\,V$", "(B, N, T, D)",
             r"$dV = P^\top dC,\quad dP = dC\,V^\top$"),
        ]
        ys = (5.55, 4.65, 3.75)
        for (forward, shape, backward), y in zip(rows, ys, strict=True):
            line(0.3, y, forward)
            ax.text(0.3, y - 0.37, shape, fontsize=size, color="0.35", va="center",
                    family="monospace")
            line(5.7, y, backward, _BACKWARD)
        for upper, lower in zip(ys[:-1], ys[1:], strict=True):
            _arrow(ax, (4.55, upper - 0.2), (4.55, lower + 0.2), _FORWARD)
            _arrow(ax, (5.4, lower + 0.2), (5.4, upper - 0.2), _BACKWARD, style="--")
        ax.text(0.3, 2.85, r"softmax Jacobian of query row $i$:  $\partial p_{ij}/\partial s_{ik}"
                r" = p_{ij}(\delta_{jk} - p_{ik})$, i.e. $\mathrm{diag}(p_i) - p_i p_i^\top$;",
                fontsize=size, va="center")
        ax.text(0.3, 2.45, "times dPᵢ it collapses to the line above: no T × T matrix per row.",
                fontsize=size, va="center")
        notes = ["1/√D: S was scaled, so dQ and dK are scaled too (dV is not).",
                 "A masked key has p = 0, so its dS is 0: the mask needs no backward.",
                 "Each row of dS sums to 0, so the key bias gets exactly 0 gradient."]
        for index, note in enumerate(notes):
            ax.text(0.3, 1.9 - 0.4 * index, "• " + note, fontsize=size, va="center",
                    color=_RESIDUAL)
    return fig


def pretraining_objective_figure(rows: Sequence[Mapping], next_sentence_label: int,
                                 not_next_share: float | None = None,
                                 fontsize: float = 20) -> Figure:
    """BERT's two pretraining losses on one worked instance, 16:9, for the board or a slide.

    Inputs:
        rows: one dict per position, as :func:`minibert.data.explain_rows` gives them
            (``position``, ``segment``, ``token``, ``input``, ``target``, ``branch``; the
            last two empty where the position is not an MLM target).
        next_sentence_label: 0 (IsNext) or 1 (NotNext), the instance's NSP label.
        not_next_share: the NotNext share of the held-out pairs of a run, stated as the
            accuracy an input-blind NSP head reaches; None leaves the line out.
    Left: segments A and B as the model reads them and the table of MLM targets (15%, the
    80/10/10 branch of each). Right: NSP, a linear layer on the pooled [CLS], 50/50 in
    Google's cut of the pairs, and why a corpus of short documents gives more NotNext.
    """
    label = check_int("next_sentence_label", next_sentence_label, minimum=0, maximum=1)
    rows = list(rows)
    targets = [row for row in rows if row.get("branch")]
    if not rows or not targets:
        raise ValueError("rows must describe an instance with at least one MLM target, got "
                         f"{len(rows)} rows and {len(targets)} targets")
    size = float(fontsize)
    with lecture_style():
        fig, ax = _slide_canvas(OBJECTIVE_TITLE, size)
        for segment, y in ((0, 6.05), (1, 5.5)):
            words = [row["input"] for row in rows if row["segment"] == segment
                     and row["input"] not in ("[CLS]", "[SEP]")]
            shown = " ".join(words[-11:])
            prefix = "… " if len(words) > 11 else ""
            ax.text(0.3, y, f"{'AB'[segment]}: {prefix}{shown}", fontsize=size, va="center",
                    family="monospace")
        ax.text(0.3, 4.85, f"Masked LM: 15% of {len(rows)} → {len(targets)} targets",
                fontsize=size, va="center",
                fontweight="bold", color=_RESIDUAL)
        header = ("pos.", "token", "reads", "branch")
        columns = (0.3, 1.3, 2.55, 4.25)
        for x, name in zip(columns, header, strict=True):
            ax.text(x, 4.35, name, fontsize=size, va="center", color="0.35")
        branch_names = {"[MASK]": "80%: [MASK]", "random": "10%: random",
                        "kept": "10%: kept"}
        for index, row in enumerate(targets[:6]):
            y = 3.9 - 0.45 * index
            cells = (str(row["position"]), row["target"], row["input"],
                     branch_names.get(row["branch"], row["branch"]))
            for x, cell in zip(columns, cells, strict=True):
                ax.text(x, y, cell, fontsize=size, va="center", family="monospace")
        ax.text(0.3, 1.4, "loss: cross-entropy at the targets;", fontsize=size, va="center")
        ax.text(0.3, 1.0, "label −100 everywhere else", fontsize=size, va="center")
        right = 7.0
        ax.text(right, 4.85, "Next sentence (NSP)", fontsize=size, va="center",
                fontweight="bold", color=_BACKWARD)
        nsp = [f"label {label}: {'NotNext' if label else 'IsNext'}",
               "pooler: tanh(W h_[CLS] + b),",
               "then a linear layer: 2 logits",
               "Google's cut: B is the next",
               "text or, with p = ½, another",
               "document's: 50/50 in BERT"]
        if not_next_share is not None:
            nsp += [f"Here NotNext is {not_next_share:.2f}:",
                    "a one-sentence chunk has no",
                    "next text: always NotNext"]
        for index, text in enumerate(nsp):
            ax.text(right, 4.35 - 0.42 * index, text, fontsize=size, va="center")
    return fig


def multihead_figure(num_heads: int = 4, head_size: int = 3, length: int = 5) -> Figure:
    """The multi-head split and merge: (T, H) → N panels (T, D) → attention per head →
    (T, H) again, with each head's columns in its own colour."""
    heads = check_int("num_heads", num_heads, minimum=1, maximum=len(_HEAD_COLORS))
    size = check_int("head_size", head_size, minimum=1)
    length = check_int("length", length, minimum=1)
    with lecture_style():
        fig = Figure(figsize=(14.0, 3.8), layout="constrained")
        ax = fig.add_subplot()
        hidden = heads * size

        def matrix(x0, y0, columns, color_of_column, label):
            for column in range(columns):
                for row in range(length):
                    ax.add_patch(Rectangle((x0 + column, y0 - row), 1, 1,
                                           facecolor=color_of_column(column), edgecolor="white"))
            ax.text(x0 + columns / 2, y0 + 1.5, label, ha="center", fontsize=13)

        matrix(0, 0, hidden, lambda c: _HEAD_COLORS[c // size], f"Q: (T, H={hidden})")
        x = hidden + 3
        for head in range(heads):
            matrix(x, 0, size, lambda c, h=head: _HEAD_COLORS[h], f"head {head}")
            x += size + 1
        matrix(x + 2, 0, hidden, lambda c: _HEAD_COLORS[c // size], f"context: (T, H={hidden})")
        ax.annotate("", (hidden + 2.6, -length / 2 + 1), (hidden + 0.4, -length / 2 + 1),
                    arrowprops={"arrowstyle": "-|>", "linewidth": 2})
        ax.text(hidden + 1.5, -length / 2 + 1.6, "split\nreshape\n(T, N, D)", ha="center",
                fontsize=11)
        ax.annotate("", (x + 1.6, -length / 2 + 1), (x - 0.6, -length / 2 + 1),
                    arrowprops={"arrowstyle": "-|>", "linewidth": 2})
        ax.text(x + 0.5, -length / 2 + 1.6, "merge", ha="center", fontsize=11)
        ax.text((hidden + 3 + x) / 2, -length - 0.6,
                f"each head: softmax(Q_h K_hᵀ / √{size}) V_h on its own D = {size} columns",
                ha="center", fontsize=13)
        ax.set_xlim(-1, x + hidden + 3)
        ax.set_ylim(-length - 1.4, 3.0)
        ax.set_aspect("equal")
        ax.set_axis_off()
        fig.suptitle(f"Multi-head attention: H = N × D = {heads} × {size}, split then merged")
    return fig


def attention_masks_figure(tokens: Sequence[str], attention_mask=None) -> Figure:
    """BERT's bidirectional mask beside GPT's causal one, on the same tokens (1 = may attend).

    attention_mask: optional (T,) HF mask (1 = real token): padded keys are hidden in both.
    """
    length = len(tokens)
    keys = np.ones(length) if attention_mask is None else as_float_array(attention_mask,
                                                                           "attention_mask")
    if keys.shape != (length,):
        raise ValueError(f"attention_mask must have shape ({length},), got {keys.shape}")
    bidirectional = np.broadcast_to(keys != 0, (length, length)).astype(float)
    causal = np.tril(bidirectional)
    fontsize = tick_fontsize(length, 4.5)
    with lecture_style():
        fig = Figure(figsize=(13.0, 6.5), layout="constrained")
        axes = fig.subplots(1, 2)
        titles = ("BERT: bidirectional\n(every token sees every real token)",
                  "GPT: causal\n(a token sees itself and the past)")
        for ax, mask, title in zip(axes, (bidirectional, causal), titles, strict=True):
            ax.imshow(mask, cmap=ATTENTION_CMAP, vmin=0, vmax=1, interpolation="nearest")
            ax.set_xticks(range(length), list(tokens), rotation=90, fontsize=fontsize)
            ax.set_yticks(range(length), list(tokens), fontsize=fontsize)
            ax.set_xlabel("key")
            ax.set_ylabel("query")
            ax.set_title(title)
        fig.suptitle("Which keys a query may attend to (light = allowed, dark = masked)")
    return fig


def position_embeddings_figure(tables: Mapping[str, np.ndarray], positions: int = 64) -> Figure:
    """Learned position embeddings: per model, the cosine similarity between the first
    ``positions`` rows of ``bert.embeddings.position_embeddings.weight`` (P, H)."""
    positions = check_int("positions", positions, minimum=2)
    if not tables:
        raise ValueError("tables must map at least one model name to its (P, H) table")
    with lecture_style():
        fig = Figure(figsize=(6.5 * len(tables) + 1.0, 6.5), layout="constrained")
        axes = np.atleast_1d(fig.subplots(1, len(tables)))
        image = None
        for ax, (name, table) in zip(axes, tables.items(), strict=True):
            rows = as_float_array(table, f"tables[{name!r}]")[:positions]  # (P, H)
            unit = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
            image = ax.imshow(unit @ unit.T, cmap="RdBu_r", vmin=-1, vmax=1,
                              interpolation="nearest")
            ax.set_title(f"{name}: positions 0 to {len(rows) - 1}")
            ax.set_xlabel("position")
            ax.set_ylabel("position")
        fig.colorbar(image, ax=list(axes), shrink=0.8, label="cosine similarity")
        fig.suptitle("Learned position embeddings: neighbours are alike")
    return fig


def data_parallel_figure(num_workers: int = 3, batch_size: int = 8) -> Figure:
    """One data-parallel step: the batch split into shards, one replica per worker, the
    gradients all-reduced, the same update everywhere (minibert.training.parallel)."""
    num_workers = check_int("num_workers", num_workers, minimum=1, maximum=6)
    batch_size = check_int("batch_size", batch_size, minimum=num_workers)
    sizes = [len(part) for part in np.array_split(np.arange(batch_size), num_workers)]
    with lecture_style():
        fig = Figure(figsize=(12.0, 1.9 * num_workers + 2.2), layout="constrained")
        ax = fig.subplots()
        ax.set_xlim(0, 20)
        ax.set_ylim(-1.2, 2.0 * num_workers + 0.4)
        ax.axis("off")
        top = 2.0 * num_workers - 1.0
        ys = [top - 2.0 * r for r in range(num_workers)]
        _box(ax, 1.6, (ys[0] + ys[-1]) / 2, f"batch\nB = {batch_size}", "#DDDDDD",
             width=2.4, height=1.4)
        for rank, (y, size) in enumerate(zip(ys, sizes, strict=True)):
            color = _HEAD_COLORS[rank % len(_HEAD_COLORS)]
            _arrow(ax, (2.9, (ys[0] + ys[-1]) / 2), (4.0, y), _FORWARD)
            _box(ax, 5.0, y, f"shard {rank}\nB = {size}", color, width=1.9, height=1.1)
            _box(ax, 8.3, y, f"worker {rank}: replica\nforward + backward", "white",
                 width=3.6, height=1.1)
            _arrow(ax, (6.0, y), (6.5, y), _FORWARD)
            _box(ax, 12.0, y, "gradient\n(its share)", color, width=2.4, height=1.1)
            _arrow(ax, (10.1, y), (10.8, y), _BACKWARD)
            _box(ax, 17.6, y, "clip + AdamW\n(same update)", "white", width=3.2, height=1.1)
        ax.add_patch(Rectangle((13.6, ys[-1] - 0.7), 1.8, ys[0] - ys[-1] + 1.4,
                               facecolor="#FFF3D6", edgecolor=_BACKWARD, linewidth=2))
        ax.text(14.5, (ys[0] + ys[-1]) / 2, "all-reduce\n(sum)", ha="center", va="center",
                rotation=90, fontsize=13, color=_BACKWARD)
        for y in ys:
            _arrow(ax, (13.2, y), (13.6, y), _BACKWARD)
            _arrow(ax, (15.4, y), (16.0, y), _BACKWARD)
        ax.text(10.0, -0.9, "shard r's loss share = (its masked-token losses) / (masked "
                "tokens in the whole batch)\nweights are never sent: every replica applies "
                "the same update", ha="center", va="center", fontsize=11)
        fig.suptitle(f"One data-parallel step on {num_workers} workers")
    return fig


def ring_allreduce_figure(num_workers: int = 3) -> Figure:
    """The ring all-reduce step by step: which chunk each worker holds and sends.

    One panel per step (reduce-scatter, then all-gather); a cell shows, for worker r
    (row) and chunk c (column), how many workers' gradients that copy has summed so far;
    the chunk being sent to the right neighbour is outlined.
    """
    from minibert.training.parallel import ring_schedule

    n = check_int("num_workers", num_workers, minimum=2, maximum=6)
    schedule = ring_schedule(n)
    holds = np.ones((n, n), dtype=int)  # holds[r, c]: contributions in worker r's chunk c
    panels = [("start", holds.copy(), None)]
    for step in schedule:
        sends = step["sends"]
        messages = [holds[r, sends[r]] for r in range(n)]
        for r in range(n):
            chunk = step["receives"][r]
            incoming = messages[(r - 1) % n]
            holds[r, chunk] = holds[r, chunk] + incoming if step["phase"] == "reduce-scatter" \
                else incoming
        panels.append((f"{step['phase']} {step['step'] + 1}", holds.copy(), sends))
    with lecture_style():
        fig = Figure(figsize=(2.6 * len(panels), 4.0), layout="constrained")
        axes = fig.subplots(1, len(panels))
        for ax, (title, counts, sends) in zip(axes, panels, strict=True):
            image = ax.imshow(counts, cmap=ATTENTION_CMAP, vmin=0, vmax=n)
            for r in range(n):
                for c in range(n):
                    ax.text(c, r, str(counts[r, c]), ha="center", va="center", fontsize=12,
                            color="white" if counts[r, c] <= n / 2 else "black")
            if sends is not None:
                for r in range(n):
                    c = sends[r]  # what worker r sent in this step (before it changed)
                    ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False,
                                           edgecolor=_BACKWARD, linewidth=3))
            ax.set_title(title, fontsize=11)
            ax.set_xticks(range(n), [f"c{c}" for c in range(n)])
            ax.set_yticks(range(n), [f"w{r}" for r in range(n)])
        fig.colorbar(image, ax=axes, shrink=0.7, label="gradients summed")
        fig.suptitle(f"Ring all-reduce on {n} workers (rows: workers, columns: chunks)\n"
                     "outlined: the chunk sent on in that step")
    return fig
