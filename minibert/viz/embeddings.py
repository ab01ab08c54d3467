"""Contextual embeddings: how similar is one word's vector across contexts, layer by layer?

The embedding layer gives "bank" the same vector in "river bank" and "bank loan" (up to
the position and segment embeddings); each encoder layer mixes in the context, so vectors
of the same sense should stay close while different senses drift apart (Ethayarajh, 2019,
"How Contextual are Contextualized Word Representations?").
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
from matplotlib.figure import Figure

from minibert.viz.attention import as_float_array, check_index
from minibert.viz.style import MAX_FIGURE_SIZE, figure_size, lecture_style

__all__ = ["word_vectors", "contextual_similarity", "contextual_similarity_figure"]


def _context_states(hidden_states) -> list[list[np.ndarray]]:
    """Split hidden states into contexts[c][layer] = (T_c, H) arrays."""
    if isinstance(hidden_states, (str, bytes, dict)) or not isinstance(hidden_states, Sequence):
        raise TypeError(
            "hidden_states must be a tuple of L+1 arrays (B, T, H) or a list with one such "
            f"tuple per context, got {type(hidden_states).__name__}"
        )
    if len(hidden_states) == 0:
        raise ValueError("hidden_states is empty; give the L+1 arrays (B, T, H)")
    if isinstance(hidden_states[0], (list, tuple)):
        # One forward pass per context: each entry is that context's L+1 arrays.
        contexts = []
        for c, states in enumerate(hidden_states):
            layers = [as_float_array(s, f"hidden_states[{c}]") for s in states]
            layers = [s[0] if s.ndim == 3 and s.shape[0] == 1 else s for s in layers]
            if any(s.ndim != 2 for s in layers):
                raise ValueError(
                    f"hidden_states[{c}] must hold arrays (T, H) or (1, T, H), got shapes "
                    f"{[np.shape(s) for s in states]}"
                )
            contexts.append(layers)
    else:
        # One batch holding every context: L+1 arrays (B, T, H).
        layers = [as_float_array(s, f"hidden_states[{i}]") for i, s in enumerate(hidden_states)]
        if any(s.ndim != 3 or s.shape != layers[0].shape for s in layers):
            raise ValueError(
                "hidden_states must be L+1 arrays of one shape (B, T, H), got shapes "
                f"{[s.shape for s in layers]}"
            )
        contexts = [[s[b] for s in layers] for b in range(layers[0].shape[0])]
    n_layers = len(contexts[0])
    widths = {s.shape[-1] for layers in contexts for s in layers}
    if any(len(layers) != n_layers for layers in contexts) or len(widths) != 1:
        raise ValueError(
            "every context needs the same number of hidden states (L+1) and hidden size H, "
            f"got {[len(layers) for layers in contexts]} states of sizes {sorted(widths)}"
        )
    return contexts


def word_vectors(hidden_states, positions: Sequence) -> np.ndarray:
    """The target word's vector in every context and layer.

    Inputs:
        hidden_states: ``out.hidden_states`` for a batch with one context per example, a
            tuple of L+1 arrays (B, T, H) (index 0 = embedding output); or a list with one
            such tuple per context, each of L+1 arrays (T, H) or (1, T, H).
        positions: one entry per context (C,): the word's position in that context, or a
            list of positions when the word is split into pieces (their vectors are averaged).
    Returns:
        (L+1, C, H) vectors.
    """
    contexts = _context_states(hidden_states)
    if isinstance(positions, (str, bytes)) or not isinstance(positions, Sequence):
        raise TypeError(f"positions must be a list with one entry per context, got {positions!r}")
    if len(positions) != len(contexts):
        raise ValueError(
            f"positions has {len(positions)} entries but hidden_states hold {len(contexts)} "
            "contexts; give one position (or list of positions) per context"
        )
    vectors = []
    for c, (layers, position) in enumerate(zip(contexts, positions, strict=True)):
        pieces = list(position) if isinstance(position, (list, tuple)) else [position]
        if not pieces:
            raise ValueError(f"positions[{c}] is empty; give at least one position")
        length = layers[0].shape[0]
        pieces = [
            check_index(p, f"positions[{c}]", length, f"context {c} has {length} tokens")
            for p in pieces
        ]
        vectors.append(np.stack([states[pieces].mean(axis=0) for states in layers]))  # (L+1, H)
    return np.stack(vectors, axis=1)  # (L+1, C, H)


def contextual_similarity(hidden_states, positions: Sequence) -> np.ndarray:
    """Cosine similarity of one word's vectors across contexts, at every layer.

    Inputs:
        hidden_states, positions: see :func:`word_vectors`.
    Returns:
        (L+1, C, C): ``similarity[l, i, j]`` compares context i with context j after
        hidden state l (0 = embeddings, l = encoder layer l - 1). A zero vector has
        similarity 0 with everything.
    """
    vectors = word_vectors(hidden_states, positions)  # (L+1, C, H)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)  # (L+1, C, 1)
    unit = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    similarity = unit @ np.swapaxes(unit, -1, -2)  # (L+1, C, C)
    return np.clip(similarity, -1.0, 1.0)


def contextual_similarity_figure(
    hidden_states,
    positions: Sequence,
    senses: Sequence,
    labels: Sequence[str] | None = None,
    word: str | None = None,
    title: str | None = None,
    max_size: tuple[float, float] = MAX_FIGURE_SIZE,
) -> Figure:
    """Plot, layer by layer, the similarity of every pair of contexts of one word.

    Inputs:
        hidden_states, positions: see :func:`word_vectors` (C contexts, C >= 2).
        senses: (C,) the word's sense in each context, e.g. ``["river", "money", "river"]``;
            pairs of the same sense are solid lines, pairs of different senses dashed, and
            the thick lines are the means of each group.
        labels: optional (C,) short names of the contexts, shown in the legend when there
            are at most 6 pairs.
        word: the word, for the title.
        title: replaces the default title.
        max_size: largest figure size (inches).
    Returns:
        a ``matplotlib.figure.Figure``.
    """
    similarity = contextual_similarity(hidden_states, positions)  # (L+1, C, C)
    n_states, n_contexts = similarity.shape[:2]
    if n_contexts < 2:
        raise ValueError(f"need at least 2 contexts to compare, got {n_contexts}")
    if isinstance(senses, str) or not isinstance(senses, Sequence):
        raise TypeError(f"senses must be a list with one sense per context, got {senses!r}")
    for name, values in (("senses", senses), ("labels", labels)):
        if values is not None and len(values) != n_contexts:
            raise ValueError(
                f"{name} has {len(values)} entries but there are {n_contexts} contexts"
            )
    pairs = list(combinations(range(n_contexts), 2))
    same = [senses[i] == senses[j] for i, j in pairs]
    layers = np.arange(n_states)
    with lecture_style():
        fig = Figure(figsize=figure_size(12.0, 5.5, max_size), layout="constrained")
        ax = fig.add_subplot()
        colors = {True: "#0072B2", False: "#D55E00"}
        styles = {True: "-", False: "--"}
        for (i, j), is_same in zip(pairs, same, strict=True):
            name = None
            if labels is not None and len(pairs) <= 6:
                name = f"{labels[i]} – {labels[j]}"
            ax.plot(
                layers,
                similarity[:, i, j],
                color=colors[is_same],
                linestyle=styles[is_same],
                linewidth=1.2,
                alpha=0.5,
                label=name,
            )
        for is_same, group in ((True, "same sense"), (False, "different senses")):
            chosen = [pair for pair, flag in zip(pairs, same, strict=True) if flag == is_same]
            if not chosen:
                continue
            mean = np.mean([similarity[:, i, j] for i, j in chosen], axis=0)  # (L+1,)
            ax.plot(
                layers,
                mean,
                color=colors[is_same],
                linestyle=styles[is_same],
                linewidth=3.5,
                marker="o" if is_same else "s",
                label=f"{group} (mean of {len(chosen)})",
            )
        # hidden_states[l + 1] is the output of encoder layer l, counted from 0 as everywhere.
        ax.set_xticks(layers, ["emb"] + [str(layer) for layer in range(n_states - 1)])
        ax.set_xlabel("after encoder layer, counted from 0 (emb = embedding output)")
        ax.set_ylabel("cosine similarity")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
        ax.set_title(
            title
            or (f"{word!r} in different contexts" if word else "One word in different contexts")
        )
    return fig
