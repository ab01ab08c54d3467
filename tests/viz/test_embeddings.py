"""viz.embeddings: contextual similarity equals cosines computed one by one, and bad input
is refused. Headless: the Agg backend, no window opens.
"""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from small_models import (  # noqa: E402
    tick_texts,
)

from minibert import viz  # noqa: E402

# ----- contextual embeddings ------------------------------------------------------------


@pytest.fixture
def contexts():
    """Hidden states (L+1 arrays (C, T, H)) of 4 contexts; the word sits at varying positions."""
    rng = np.random.default_rng(11)
    hidden_states = tuple(rng.normal(size=(4, 9, 16)) for _ in range(5))
    return hidden_states, [3, 5, [1, 2], 7]


def cosine(u, v):
    return float(np.dot(u, v) / math.sqrt(np.dot(u, u) * np.dot(v, v)))


def test_contextual_similarity_matches_cosines_computed_one_by_one(contexts):
    hidden_states, positions = contexts
    similarity = viz.contextual_similarity(hidden_states, positions)
    assert similarity.shape == (5, 4, 4)
    for layer in range(5):
        vectors = [
            hidden_states[layer][0, 3],
            hidden_states[layer][1, 5],
            (hidden_states[layer][2, 1] + hidden_states[layer][2, 2]) / 2,
            hidden_states[layer][3, 7],
        ]
        for i in range(4):
            for j in range(4):
                assert similarity[layer, i, j] == pytest.approx(cosine(vectors[i], vectors[j]))


def test_contextual_similarity_accepts_one_forward_pass_per_context(contexts):
    hidden_states, positions = contexts
    per_context = [tuple(layer[c : c + 1] for layer in hidden_states) for c in range(4)]
    per_context[1] = tuple(layer[1] for layer in hidden_states)  # (T, H) works too
    np.testing.assert_allclose(
        viz.contextual_similarity(per_context, positions),
        viz.contextual_similarity(hidden_states, positions),
    )
    shorter = [tuple(layer[c, : 8 - c] for layer in hidden_states) for c in range(4)]
    assert viz.contextual_similarity(shorter, [0, 1, 2, 3]).shape == (5, 4, 4)


def test_contextual_similarity_figure_draws_each_pair_and_the_means(contexts):
    hidden_states, positions = contexts
    senses = ["river", "money", "river", "money"]
    fig = viz.contextual_similarity_figure(
        hidden_states, positions, senses, labels=["r1", "m1", "r2", "m2"], word="bank"
    )
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.lines}
    similarity = viz.contextual_similarity(hidden_states, positions)
    np.testing.assert_allclose(lines["r1 – r2"].get_ydata(), similarity[:, 0, 2])
    assert lines["r1 – r2"].get_linestyle() == "-"
    assert lines["r1 – m1"].get_linestyle() == "--"
    different = [similarity[:, i, j] for i, j in [(0, 1), (0, 3), (1, 2), (2, 3)]]
    np.testing.assert_allclose(
        lines["different senses (mean of 4)"].get_ydata(), np.mean(different, axis=0)
    )
    np.testing.assert_allclose(
        lines["same sense (mean of 2)"].get_ydata(), (similarity[:, 0, 2] + similarity[:, 1, 3]) / 2
    )
    assert tick_texts(ax.get_xticklabels()) == ["emb", "0", "1", "2", "3"]  # after layer l, from 0


def test_a_zero_vector_gives_similarity_zero_not_nan():
    states = tuple(np.zeros((2, 3, 4)) for _ in range(2))
    similarity = viz.contextual_similarity(states, [0, 1])
    assert np.all(np.isfinite(similarity))
    assert similarity[0, 0, 1] == 0.0


def test_contextual_similarity_refuses_bad_input(contexts):
    hidden_states, positions = contexts
    with pytest.raises(ValueError, match="positions has 3 entries"):
        viz.contextual_similarity(hidden_states, positions[:3])
    with pytest.raises(ValueError, match=r"positions\[1\] must be in 0\.\.8"):
        viz.contextual_similarity(hidden_states, [0, 9, 0, 0])
    with pytest.raises(ValueError, match=r"positions\[2\] is empty"):
        viz.contextual_similarity(hidden_states, [0, 1, [], 0])
    with pytest.raises(ValueError, match="of one shape"):
        viz.contextual_similarity(hidden_states[:2] + (np.zeros((4, 9, 8)),), positions)
    with pytest.raises(ValueError, match="senses has 3 entries"):
        viz.contextual_similarity_figure(hidden_states, positions, ["a", "b", "a"])
    with pytest.raises(ValueError, match="at least 2 contexts"):
        viz.contextual_similarity_figure(tuple(s[:1] for s in hidden_states), [0], ["a"])
    with pytest.raises(TypeError, match="hidden_states"):
        viz.contextual_similarity("states", positions)
