"""Attribution beside attention: one bar row per method, one bar per token.

Attributions are signed (a word can push a logit down) and each method has its own scale,
so each row is a bar chart with its own y-axis and a zero line, not a shared colour map;
attention rows (probabilities) keep the 0-1 axis. The numbers come from
:mod:`minibert.attribution`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from minibert.checks import check_int
from minibert.viz.attention import as_float_array
from minibert.viz.heatmaps import tick_fontsize
from minibert.viz.style import MAX_FIGURE_SIZE, figure_size, lecture_style

__all__ = ["saliency_figure"]

_POSITIVE, _NEGATIVE = "#0072B2", "#D55E00"  # Okabe-Ito blue and vermillion


def saliency_figure(
    tokens: Sequence[str],
    rows: Mapping[str, np.ndarray],
    highlight: int | None = None,
    title: str | None = None,
    probability_rows: Sequence[str] = (),
    max_size: tuple[float, float] = MAX_FIGURE_SIZE,
) -> Figure:
    """Bars of per-token scores, one row per method, tokens labelled under every row.

    Inputs:
        tokens: (T,) the labels.
        rows: name -> (T,) scores, drawn top to bottom in the given order, e.g.
            ``{"gradient × input": a.scores, "integrated gradients": b.scores,
            "attention from [MASK] (rollout)": rollout[-1][mask_position]}``.
        highlight: the position being explained (its label is bold and boxed), or None.
        title: the figure title.
        probability_rows: names of rows that are probabilities: drawn on a 0-1 axis.
        max_size: largest figure size (inches).
    Returns:
        a ``matplotlib.figure.Figure``: blue bars push the target up, vermillion push it down.
    """
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"tokens must be a list of str, got {type(tokens).__name__}")
    if not isinstance(rows, Mapping) or not rows:
        raise ValueError(f"rows must be a non-empty dict of name -> (T,) scores, got {rows!r}")
    values = {}
    for name, scores in rows.items():
        array = as_float_array(scores, f"rows[{name!r}]")
        if array.shape != (len(tokens),):
            raise ValueError(f"rows[{name!r}] must have shape ({len(tokens)},) (one score per "
                             f"token), got {array.shape}")
        values[name] = array
    if highlight is not None:
        highlight = check_int("highlight", highlight, minimum=0, maximum=len(tokens) - 1)
    unknown = [name for name in probability_rows if name not in values]
    if unknown:
        raise ValueError(f"probability_rows names rows that are not drawn: {unknown}")
    width, height = figure_size(
        max(8.0, 0.45 * len(tokens) + 2.5), 2.6 * len(values) + 1.2, max_size, keep_aspect=False
    )
    positions = np.arange(len(tokens))
    fontsize = tick_fontsize(len(tokens), width - 2.5)
    with lecture_style():
        fig = Figure(figsize=(width, height), layout="constrained")
        axes = fig.subplots(len(values), 1, squeeze=False, sharex=True)[:, 0]
        for ax, (name, scores) in zip(axes, values.items(), strict=True):
            colors = [_POSITIVE if s >= 0 else _NEGATIVE for s in scores]
            ax.bar(positions, scores, color=colors, width=0.8)
            ax.axhline(0.0, color="black", linewidth=1.0)
            if name in probability_rows:
                ax.set_ylim(0.0, 1.0)
            else:
                top = float(np.abs(scores).max()) or 1.0
                ax.set_ylim(-1.1 * top if scores.min() < 0 else 0.0, 1.1 * top)
            ax.set_title(name, loc="left", fontsize="medium")
            ax.grid(axis="y", alpha=0.3)
            ax.ticklabel_format(axis="y", useOffset=False)
            if highlight is not None:
                ax.axvspan(highlight - 0.5, highlight + 0.5, color="0.85", zorder=0)
            ax.set_xticks(positions, list(tokens), rotation=90, fontsize=fontsize)
            ax.tick_params(axis="x", labelbottom=True)
            if highlight is not None:
                ax.get_xticklabels()[highlight].set_fontweight("bold")
        if title is not None:
            fig.suptitle(title)
    return fig


def fill_mask_saliency_figure(model, tokenizer, text: str, pair: str | None = None,
                              word: str | None = None, steps: int = 32) -> Figure:
    """"Which words made the model say *word*?" for the first [MASK] of ``text``.

    Inputs:
        model: a BertForPreTraining or BertForMaskedLM in eval mode; tokenizer: its tokenizer.
        text, pair: sentence A (with a ``[MASK]``) and optional sentence B.
        word: the vocabulary token to explain; by default the model's top prediction.
        steps: path points of integrated gradients.
    Returns:
        a figure with three rows: gradient × input, integrated gradients, and the attention
        rollout from the [MASK] position (where the model looks, beside why it decided).
    """
    from minibert.attribution import gradient_x_input, integrated_gradients, mlm_target
    from minibert.viz.attention import attention_rollout, stack_attentions

    encoding = tokenizer(text, pair, return_tensors="np")
    tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0].tolist())
    if "[MASK]" not in tokens:
        raise ValueError(f"text must contain [MASK] to explain a fill-mask prediction, "
                         f"got {text[:60]!r}")
    position = tokens.index("[MASK]")
    out = model(encoding["input_ids"], encoding["token_type_ids"], encoding["attention_mask"],
                output_attentions=True)
    logits = out.prediction_logits if hasattr(out, "prediction_logits") else out.logits
    if word is None:
        token_id = int(np.argmax(logits[0, position]))
        word = tokenizer.convert_ids_to_tokens([token_id])[0]
    else:
        token_id = tokenizer.convert_tokens_to_ids([word])[0]
        if tokenizer.convert_ids_to_tokens([token_id])[0] != word:
            raise ValueError(f"word must be one token of the vocabulary, got {word!r}")
    rollout = attention_rollout(stack_attentions(out.attentions))[-1]  # (T, T)
    arguments = (model, encoding["input_ids"], encoding["token_type_ids"],
                 encoding["attention_mask"])
    target = mlm_target(position, token_id)
    gradient = gradient_x_input(*arguments, target=target)
    integrated = integrated_gradients(*arguments, target=target, steps=steps)
    attention_name = "attention rollout from [MASK] (where it looks)"
    return saliency_figure(
        tokens,
        {
            "gradient × input": gradient.scores,
            f"integrated gradients ({steps} steps)": integrated.scores,
            attention_name: rollout[position],
        },
        highlight=position,
        title=f"Which words made the model say {word!r}? (logit {gradient.target_value:.1f})",
        probability_rows=[attention_name],
    )
