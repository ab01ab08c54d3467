"""Figures for lectures: attention heatmaps, training curves and contextual embeddings.

One import for everything drawn with matplotlib; the pieces live in their own modules:

- :mod:`minibert.viz.attention`  the numbers behind the heatmaps (head average, attention
  rollout, word-piece merging, token selection), as pure NumPy functions;
- :mod:`minibert.viz.heatmaps`   :func:`attention_figure`, every attention view;
- :mod:`minibert.viz.training`   :func:`training_curves_figure` from the trainer's history;
- :mod:`minibert.viz.embeddings` :func:`contextual_similarity_figure`, one word across contexts;
- :mod:`minibert.viz.saliency`   :func:`saliency_figure`, token attributions beside attention;
- :mod:`minibert.viz.explorer`   :func:`explore`, the interactive page (head, model, neuron,
  backward, aggregation and timeline views), self-contained HTML;
- :mod:`minibert.viz.style`      :func:`lecture_style` and :func:`save_figure` (PNG, SVG, PDF).

Layers and heads are counted from 0 everywhere, as in ``out.attentions[layer][:, head]``:
``layer=1, head=0`` draws a figure titled "layer 1 · head 0" (docs/visualization.md).
Every function returns a ``matplotlib.figure.Figure`` built without pyplot, so nothing is
shown or kept open behind the caller's back. Usage::

    from minibert import viz
    fig = viz.attention_figure(out.attentions, tokens, view="head", layer=2, head=5)
    viz.save_figure(fig, "head_2_5.png")
"""

from minibert.viz.attention import (
    SPECIAL_TOKEN_MODES,
    SPECIAL_TOKENS,
    attention_rollout,
    for_display,
    head_average,
    merge_word_pieces,
    renormalize_rows,
    select_tokens,
    stack_attentions,
    token_attention,
    word_groups,
)
from minibert.viz.embeddings import (
    contextual_similarity,
    contextual_similarity_figure,
    word_vectors,
)
from minibert.viz.explorer import Explorer, explore
from minibert.viz.heatmaps import TOKEN_DIRECTIONS, VIEWS, attention_figure
from minibert.viz.lecture_set import HEAD_JOBS, best_head, head_job_scores
from minibert.viz.saliency import fill_mask_saliency_figure, saliency_figure
from minibert.viz.style import (
    ATTENTION_CMAP,
    DEFAULT_DPI,
    SAVE_FORMATS,
    figure_size,
    lecture_style,
    save_figure,
    thin_labels,
)
from minibert.viz.training import history_series, training_curves_figure

__all__ = [
    "ATTENTION_CMAP",
    "DEFAULT_DPI",
    "Explorer",
    "HEAD_JOBS",
    "SAVE_FORMATS",
    "SPECIAL_TOKENS",
    "SPECIAL_TOKEN_MODES",
    "TOKEN_DIRECTIONS",
    "VIEWS",
    "attention_figure",
    "attention_rollout",
    "best_head",
    "contextual_similarity",
    "contextual_similarity_figure",
    "explore",
    "figure_size",
    "fill_mask_saliency_figure",
    "for_display",
    "head_job_scores",
    "head_average",
    "history_series",
    "lecture_style",
    "merge_word_pieces",
    "renormalize_rows",
    "saliency_figure",
    "save_figure",
    "select_tokens",
    "stack_attentions",
    "thin_labels",
    "token_attention",
    "training_curves_figure",
    "word_groups",
    "word_vectors",
]
