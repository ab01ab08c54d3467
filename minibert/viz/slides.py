"""The 50-minute lecture as a 16:9 PDF deck, drawn with matplotlib alone (``minibert slides``).

Every page is a 12.8 × 7.2 inch figure (1280 × 720 pixels at 100 dpi) whose text is at
least 20 pt. Pages follow the 40 timed minutes of docs/lecture_50min.md, which names them by
page number (``SLIDES``); fine-tuning, the published results and the homework are a
handout (``HANDOUT``, written with ``--handout``). Live pages are computed from a model
folder (the reference checkpoint ``tiny-toy`` by default): fill-mask answers, the heads
chosen by their job score (:func:`minibert.viz.head_job_scores`), the training curves
from its history.json, the position embeddings, attribution beside attention; the
gradient check runs the cases of ``minibert gradcheck`` at build time in float64 and
shows what that command reports. The published results are Devlin et al. (2019), Tables
1, 2 and 3.

Usage::

    from minibert.viz.slides import write_slides
    write_slides("lecture.pdf", handout="handout.pdf")
    # or: minibert slides -o lecture.pdf --handout handout.pdf
"""

from __future__ import annotations

import io
import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch
from matplotlib.ticker import MaxNLocator

from minibert.viz.attention import attention_rollout, stack_attentions
from minibert.viz.board import (
    ATTENTION_BACKWARD_TITLE,
    ENCODER_TITLE,
    OBJECTIVE_TITLE,
    attention_backward_figure,
    encoder_block_figure,
    pretraining_objective_figure,
)
from minibert.viz.lecture_set import (
    LECTURE_MASKED,
    NSP_RISE_MARGIN,
    WORKED_INSTANCE,
    best_head,
    head_job_scores,
    nsp_plateau,
    worked_instance_rows,
)
from minibert.viz.style import ATTENTION_CMAP

__all__ = ["SLIDE_SIZE", "MIN_FONT_SIZE", "SLIDES", "HANDOUT", "GRADCHECK_CASES", "Slide",
           "build_slides", "build_handout", "gradcheck_rows", "save_slides", "write_slides"]

SLIDE_SIZE = (12.8, 7.2)  # inches: 1280 × 720 pixels at 100 dpi, 16:9
MIN_FONT_SIZE = 20  # points, for every text on every page
_TITLE, _BODY = 30, 22
_BLUE, _ORANGE, _GREEN, _GREY = "#0072B2", "#D55E00", "#009E73", "0.35"
_RC = {"font.size": _BODY, "axes.titlesize": _BODY, "axes.labelsize": _BODY,
       "xtick.labelsize": MIN_FONT_SIZE, "ytick.labelsize": MIN_FONT_SIZE,
       "legend.fontsize": MIN_FONT_SIZE, "lines.linewidth": 3.5}

# Page 2: one word, two senses, and in both the words *after* the blank decide: with the
# text cut off there, tiny-toy has no answer (`minibert fill-mask --model tiny-toy "..."`).
FILL_MASK_SENTENCES = ("the [MASK] lent him money for a new roof.",
                       "the [MASK] of the river was muddy.")
MONEY = "she deposited the money at the [MASK] before noon."
HEAD_SENTENCE = "she deposited the money at the bank before noon."
# How a gradcheck case is named on the page (the command's own name otherwise).
GRADCHECK_LABELS = {"gelu(none)": "GELU (exact, erf)", "softmax": "softmax",
                    "linear": "linear", "layernorm": "LayerNorm", "attention": "attention",
                    "softmax, bug": "softmax, wrong backward"}


@dataclass
class _Context:
    """What the live pages read: the model, its tokenizer and its training history."""

    model: object
    tokenizer: object
    history: list | None
    name: str
    recipe: dict | None = None  # training_config.json, when the folder has one


@dataclass(frozen=True)
class Slide:
    """One page: the plan's segment (minutes), its title and the function that draws it
    (on the blank page it is given, or returning a page of its own)."""

    minutes: str
    title: str
    draw: Callable[[Figure, _Context], Figure | None]


# ----- page furniture ----------------------------------------------------------------------


def _page(title: str) -> Figure:
    fig = Figure(figsize=SLIDE_SIZE)
    fig.text(0.03, 0.93, title, fontsize=_TITLE, fontweight="bold", va="center")
    return fig


def _footer(fig: Figure, minutes: str, number: int, total: int, handout: bool = False) -> None:
    footer = (f"handout {number}/{total}" if handout
              else f"{number}/{total}" + (f" · {minutes} min" if minutes else ""))
    fig.text(0.97, 0.03, footer, fontsize=MIN_FONT_SIZE, color=_GREY, ha="right")


def _lines(fig: Figure, lines, top: float = 0.8, left: float = 0.05, step: float = 0.085,
           size: float = _BODY) -> float:
    """Write lines from ``top`` down (figure fractions); "- " starts a bullet. Returns the
    height used, so a caller can continue below."""
    y = top
    for line in lines:
        if line.startswith("- "):
            fig.text(left, y, "•", fontsize=size, va="top", color=_BLUE)
            fig.text(left + 0.025, y, line[2:], fontsize=size, va="top")
        else:
            fig.text(left, y, line, fontsize=size, va="top")
        y -= step
    return top - y


def _source(fig: Figure, text: str) -> None:
    fig.text(0.03, 0.03, text, fontsize=MIN_FONT_SIZE, color=_GREY)


def _canvas(fig: Figure, rect=(0.0, 0.0, 1.0, 0.86)):
    """An axes in inches over part of the page, for boxes and arrows."""
    ax = fig.add_axes(rect)
    width, height = SLIDE_SIZE[0] * rect[2], SLIDE_SIZE[1] * rect[3]
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    return ax


def _box(ax, x, y, width, height, text, color="white", size=_BODY, **kwargs):
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height,
                                boxstyle="round,pad=0.04", facecolor=color, edgecolor="black"))
    ax.text(x, y, text, ha="center", va="center", fontsize=size, **kwargs)


def _arrow(ax, start, end, color="black"):
    ax.annotate("", end, start, arrowprops={"arrowstyle": "-|>", "color": color,
                                            "linewidth": 2.5, "mutation_scale": 22})


# ----- live numbers ------------------------------------------------------------------------


def _mlm_top(context: _Context, text: str, k: int = 3) -> list[tuple[str, float]]:
    """The model's top-k words for the [MASK] of ``text`` with their probabilities."""
    tok = context.tokenizer
    enc = tok(text, return_tensors="np")
    position = enc["input_ids"][0].tolist().index(tok.mask_token_id)
    out = context.model(enc["input_ids"], enc["token_type_ids"], enc["attention_mask"])
    logits = out.prediction_logits[0, position].astype(np.float64)  # (V,)
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    best = np.argsort(-probs)[:k]
    return list(zip(tok.convert_ids_to_tokens(best.tolist()), probs[best].tolist(),
                    strict=True))


def _attentions(context: _Context, text: str):
    tok = context.tokenizer
    enc = tok(text, return_tensors="np")
    out = context.model.bert(enc["input_ids"], enc["token_type_ids"], enc["attention_mask"],
                             output_attentions=True)
    return stack_attentions(out.attentions), tok.convert_ids_to_tokens(
        enc["input_ids"][0].tolist()), enc


def _readable(tokens) -> list[str]:
    """Tick labels a room can read: punctuation, a dot or comma, in quotes."""
    return [f"'{t}'" if len(t) == 1 and not t.isalnum() else t for t in tokens]


def _heatmap(ax, matrix, tokens, title, cmap=ATTENTION_CMAP, vmax=1.0, labels=False):
    tokens = _readable(tokens)
    image = ax.imshow(matrix, cmap=cmap, vmin=0.0, vmax=vmax, interpolation="nearest")
    ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=MIN_FONT_SIZE)
    ax.set_yticks(range(len(tokens)), tokens, fontsize=MIN_FONT_SIZE)
    ax.set_title(title, fontsize=_BODY)
    if labels:
        ax.set_xlabel("key", fontsize=MIN_FONT_SIZE)
        ax.set_ylabel("query", fontsize=MIN_FONT_SIZE)
    return image


# ----- the pages ---------------------------------------------------------------------------


def _title_page(fig: Figure, context: _Context) -> None:
    config = context.model.config
    size = (f"{config.num_hidden_layers} layers, H = {config.hidden_size}, "
            f"{config.num_attention_heads} heads")
    if context.history:  # the model's own training record: how long it was trained
        size += f", trained {max(row['step'] for row in context.history):,} steps"
    _lines(fig, ["BERT rebuilt in NumPy: every layer a forward and a hand-written backward,",
                 "checked against finite differences; a real BERT's names and numbers.",
                 "",
                 f"Live figures: the checkpoint {context.name}",
                 f"({size}).",
                 "Layers and heads are counted from 0 on every page.",
                 "Fine-tuning, BERT's published results, homework: the handout."], top=0.72)


def left_side(text: str) -> str:
    """``text`` cut off right after its [MASK]: what a left-to-right model would read."""
    return text.split("[MASK]", 1)[0] + "[MASK]."


def fill_mask_rows(context: _Context) -> list[dict]:
    """Page 2's numbers: for each of ``FILL_MASK_SENTENCES`` (and its left side alone), the
    model's top 3 answers with their probabilities."""
    rows = [{"text": text, "top": _mlm_top(context, text)} for text in FILL_MASK_SENTENCES]
    cut = sorted({left_side(text) for text in FILL_MASK_SENTENCES})
    return rows + [{"text": text, "top": _mlm_top(context, text), "cut": True} for text in cut]


def _fill_mask_page(fig: Figure, context: _Context) -> None:
    _lines(fig, ["One word, two senses; the words after the blank decide which."], top=0.82)
    for row, found in enumerate(fill_mask_rows(context)):
        y = 0.68 - 0.19 * row
        text = found["text"].replace("[MASK]", "____")
        if found.get("cut"):
            text += "      (cut off after the blank)"
        fig.text(0.05, y, text, fontsize=_BODY, va="top",
                 color=_ORANGE if found.get("cut") else "black")
        answers = "   ".join(f"{word} {p:.2f}" for word, p in found["top"])
        fig.text(0.08, y - 0.075, f"top 3:  {answers}", fontsize=_BODY, va="top",
                 color=_BLUE, family="monospace")
    fig.text(0.05, 0.12, "A left-to-right model reads only \"the ____\": BERT reads both sides.",
             fontsize=_BODY)
    _source(fig, f"minibert fill-mask --model {context.name} \"...\"")


def _glance_page(fig: Figure, context: _Context) -> None:
    rows = [("", "BERT-Base", "BERT-Large"),
            ("layers, hidden, heads", "12, 768, 12", "24, 1024, 16"),
            ("parameters (paper)", "110M", "340M"),
            ("feed-forward", "4H = 3072, GELU", "4H = 4096, GELU"),
            ("vocabulary", "WordPiece, 30,000 (vocab.txt: 30,522)", ""),
            ("pretraining text", "BooksCorpus 0.8B + Wikipedia 2.5B words", ""),
            ("masked LM", "15%: 80% [MASK], 10% random, 10% kept", ""),
            ("next sentence", "B follows A 50%, random 50%; from [CLS]", ""),
            ("schedule", "1M steps × 256 sequences:", ""),
            ("", "90% at length 128, then 10% at 512", ""),
            ("optimizer", "Adam, lr 1e-4, 10k warm-up, dropout 0.1", "")]
    for index, (name, base, large) in enumerate(rows):
        y = 0.84 - index * 0.064
        weight = "bold" if index == 0 else "normal"
        fig.text(0.04, y, name, fontsize=_BODY, va="top", fontweight=weight)
        fig.text(0.36, y, base, fontsize=_BODY, va="top", fontweight=weight)
        if large:
            fig.text(0.7, y, large, fontsize=_BODY, va="top", fontweight=weight)
    _source(fig, "Devlin et al. (2019), §3, §3.1, App. A.2; 30,522: bert-base-uncased")


def _pretrain_finetune_page(fig: Figure, context: _Context) -> None:
    ax = _canvas(fig)
    for x0, heading, inputs, outputs in (
            (0.4, "Pre-training (unlabelled text)",
             "[CLS] A, masked [SEP] B, masked [SEP]", ("NSP", "masked LM")),
            (6.7, "Fine-tuning (labelled task data)",
             "[CLS] question [SEP] paragraph [SEP]", ("class", "start / end span"))):
        ax.text(x0 + 2.85, 5.7, heading, ha="center", fontsize=_BODY, fontweight="bold")
        _box(ax, x0 + 2.85, 1.0, 5.7, 0.7, inputs, size=MIN_FONT_SIZE)
        _box(ax, x0 + 2.85, 2.8, 5.7, 1.6, "BERT: L encoder blocks", color="#dbe9f6")
        _arrow(ax, (x0 + 2.85, 1.35), (x0 + 2.85, 2.0))
        _box(ax, x0 + 1.2, 4.6, 2.2, 0.7, outputs[0], color="#fde7d9")
        _box(ax, x0 + 4.2, 4.6, 2.8, 0.7, outputs[1], color="#fde7d9")
        _arrow(ax, (x0 + 1.2, 3.6), (x0 + 1.2, 4.25))
        _arrow(ax, (x0 + 4.2, 3.6), (x0 + 4.2, 4.25))
    ax.annotate("", (6.6, 2.8), (6.1, 2.8), arrowprops={"arrowstyle": "-|>", "linewidth": 4,
                                                        "color": _ORANGE})
    ax.text(6.35, 1.6, "same\nweights", ha="center", fontsize=MIN_FONT_SIZE, color=_ORANGE)
    _source(fig, "Redrawn after Devlin et al. (2019), Figure 1")


def _input_page(fig: Figure, context: _Context) -> None:
    tokens = ["[CLS]", "my", "dog", "is", "cute", "[SEP]", "he", "likes", "play", "##ing",
              "[SEP]"]
    segments = ["A"] * 6 + ["B"] * 5
    ax = _canvas(fig)
    width = 0.92
    rows = (("token", tokens, "white"), ("segment", segments, "#dbe9f6"),
            ("position", [str(i) for i in range(len(tokens))], "#e2f2ea"))
    for row, (name, labels, color) in enumerate(rows):
        y = 4.9 - row * 1.45
        ax.text(0.15, y, name, fontsize=_BODY, va="center")
        for index, label in enumerate(labels):
            _box(ax, 2.05 + index * width, y, width - 0.08, 0.7, label, color=color,
                 size=MIN_FONT_SIZE)
        if row:
            ax.text(1.5, y + 0.72, "+", fontsize=_TITLE, ha="center", va="center")
    ax.text(0.15, 0.95, "= the input of layer 0 (then LayerNorm); each row is a lookup.",
            fontsize=_BODY)
    _source(fig, "Redrawn after Devlin et al. (2019), Figure 2")


def _lookup_page(fig: Figure, context: _Context) -> None:
    _lines(fig, [
        "Forward: a lookup, out[b, t] = W[ids[b, t]]  (B, T, H).",
        "Backward: a scatter-add, dW[ids[b, t]] += dout[b, t].",
        "- A repeated id (\"the\" twice) must receive both gradients.",
        "- The buffered bug: dW[ids] += dout keeps only the last one;",
        "   np.add.at(dW, ids, dout) adds every one.",
        "- Token, segment and position tables each get their own scatter-add.",
        "Notebook 02, cells [02-004] and [02-014]."])


def _multihead_page(fig: Figure, context: _Context) -> None:
    ax = _canvas(fig)
    steps = [("x W_Qᵀ", "(B, T, H)"), ("split", "(B, N, T, D)"),
             ("softmax(QKᵀ/√D) V", "(B, N, T, D)"), ("merge", "(B, T, H)")]
    for index, (step, shape) in enumerate(steps):
        x = 1.6 + index * 3.2
        _box(ax, x, 4.3, 2.9 if index == 2 else 2.2, 0.8, step, color="#dbe9f6")
        ax.text(x, 3.4, shape, ha="center", fontsize=_BODY, family="monospace")
        if index:
            _arrow(ax, (x - 2.05 + (0.35 if index == 3 else 0), 4.3),
                   (x - 1.15 - (0.35 if index == 2 else 0), 4.3))
    config = context.model.config
    heads = config.num_attention_heads
    _lines(fig, ["H = N × D: each head reads its own D columns, with its own softmax.",
                 f"BERT-Base: 768 = 12 × 64;  {context.name}: {config.hidden_size} = "
                 f"{heads} × {config.hidden_size // heads}.",
                 "Notebook 03, cell [03-006]."], top=0.36)


def _masks_page(fig: Figure, context: _Context) -> None:
    tokens = ["[CLS]", "the", "bank", "[SEP]", "[PAD]"]
    keys = np.array([1, 1, 1, 1, 0.0])
    bidirectional = np.broadcast_to(keys, (5, 5))
    causal = np.tril(bidirectional)
    axes = fig.subplots(1, 2, gridspec_kw={"left": 0.1, "right": 0.72, "top": 0.78,
                                            "bottom": 0.26, "wspace": 0.6})
    for ax, mask, title in zip(axes, (bidirectional, causal),
                               ("BERT: both directions", "GPT: causal"), strict=True):
        _heatmap(ax, mask, tokens, title, labels=True)
    _lines(fig, ["light: may attend", "", "padding is hidden", "as a key in both", "",
                 "notebook 03:", "[03-016], [03-018]"], top=0.78, left=0.76, step=0.075,
           size=MIN_FONT_SIZE)


def _encoder_page(fig: Figure, context: _Context) -> Figure:
    config = context.model.config
    return encoder_block_figure(config.hidden_size, config.num_attention_heads,
                                config.intermediate_size)


# The cases of ``minibert gradcheck`` (minibert.gradcheck.suite) the picture shows, by the
# name the command prints: four layer pairs, self-attention with its parameters, and the
# whole model. The first case whose name starts with "BertForPreTraining" is the model.
GRADCHECK_CASES = ("linear", "layernorm", "gelu(none)", "softmax", "attention",
                   "BertSelfAttention", "BertForPreTraining")


def _suite_groups():
    from minibert.gradcheck import suite

    return (suite.function_cases(0), suite.module_cases(0), suite.model_cases(0))


def gradcheck_rows() -> list[dict]:
    """What ``minibert gradcheck`` reports for ``GRADCHECK_CASES``, plus a broken softmax.

    Returns one dict per bar: ``case`` (the command's name for it), ``max_rel_error`` (the
    largest relative error over the arrays whose gradient is not exactly zero: the
    command's own summary, ``GradCheckTable.max_rel_error``), ``skipped`` (the arrays left
    out because their true gradient is exactly 0, e.g. the key bias) and ``bug`` (True for
    the softmax backward that forgot its subtracted term, which must fail).
    """
    from minibert import functional as F
    from minibert.gradcheck import check_function

    wanted = list(GRADCHECK_CASES)
    rows = []
    for group, cases in enumerate(_suite_groups()):
        for name, thunk in cases:
            if not wanted:
                break
            match = next((w for w in wanted if name == w or (w == "BertForPreTraining"
                                                               and name.startswith(w))), None)
            # The layers' cases (group 1) share one random generator, so each runs in the
            # command's order, wanted or not: the numbers must be the command's. The pairs'
            # inputs are drawn as they are listed, and the model makes its own generator.
            if match is None and group != 1:
                continue
            table = thunk()
            if match is not None:
                wanted.remove(match)
                rows.append({"case": name, "max_rel_error": table.max_rel_error, "bug": False,
                             "skipped": [r.name for r in table if r.analytic_norm < 1e-9]})
    if wanted:
        raise RuntimeError(f"minibert.gradcheck.suite has no case named {wanted}")
    rows.sort(key=lambda row: next(i for i, w in enumerate(GRADCHECK_CASES)
                                   if row["case"].startswith(w)))
    x = np.random.default_rng(0).standard_normal((2, 4, 6))

    def forward_keeping_output(x):
        out, _ = F.softmax_forward(x)
        return out, out

    def forgot_the_sum(dout, probs):
        return probs * dout  # the right one is probs * (dout - sum(probs * dout))

    broken = check_function(forward_keeping_output, forgot_the_sum, {"x": x})
    rows.append({"case": "softmax, bug", "max_rel_error": broken.max_rel_error, "bug": True,
                 "skipped": []})
    return rows


def _gradcheck_page(fig: Figure, context: _Context) -> None:
    rows = gradcheck_rows()
    ax = fig.add_axes((0.3, 0.3, 0.66, 0.55))
    names = [GRADCHECK_LABELS.get(row["case"], row["case"].replace("(dropout=0.0)", ""))
             for row in rows]
    errors = np.array([max(row["max_rel_error"], 1e-17) for row in rows])
    colors = [_ORANGE if row["bug"] else _BLUE for row in rows]
    ax.barh(range(len(rows)), errors, color=colors)
    ax.set_xscale("log")
    ax.set_xlim(1e-17, 1)
    ax.set_yticks(range(len(rows)), names, fontsize=MIN_FONT_SIZE)
    for tolerance in (1e-7, 1e-6):
        ax.axvline(tolerance, color="black", linestyle="--", linewidth=2)
    for index, error in enumerate(errors):
        inside = error > 1e-12  # the label inside the bar's end, clear of the dashed lines
        ax.text(error / 1.5 if inside else error * 2, index, f"{error:.1e}", va="center",
                fontsize=MIN_FONT_SIZE, color="white" if inside else "black",
                ha="right" if inside else "left")
    ax.set_ylim(len(rows) - 0.5, -0.6)
    ax.set_xlabel("max relative error, nonzero gradients (float64)", fontsize=MIN_FONT_SIZE)
    ax.tick_params(labelsize=MIN_FONT_SIZE)
    skipped = sorted({name.rsplit(".", 2)[-2] + "." + name.rsplit(".", 1)[-1]
                      for row in rows for name in row["skipped"]})
    fig.text(0.03, 0.135, f"Skipped: {', '.join(skipped)}. Its true gradient is exactly 0, so "
             "rel. error is noise / noise;" if skipped else "No array has a zero gradient.",
             fontsize=MIN_FONT_SIZE)
    if skipped:
        fig.text(0.03, 0.085, "the check asks both to be below 1e-9 instead. Why 0: each row "
                 "of dS sums to 0.", fontsize=MIN_FONT_SIZE)
    _source(fig, "Dashed: 1e-7 (a layer), 1e-6 (the model). = minibert gradcheck.")


def minus_100_losses(context: _Context) -> tuple[float, float]:
    """The masked-LM loss of notebook 06's worked instance (``WORKED_INSTANCE``) under the
    model: right (the mean over its 5 targets) and with the bug (every -100 label used as an
    index, so each other position reads row V − 100 and counts in the mean). In nats."""
    from minibert.viz.lecture_set import WORKED_INSTANCE

    tok = context.tokenizer
    ids = np.array([tok.convert_tokens_to_ids(list(WORKED_INSTANCE["inputs"]))])
    segments = np.array([[int(i >= WORKED_INSTANCE["first_b"]) for i in range(ids.shape[1])]])
    out = context.model(ids, segments, np.ones_like(ids))
    logits = out.prediction_logits[0].astype(np.float64)  # (T, V)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    labels = np.full(ids.shape[1], -100)
    for position in WORKED_INSTANCE["branches"]:
        labels[position] = tok.convert_tokens_to_ids([WORKED_INSTANCE["tokens"][position]])[0]
    rows = np.arange(len(labels))
    valid = labels != -100
    right = float(-log_probs[rows[valid], labels[valid]].mean())
    buggy = float(-log_probs[rows, labels].mean())  # -100 reads row V - 100: the bug
    return right, buggy


def _bugs_page(fig: Figure, context: _Context) -> None:
    vocab = context.model.config.vocab_size
    from minibert.viz.lecture_set import WORKED_INSTANCE

    right, buggy = minus_100_losses(context)
    unlabelled = len(WORKED_INSTANCE["tokens"]) - len(WORKED_INSTANCE["branches"])
    _lines(fig, [
        "Bugs a from-scratch BERT can hide, each caught by a test here:",
        f"- -100 labels used as an index: NumPy reads row V − 100 (row {vocab - 100:,}",
        f"   of V = {vocab:,}), no error. Notebook 06's instance: loss {buggy:.1f} nats,",
        f"   not {right:.2f}: the mean also counts the {unlabelled} unlabelled positions.",
        "- Tied MLM decoder and word table: both uses must add (+=) their gradients.",
        "- An inverted padding mask: padding attended, real tokens hidden.",
        "- A softmax test with an all-ones upstream gradient: always zero, so a",
        "   backward that returns zeros passes. Use a random upstream gradient.",
        "Notebook 05, cells [05-006] and [05-026]."], step=0.08)
    _source(fig, "Sources: docs/common_bugs.md; the loss: notebook 06 §5")


def _objective_page(fig: Figure, context: _Context) -> Figure:
    held = [r for r in context.history or [] if r.get("split") == "heldout"]
    share = nsp_plateau(held)[0] if held else None
    page = pretraining_objective_figure(worked_instance_rows(),
                                        WORKED_INSTANCE["next_sentence_label"], share)
    _source(page, "Notebook 06 §5; NotNext share: history.json (notebook 07 counts it)")
    return page


def _attention_backward_page(fig: Figure, context: _Context) -> Figure:
    page = attention_backward_figure()
    _source(page, "docs/backprop.md; notebook 03 §5: [03-step1] … [03-dq-dk]")
    return page


def _recipe_differences(recipe: dict | None) -> list[str]:
    """How a run's training_config.json departs from BERT's pretraining recipe (Devlin et
    al. 2019, App. A.2: the two losses summed, dropout 0.1, 10,000 warm-up steps)."""
    if not recipe:
        return []
    differences = []
    weight = recipe.get("next_sentence_weight", 1.0)
    if recipe.get("objective", "nsp") == "nsp" and weight != 1.0:
        differences.append(f"NSP loss × {weight:g}")
    if recipe.get("token_type_init") == "zero":
        differences.append("segment table from zero")
    if recipe.get("dropout", 0.1) == 0.0:
        differences.append("no dropout")
    if recipe.get("warmup_fraction", 0.01) == 0.0:
        differences.append("no warm-up")
    return differences


def _corpus_note(recipe: dict | None) -> list[str]:
    """The curves page's lines on what the run read, from its training_config.json: the
    corpus file it names, the generated everyday world, or the generated topics."""
    corpus = (recipe or {}).get("corpus")
    if corpus:
        return [f"(read {Path(corpus).name};", "notebook 07 §5 gives", "the baselines)."]
    if (recipe or {}).get("world") == "everyday":
        from minibert.data.everyday import EVERYDAY_SCENES

        return [f"(the generated everyday world: {len(EVERYDAY_SCENES)}", "scenes and the themes;",
                "notebook 07 §5 gives", "the baselines)."]
    from minibert.data.templates import TOPICS

    return [f"(a generated {len(TOPICS)}-topic", "corpus; notebook 07 §5", "gives the baselines)."]


def _curves_page(fig: Figure, context: _Context) -> None:
    history = context.history or []
    held = [r for r in history if r.get("split") == "heldout"]
    if not held:
        _lines(fig, ["This model folder has no history.json with held-out rows."])
        return
    steps = [r["step"] for r in held]
    ax = fig.add_axes((0.1, 0.3, 0.48, 0.54))
    ax.plot(steps, [r["masked_lm_accuracy"] for r in held], color=_BLUE,
            label="masked LM")
    ax.plot(steps, [r["next_sentence_accuracy"] for r in held], color=_ORANGE,
            label="next sentence")
    floor, rise = nsp_plateau(held)
    ax.axhline(floor, color=_GREY, linestyle=":", linewidth=2.5)
    if rise is not None:
        ax.axvline(rise, color=_ORANGE, linestyle="--", linewidth=2)
    ax.set_ylim(0, 1)
    ax.set_xlabel("training step")
    ax.set_ylabel("held-out accuracy")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
    nsp = [r["next_sentence_accuracy"] for r in held]
    before = [a for r, a in zip(held, nsp, strict=True) if rise is None or r["step"] < rise]
    notes = [f"Dotted: {floor:.2f}, the NotNext", "share: what always", "answering NotNext scores.",
             (f"Before step {rise:,}, NSP" if rise else "NSP never leaves it here:"),
             f"moves within {min(before):.2f}–{max(before):.2f};",
             ("dashed: from there on it" if rise else ""),
             (f"stays above {floor + NSP_RISE_MARGIN:.2f} (+{NSP_RISE_MARGIN:g})." if rise else ""),
             f"Ends: NSP {nsp[-1]:.2f}, MLM {held[-1]['masked_lm_accuracy']:.2f}",
             *_corpus_note(context.recipe)]
    _lines(fig, [n for n in notes if n], top=0.86, left=0.615, step=0.062,
           size=MIN_FONT_SIZE)
    differences = _recipe_differences(context.recipe)
    if differences:
        fig.text(0.03, 0.145, f"Not BERT's recipe: {', '.join(differences)};",
                 fontsize=MIN_FONT_SIZE, color=_ORANGE)
        fig.text(0.03, 0.095, "the plateau's length depends on the recipe and the seed "
                 "(docs/results.md).", fontsize=MIN_FONT_SIZE, color=_ORANGE)
    _source(fig, f"{context.name}/history.json, command.txt; notebook 07 [07-plateau]")


def _heads_page(fig: Figure, context: _Context) -> None:
    scores = head_job_scores(context.model, context.tokenizer, [HEAD_SENTENCE])
    attentions, tokens, _ = _attentions(context, HEAD_SENTENCE)
    axes = fig.subplots(1, 2, gridspec_kw={"left": 0.17, "right": 0.8, "top": 0.68,
                                            "bottom": 0.3, "wspace": 0.75})
    image = None
    for ax, job, where in zip(axes, ("previous token", "next token"), ("below", "above"),
                              strict=True):
        layer, head = best_head(scores, job)
        image = _heatmap(ax, attentions[layer, head], tokens,
                         f"layer {layer} · head {head}, score "
                         f"{scores[job][layer, head]:.2f}\n{job}: {where} the dots",
                         labels=True)
        # The diagonal (a token looking at itself), to tell below it from above it.
        ax.plot([-0.5, len(tokens) - 0.5], [-0.5, len(tokens) - 0.5], color="white",
                linestyle=":", linewidth=1.5)
    bar = fig.colorbar(image, cax=fig.add_axes((0.88, 0.3, 0.018, 0.38)))
    bar.set_label("attention", fontsize=MIN_FONT_SIZE)
    bar.ax.tick_params(labelsize=MIN_FONT_SIZE)
    fig.text(0.03, 0.845, "Picked by job score: the mean attention a query gives its target."
             " Dots: the diagonal.", fontsize=MIN_FONT_SIZE)


def _positions_page(fig: Figure, context: _Context) -> None:
    table = context.model.bert.embeddings.position_embeddings.params["weight"]  # (P, H)
    shown = min(len(table), 64)
    rows = table[:shown].astype(np.float64)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True).clip(1e-12)
    ax = fig.add_axes((0.05, 0.14, 0.5, 0.68))
    image = ax.imshow(unit @ unit.T, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xlabel("position")
    ax.set_ylabel("position")
    ax.tick_params(labelsize=MIN_FONT_SIZE)
    fig.colorbar(image, ax=ax, shrink=0.8).ax.tick_params(labelsize=MIN_FONT_SIZE)
    length = (context.recipe or {}).get("max_seq_length")
    if isinstance(length, int) and length < shown:
        tail = [f"Training used length {length}:", f"rows {length} and up are still",
                "at their random start."]
    elif isinstance(length, int):
        tail = [f"Training used length {length}:", "every row shown was trained."]
    else:
        tail = ["This folder does not record", "its training length", "(training_config.json)."]
    _lines(fig, ["Cosine similarity of the", "learned position rows.",
                 "Neighbours end up alike.", *tail], top=0.8, left=0.64, step=0.08)


def _saliency_page(fig: Figure, context: _Context) -> None:
    from minibert.attribution import gradient_x_input, integrated_gradients, mlm_target

    tok = context.tokenizer
    enc = tok(LECTURE_MASKED, return_tensors="np")
    tokens = tok.convert_ids_to_tokens(enc["input_ids"][0].tolist())
    position = tokens.index("[MASK]")
    word, _ = _mlm_top(context, LECTURE_MASKED, k=1)[0]
    target = mlm_target(position, tok.convert_tokens_to_ids(word))
    inputs = (enc["input_ids"], enc["token_type_ids"], enc["attention_mask"])
    attentions, _, _ = _attentions(context, LECTURE_MASKED)
    rows = {"gradient × input": gradient_x_input(context.model, *inputs, target=target).scores,
            "integrated gradients": integrated_gradients(context.model, *inputs,
                                                         target=target).scores,
            "rollout from [MASK]": attention_rollout(attentions)[-1][position]}
    # each reading's definition, under its name
    defined = {"gradient × input": "∂logit/∂x · x",
               "integrated gradients": "same, averaged 0 → x",
               "rollout from [MASK]": "(attention + I) multiplied"}
    axes = fig.subplots(3, 1, sharex=True, gridspec_kw={"left": 0.36, "right": 0.97,
                                                         "top": 0.74, "bottom": 0.3,
                                                         "hspace": 0.3})
    for ax, (name, values) in zip(axes, rows.items(), strict=True):
        colors = [_BLUE if value >= 0 else _ORANGE for value in values]
        ax.bar(range(len(tokens)), values, color=colors)
        ax.axhline(0, color="black", linewidth=1)
        low, high = min(0.0, float(np.min(values))), max(0.0, float(np.max(values)))
        ax.set_yticks([low, high] if low < 0 else [high],
                      [f"{v:.2f}" for v in ([low, high] if low < 0 else [high])],
                      fontsize=MIN_FONT_SIZE)
        ax.text(-0.13, 0.5, f"{name}\n{defined[name]}", transform=ax.transAxes, ha="right",
                va="center", fontsize=MIN_FONT_SIZE, linespacing=1.1)
    axes[-1].set_xticks(range(len(tokens)), _readable(tokens), rotation=90,
                        fontsize=MIN_FONT_SIZE)
    # Agreement with the rollout over the words (special tokens and the [MASK] left out).
    words = [i for i, t in enumerate(tokens) if t not in ("[CLS]", "[SEP]", "[MASK]")]
    rollout = rows["rollout from [MASK]"][words]
    agree = {name: float(np.corrcoef(rows[name][words], rollout)[0, 1])
             for name in ("integrated gradients", "gradient × input")}
    fig.text(0.03, 0.845, f"Why '{word}'? Correlation with the rollout over the words: "
             f"integrated gradients {agree['integrated gradients']:+.2f},",
             fontsize=MIN_FONT_SIZE, color=_BLUE)
    fig.text(0.03, 0.8, f"gradient × input {agree['gradient × input']:+.2f}: two "
             "attributions, two answers; one sentence settles nothing.",
             fontsize=MIN_FONT_SIZE, color=_BLUE)
    _source(fig, "x: embedding. Abnar & Zuidema 2020; Sundararajan 2017")


def _finetune_page(fig: Figure, context: _Context) -> None:
    _lines(fig, [
        "Keep the pretrained encoder, add one small layer, train everything briefly:",
        "- a sentence or a pair → a class: a linear layer on the pooled [CLS]",
        "   (BertForSequenceClassification; GLUE)",
        "- every token → a tag: a linear layer on each token (NER)",
        "- a question and a paragraph → a span: start and end logits",
        "   per token (BertForQuestionAnswering; SQuAD)",
        "GLUE in the paper: batch 32, 3 epochs, the best learning rate",
        "of 5e-5, 4e-5, 3e-5, 2e-5.  Here: minibert finetune; notebook 09."])
    _source(fig, "Devlin et al. (2019), §3.2 and §4.1")


def _results_page(fig: Figure, context: _Context) -> None:
    glue = [("GLUE test", "MNLI-m/mm", "QQP", "QNLI", "SST-2", "CoLA", "STS-B", "MRPC",
             "RTE", "Avg"),
            ("OpenAI GPT", "82.1/81.4", "70.3", "87.4", "91.3", "45.4", "80.0", "82.3",
             "56.0", "75.1"),
            ("BERT-Base", "84.6/83.4", "71.2", "90.5", "93.5", "52.1", "85.8", "88.9",
             "66.4", "79.6"),
            ("BERT-Large", "86.7/85.9", "72.1", "92.7", "94.9", "60.5", "86.5", "89.3",
             "70.1", "82.1")]
    columns = [0.03, 0.19, 0.36, 0.44, 0.52, 0.6, 0.68, 0.76, 0.84, 0.92]
    for index, row in enumerate(glue):
        y = 0.82 - index * 0.07
        for x, cell in zip(columns, row, strict=True):
            fig.text(x, y, cell, fontsize=MIN_FONT_SIZE, va="top",
                     fontweight="bold" if index in (0, 3) else "normal")
    squad = [("SQuAD (F1 / EM)", "v1.1 dev", "v1.1 test", "v2.0 dev", "v2.0 test"),
             ("BERT-Base, single", "88.5 / 80.8", "", "", ""),
             ("BERT-Large, single", "90.9 / 84.1", "", "81.9 / 78.7", "83.1 / 80.0"),
             ("Large, ens. + TriviaQA", "92.2 / 86.2", "93.2 / 87.4", "", ""),
             ("Human", "", "91.2 / 82.3", "", "89.5 / 86.9")]
    for index, row in enumerate(squad):
        y = 0.47 - index * 0.07
        for x, cell in zip([0.03, 0.35, 0.53, 0.71, 0.87], row, strict=True):
            fig.text(x, y, cell, fontsize=MIN_FONT_SIZE, va="top",
                     fontweight="bold" if index == 0 else "normal")
    _source(fig, "Devlin et al. (2019), Tables 1–3; Avg without WNLI")


# The notebooks' exercises, as notebooks/README.md lists them: (notebook, what to write).
HOMEWORK = (("02", "the backwards layernorm_backward, embedding_backward"),
            ("03", "the backwards attention_backward, softmax_backward"),
            ("04", "the backward gelu_backward"),
            ("05", "the backward cross_entropy_backward"),
            ("06", "data: the 80/10/10 masking rule, a next-sentence pair"),
            ("08", "a forward computation: attention rollout"),
            ("13", "L2 normalisation's backward, LoRA's gradients, ELECTRA's loss"),
            ("14", "a whole BERT layer, forward and backward; one AdamW step"))


def _homework_page(fig: Figure, context: _Context) -> None:
    _lines(fig, [
        "Pick exercises; each check cell says pass, fail or not implemented yet:",
        *(f"- notebook {number}: {what}" for number, what in HOMEWORK),
        "Read next: docs/backprop.md (derivations), docs/finetuning.md.",
        "Second lecture: fine-tuning (notebook 09), BERT's family (notebook 12)."],
        top=0.83, step=0.071)


SLIDES = (
    Slide("", "BERT from the inside", _title_page),
    Slide("0–3", "Fill in the blank: one word, two senses", _fill_mask_page),
    Slide("3–6", "BERT at a glance", _glance_page),
    Slide("3–6", "Pre-train once, fine-tune for each task", _pretrain_finetune_page),
    Slide("6–9", "The input: three embeddings added", _input_page),
    Slide("6–9", "A lookup's backward is a scatter-add", _lookup_page),
    Slide("9–12", "Multi-head attention: split, attend, merge", _multihead_page),
    Slide("9–12", "Masks: BERT sees both sides", _masks_page),
    Slide("12–15", ENCODER_TITLE, _encoder_page),
    Slide("15–21", ATTENTION_BACKWARD_TITLE, _attention_backward_page),
    Slide("21–23", "The gradient check, as a picture", _gradcheck_page),
    Slide("23–25", "Bugs that tests catch", _bugs_page),
    Slide("25–29", OBJECTIVE_TITLE, _objective_page),
    Slide("29–32", "Pretraining: masked LM at once, NSP later", _curves_page),
    Slide("32–36", "Heads with jobs", _heads_page),
    # a spare page, cut from the timed plan (docs/lecture_50min.md, "the cuts, named")
    Slide("", "Positions are learned (spare page)", _positions_page),
    Slide("36–40", "Where it looks, and why it decided: three readings", _saliency_page),
)

# Pages for reading after the lecture, printed or sent: ``write_slides(..., handout=...)``.
HANDOUT = (
    Slide("", "Fine-tuning: one small head per task", _finetune_page),
    Slide("", "Published results", _results_page),
    Slide("", "Homework", _homework_page),
)


def _load(model) -> _Context:
    """A model folder or a reference name -> the live pages' context, in eval mode."""
    from minibert.heads import BertForPreTraining
    from minibert.reference import reference_path
    from minibert.tokenization import BertTokenizer

    text = str(model)
    folder = Path(text)
    if not folder.is_dir():
        folder = reference_path(text)  # ValueError naming the references otherwise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a masked-LM-only folder has no NSP weights
        loaded = BertForPreTraining.from_pretrained(folder).eval()
    tokenizer = BertTokenizer.from_pretrained(folder)
    history_file, recipe_file = folder / "history.json", folder / "training_config.json"
    history = (json.loads(history_file.read_text(encoding="utf-8"))
               if history_file.is_file() else None)
    recipe = (json.loads(recipe_file.read_text(encoding="utf-8"))
              if recipe_file.is_file() else None)
    return _Context(loaded, tokenizer, history, text if not Path(text).is_dir() else
                    folder.name, recipe)


def _build(pages, context: _Context, handout: bool) -> list[Figure]:
    figures = []
    with rc_context(_RC):
        for number, slide in enumerate(pages, start=1):
            fig = _page(slide.title)
            # A page drawn elsewhere (a board picture) replaces the blank one.
            fig = slide.draw(fig, context) or fig
            _footer(fig, slide.minutes, number, len(pages), handout)
            figures.append(fig)
    return figures


def build_slides(model="tiny-toy") -> list[Figure]:
    """Every page of the deck as a 12.8 × 7.2 inch Figure, in the order of ``SLIDES``.

    Inputs: model, a model folder (config.json, model.safetensors, vocab.txt; history.json
    for the training-curve page, training_config.json for its recipe) or a reference name
    such as ``"tiny-toy"``.
    """
    return _build(SLIDES, _load(model), handout=False)


def build_handout(model="tiny-toy") -> list[Figure]:
    """The handout's pages (``HANDOUT``: fine-tuning, published results, homework), as
    12.8 × 7.2 inch Figures; model as for :func:`build_slides`."""
    return _build(HANDOUT, _load(model), handout=True)


def save_slides(pages, path, overwrite: bool = False) -> Path:
    """Write pages (Figures) as one PDF, atomically: nothing is left half-written.

    Inputs: pages, e.g. from :func:`build_slides`; path, a ``.pdf`` file; overwrite,
    replace an existing file. Returns the path.
    """
    from matplotlib.backends.backend_pdf import PdfPages

    from minibert.io.fileio import atomic_write_bytes

    out = Path(path)
    if out.suffix.lower() != ".pdf":
        raise ValueError(f"path must end in .pdf, got {str(path)!r}")
    if out.exists() and not overwrite:
        raise ValueError(f"path {str(path)!r} exists; pass overwrite=True to replace it")
    buffer = io.BytesIO()
    metadata = {"Title": "BERT from the inside", "Creator": "minibert"}
    with PdfPages(buffer, metadata=metadata) as pdf:
        for fig in pages:
            pdf.savefig(fig)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out, buffer.getvalue())
    return out


def write_slides(path, model="tiny-toy", overwrite: bool = False, handout=None) -> Path:
    """Build the deck from ``model`` (see :func:`build_slides`) and save it to ``path``;
    with ``handout``, a second PDF path, write the handout's pages there too."""
    out = Path(path)
    targets = [out] + ([Path(handout)] if handout is not None else [])
    for target in targets:  # before the build, not after it
        if target.suffix.lower() != ".pdf":
            raise ValueError(f"path must end in .pdf, got {str(target)!r}")
        if target.exists() and not overwrite:
            raise ValueError(f"path {str(target)!r} exists; pass overwrite=True to replace it")
    if handout is not None and Path(handout).resolve() == out.resolve():
        raise ValueError(f"handout must be another file than path, got {str(handout)!r} twice")
    written = save_slides(build_slides(model), out, overwrite=overwrite)
    if handout is not None:
        save_slides(build_handout(model), handout, overwrite=overwrite)
    return written
