"""Tests for minibert's figures: the numbers drawn equal the numbers computed, the
computations match hand-worked and loop-based references, exports are valid files and every
bad input is refused with a helpful message. Headless: the Agg backend, no window opens.
"""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import colormaps  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from minibert import viz  # noqa: E402
from minibert.viz.attention import (  # noqa: E402
    attention_example,
    find_token,
    for_display,
)
from minibert.viz.style import MAX_FIGURE_SIZE  # noqa: E402

TOKENS = [
    "[CLS]", "the", "river", "bank", "was", "un", "##bel", "##ievably", "steep", "[SEP]",
    "she", "sat", "there", "[SEP]", "[PAD]", "[PAD]",
]  # fmt: skip
SEGMENTS = [0] * 10 + [1] * 4 + [0] * 2
N_REAL = 14  # TOKENS without the two [PAD]


def softmax_attentions(rng, n_layers, batch, n_heads, mask):
    """Attention probabilities from random logits; masked keys get exactly 0.

    mask: (B, T), 1 = real token. Returns a tuple of L arrays (B, N, T, T), like the model.
    """
    length = mask.shape[1]
    logits = 2.0 * rng.normal(size=(n_layers, batch, n_heads, length, length))
    logits = np.where(mask[None, :, None, None, :] > 0, logits, -np.inf)
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    return tuple(probs)


@pytest.fixture
def batch():
    """Two examples of TOKENS, the second with four more padded positions."""
    rng = np.random.default_rng(1234)
    mask = np.ones((2, len(TOKENS)))
    mask[:, N_REAL:] = 0
    mask[1, N_REAL - 4 :] = 0
    attentions = softmax_attentions(rng, n_layers=3, batch=2, n_heads=4, mask=mask)
    return attentions, mask


def heatmaps(fig):
    """The heatmap axes of a figure, in drawing order (colour bars hold no image)."""
    return [ax for ax in fig.axes if ax.images]


def drawn(ax):
    """The array an axes' image shows."""
    return np.asarray(ax.images[0].get_array(), dtype=np.float64)


def tick_texts(labels):
    return [label.get_text() for label in labels]


def real(matrix):
    """Rows and columns of the first example's real tokens."""
    return matrix[..., :N_REAL, :N_REAL]


# ----- the numbers drawn are the numbers given -------------------------------------------


def test_head_view_draws_the_input_matrix_with_token_labels(batch):
    attentions, mask = batch
    fig = viz.attention_figure(attentions, TOKENS, "head", layer=1, head=2, attention_mask=mask)
    assert isinstance(fig, Figure)
    (ax,) = heatmaps(fig)
    np.testing.assert_array_equal(drawn(ax), real(attentions[1][0, 2]))
    assert fig.get_suptitle() == "layer 1 · head 2"
    assert ax.get_title() == "out.attentions[1][:, 2] · 3 layers × 4 heads, counted from 0"
    assert tick_texts(ax.get_xticklabels()) == TOKENS[:N_REAL]
    assert tick_texts(ax.get_yticklabels()) == TOKENS[:N_REAL]


def test_layers_and_heads_count_from_zero(batch):
    attentions, mask = batch
    fig = viz.attention_figure(attentions, TOKENS, "head", layer=0, head=0, attention_mask=mask)
    np.testing.assert_array_equal(drawn(heatmaps(fig)[0]), real(attentions[0][0, 0]))
    with pytest.raises(ValueError, match=r"0\.\.2"):
        viz.attention_figure(attentions, TOKENS, "head", layer=3, head=0, attention_mask=mask)


def test_batch_index_picks_the_example_and_its_padding(batch):
    attentions, mask = batch
    fig = viz.attention_figure(
        attentions, TOKENS, "head", layer=2, head=3, attention_mask=mask, batch_index=1
    )
    keep = N_REAL - 4
    np.testing.assert_array_equal(drawn(heatmaps(fig)[0]), attentions[2][1, 3][:keep, :keep])


def test_every_input_form_gives_the_same_stack(batch):
    attentions, _ = batch
    expected = np.stack([a[1] for a in attentions])  # (L, N, T, T)
    forms = [
        attentions,
        list(attentions),
        np.stack(attentions),  # (L, B, N, T, T)
        [a[1] for a in attentions],  # L arrays (N, T, T)
        tuple(a.astype(np.float32) for a in attentions),
    ]
    for form, index in zip(forms, [1, 1, 1, 0, 1], strict=True):
        np.testing.assert_allclose(viz.stack_attentions(form, batch_index=index), expected, 1e-6)
    np.testing.assert_array_equal(viz.stack_attentions(expected), expected)


def test_padding_is_dropped_by_default_and_found_from_pad_tokens_without_a_mask(batch):
    attentions, mask = batch
    with_mask = viz.attention_figure(
        attentions, TOKENS, "head", layer=0, head=1, attention_mask=mask
    )
    without_mask = viz.attention_figure(attentions, TOKENS, "head", layer=0, head=1)
    for fig in (with_mask, without_mask):
        (ax,) = heatmaps(fig)
        assert drawn(ax).shape == (N_REAL, N_REAL)
        assert "[PAD]" not in tick_texts(ax.get_xticklabels())


def test_kept_padding_shows_masked_keys_as_exact_zeros(batch):
    attentions, mask = batch
    fig = viz.attention_figure(
        attentions, TOKENS, "head", layer=2, head=0, attention_mask=mask, drop_padding=False
    )
    image = drawn(heatmaps(fig)[0])
    np.testing.assert_array_equal(image, attentions[2][0, 0])
    assert np.all(image[:, N_REAL:] == 0.0)
    np.testing.assert_allclose(image.sum(axis=-1), 1.0, atol=1e-12)


def test_layer_view_draws_every_head(batch):
    attentions, mask = batch
    fig = viz.attention_figure(attentions, TOKENS, "layer", layer=2, attention_mask=mask)
    axes = heatmaps(fig)
    assert len(axes) == 4
    for head, ax in enumerate(axes):
        np.testing.assert_array_equal(drawn(ax), real(attentions[2][0, head]))
        assert ax.get_title() == f"head {head}"
    assert fig.get_suptitle() == "layer 2: its 4 heads (counted from 0)"


def test_model_view_draws_layers_as_rows_and_heads_as_columns(batch):
    attentions, mask = batch
    fig = viz.attention_figure(attentions, TOKENS, "model", attention_mask=mask)
    axes = heatmaps(fig)
    assert len(axes) == 3 * 4
    for index, ax in enumerate(axes):
        layer, head = divmod(index, 4)
        np.testing.assert_array_equal(drawn(ax), real(attentions[layer][0, head]))


def test_one_colour_scale_is_shared_by_all_panels(batch):
    attentions, mask = batch
    fig = viz.attention_figure(attentions, TOKENS, "model", attention_mask=mask)
    assert {ax.images[0].get_clim() for ax in heatmaps(fig)} == {(0.0, 1.0)}
    fig = viz.attention_figure(attentions, TOKENS, "model", vmax="auto", attention_mask=mask)
    top = max(real(a[0]).max() for a in attentions)
    assert {ax.images[0].get_clim() for ax in heatmaps(fig)} == {(0.0, top)}


def test_token_view_shapes_and_values(batch):
    attentions, mask = batch
    stack = real(np.stack([a[0] for a in attentions]))  # (L, N, T, T)
    fig = viz.attention_figure(attentions, TOKENS, "token", token="bank", attention_mask=mask)
    attends_to, attended_by = heatmaps(fig)
    assert drawn(attends_to).shape == (3 * 4, N_REAL)
    np.testing.assert_array_equal(drawn(attends_to), stack[:, :, 3, :].reshape(12, N_REAL))
    np.testing.assert_array_equal(drawn(attended_by), stack[:, :, :, 3].reshape(12, N_REAL))
    np.testing.assert_allclose(drawn(attends_to).sum(axis=-1), 1.0, atol=1e-12)
    fig = viz.attention_figure(
        attentions, TOKENS, "token", token=3, direction="attended_by", attention_mask=mask
    )
    (only,) = heatmaps(fig)
    np.testing.assert_array_equal(drawn(only), stack[:, :, :, 3].reshape(12, N_REAL))


def test_token_attention_returns_row_and_column():
    rng = np.random.default_rng(5)
    stack = rng.random((2, 3, 6, 6))
    attends_to, attended_by = viz.token_attention(stack, 4)
    assert attends_to.shape == attended_by.shape == (2, 3, 6)
    for layer in range(2):
        for head in range(3):
            for other in range(6):
                assert attends_to[layer, head, other] == stack[layer, head, 4, other]
                assert attended_by[layer, head, other] == stack[layer, head, other, 4]


def test_average_view_draws_the_head_mean(batch):
    attentions, mask = batch
    fig = viz.attention_figure(attentions, TOKENS, "average", attention_mask=mask)
    axes = heatmaps(fig)
    assert len(axes) == 3
    for layer, ax in enumerate(axes):
        expected = sum(real(attentions[layer][0, h]) for h in range(4)) / 4
        np.testing.assert_allclose(drawn(ax), expected, atol=1e-15)
    fig = viz.attention_figure(attentions, TOKENS, "average", layer=1, attention_mask=mask)
    expected = sum(real(attentions[1][0, h]) for h in range(4)) / 4
    np.testing.assert_allclose(drawn(heatmaps(fig)[0]), expected, atol=1e-15)


def test_rollout_view_draws_the_rollout_of_the_real_tokens(batch):
    attentions, mask = batch
    stack = real(np.stack([a[0] for a in attentions]))
    fig = viz.attention_figure(attentions, TOKENS, "rollout", attention_mask=mask)
    np.testing.assert_allclose(drawn(heatmaps(fig)[0]), loop_rollout(stack)[-1], atol=1e-14)
    fig = viz.attention_figure(attentions, TOKENS, "rollout", layer=0, attention_mask=mask)
    np.testing.assert_allclose(drawn(heatmaps(fig)[0]), loop_rollout(stack)[0], atol=1e-14)


# ----- head average and rollout ---------------------------------------------------------


def test_head_average_is_the_mean_over_heads():
    stack = np.random.default_rng(2).random((3, 5, 4, 4))
    averaged = viz.head_average(stack)
    assert averaged.shape == (3, 4, 4)
    np.testing.assert_allclose(
        averaged[1], (stack[1, 0] + stack[1, 1] + stack[1, 2] + stack[1, 3] + stack[1, 4]) / 5
    )
    assert viz.head_average(stack[0]).shape == (4, 4)


def test_rollout_on_a_hand_checked_two_layer_example():
    # Two heads per layer whose mean is the matrix in the comment.
    layer_0 = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [1.0, 0.0]]])  # mean [[1,0],[.5,.5]]
    layer_1 = np.array([[[0.0, 1.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]]])  # mean [[0,1],[1,0]]
    rollout = viz.attention_rollout(np.stack([layer_0, layer_1]))
    # 0.5 A + 0.5 I per layer: [[1, 0], [.25, .75]] and [[.5, .5], [.5, .5]].
    np.testing.assert_allclose(rollout[0], [[1.0, 0.0], [0.25, 0.75]])
    # [[.5, .5], [.5, .5]] @ [[1, 0], [.25, .75]] = [[.625, .375], [.625, .375]]
    np.testing.assert_allclose(rollout[1], [[0.625, 0.375], [0.625, 0.375]])
    without = viz.attention_rollout(np.stack([layer_0, layer_1]), add_residual=False)
    np.testing.assert_allclose(without[1], [[0.5, 0.5], [1.0, 0.0]])


def test_rollout_renormalizes_rows_rather_than_halving():
    # A query that sees no key (an all-zero row) keeps only its residual path: A_hat row = e_i.
    stack = np.array([[[[0.0, 0.0], [0.4, 0.6]]]])  # (L=1, N=1, T=2, T=2)
    np.testing.assert_allclose(viz.attention_rollout(stack)[0], [[1.0, 0.0], [0.2, 0.8]])


def loop_rollout(stack):
    """Attention rollout written with plain loops, as an independent reference."""
    n_layers, n_heads, length, _ = stack.shape
    result = []
    previous = None
    for layer in range(n_layers):
        mixed = [[0.0] * length for _ in range(length)]
        for i in range(length):
            row = [
                sum(stack[layer, h, i, j] for h in range(n_heads)) / n_heads
                + (1.0 if i == j else 0.0)
                for j in range(length)
            ]
            total = sum(row)
            mixed[i] = [value / total for value in row]
        if previous is None:
            current = mixed
        else:
            current = [
                [sum(mixed[i][k] * previous[k][j] for k in range(length)) for j in range(length)]
                for i in range(length)
            ]
        result.append(current)
        previous = current
    return np.array(result)


def test_rollout_matches_a_loop_implementation_and_rows_sum_to_one():
    rng = np.random.default_rng(3)
    mask = np.ones((1, 7))
    stack = np.stack([a[0] for a in softmax_attentions(rng, 4, 1, 3, mask)])
    rollout = viz.attention_rollout(stack)
    np.testing.assert_allclose(rollout, loop_rollout(stack), atol=1e-14)
    np.testing.assert_allclose(rollout.sum(axis=-1), 1.0, atol=1e-12)


def test_computations_leave_their_inputs_alone():
    stack = np.random.default_rng(4).random((2, 2, 5, 5))
    before = stack.copy()
    viz.attention_rollout(stack)
    viz.head_average(stack)
    viz.select_tokens(stack, list("abcde"), [0, 2], renormalize=True)
    viz.merge_word_pieces(stack, ["a", "##b", "c", "##d", "e"])
    np.testing.assert_array_equal(stack, before)


# ----- special tokens, word pieces, spans ------------------------------------------------


def test_hide_special_drops_cls_and_sep_rows_and_columns(batch):
    attentions, mask = batch
    keep = [i for i, t in enumerate(TOKENS[:N_REAL]) if t not in ("[CLS]", "[SEP]")]
    fig = viz.attention_figure(
        attentions, TOKENS, "head", layer=1, head=1, attention_mask=mask, hide_special="hide"
    )
    (ax,) = heatmaps(fig)
    expected = attentions[1][0, 1][np.ix_(keep, keep)]
    np.testing.assert_array_equal(drawn(ax), expected)
    assert tick_texts(ax.get_xticklabels()) == [TOKENS[i] for i in keep]
    assert np.all(drawn(ax).sum(axis=-1) < 1.0)
    same = viz.attention_figure(
        attentions, TOKENS, "head", layer=1, head=1, attention_mask=mask, hide_special=True
    )
    np.testing.assert_array_equal(drawn(heatmaps(same)[0]), expected)


def test_renormalize_rows_sum_to_one(batch):
    attentions, mask = batch
    keep = [i for i, t in enumerate(TOKENS[:N_REAL]) if t not in ("[CLS]", "[SEP]")]
    for view, options in (
        ("head", {"layer": 2, "head": 3}),
        ("rollout", {}),
        ("average", {"layer": 0}),
    ):
        fig = viz.attention_figure(
            attentions, TOKENS, view, attention_mask=mask, hide_special="renormalize", **options
        )
        image = drawn(heatmaps(fig)[0])
        assert image.shape == (len(keep), len(keep))
        np.testing.assert_allclose(image.sum(axis=-1), 1.0, atol=1e-12)
    sub = attentions[2][0, 3][np.ix_(keep, keep)]
    fig = viz.attention_figure(
        attentions, TOKENS, "head", layer=2, head=3, attention_mask=mask, hide_special="renormalize"
    )
    np.testing.assert_allclose(drawn(heatmaps(fig)[0]), sub / sub.sum(axis=1, keepdims=True))


def test_renormalize_leaves_an_all_zero_row_at_zero_not_nan():
    matrix = np.array([[0.0, 0.0, 1.0], [0.2, 0.3, 0.5], [0.0, 0.0, 0.0]])
    result = viz.renormalize_rows(matrix)
    np.testing.assert_allclose(result, [[0, 0, 1], [0.2, 0.3, 0.5], [0, 0, 0]])
    selected, kept = viz.select_tokens(matrix, ["x", "y", "z"], [0, 1], renormalize=True)
    np.testing.assert_array_equal(selected, [[0.0, 0.0], [0.4, 0.6]])
    assert kept == ["x", "y"]


def test_word_groups_follow_the_double_hash_rule():
    tokens = ["[CLS]", "un", "##bel", "##ievable", "news", "[SEP]", "##x", "[PAD]"]
    assert viz.word_groups(tokens) == [[0], [1, 2, 3], [4], [5], [6], [7]]


def test_merge_word_pieces_on_a_hand_computed_example():
    tokens = ["[CLS]", "un", "##bel", "x"]
    matrix = np.array(
        [
            [0.1, 0.2, 0.3, 0.4],
            [0.5, 0.1, 0.1, 0.3],
            [0.0, 0.6, 0.2, 0.2],
            [0.25, 0.25, 0.25, 0.25],
        ]
    )
    merged, words = viz.merge_word_pieces(matrix, tokens)
    assert words == ["[CLS]", "unbel", "x"]
    # Columns of "un" and "##bel" add; rows of "un" and "##bel" average.
    expected = np.array(
        [
            [0.1, 0.5, 0.4],
            [(0.5 + 0.0) / 2, (0.2 + 0.8) / 2, (0.3 + 0.2) / 2],
            [0.25, 0.5, 0.25],
        ]
    )
    np.testing.assert_allclose(merged, expected, atol=1e-15)
    np.testing.assert_allclose(merged.sum(axis=-1), 1.0)


def test_merged_words_match_a_loop_reference_and_rows_sum_to_one(batch):
    attentions, mask = batch
    fig = viz.attention_figure(
        attentions, TOKENS, "head", layer=0, head=2, attention_mask=mask, merge_pieces=True
    )
    (ax,) = heatmaps(fig)
    words = [
        "[CLS]",
        "the",
        "river",
        "bank",
        "was",
        "unbelievably",
        "steep",
        "[SEP]",
        "she",
        "sat",
        "there",
        "[SEP]",
    ]
    assert tick_texts(ax.get_xticklabels()) == words
    groups = [[0], [1], [2], [3], [4], [5, 6, 7], [8], [9], [10], [11], [12], [13]]
    head = attentions[0][0, 2]
    expected = np.array(
        [
            [np.mean([sum(head[q, k] for k in keys) for q in queries]) for keys in groups]
            for queries in groups
        ]
    )
    np.testing.assert_allclose(drawn(ax), expected, atol=1e-15)
    np.testing.assert_allclose(drawn(ax).sum(axis=-1), 1.0, atol=1e-12)


def test_merge_with_renormalize_still_sums_to_one(batch):
    attentions, mask = batch
    fig = viz.attention_figure(
        attentions,
        TOKENS,
        "layer",
        layer=1,
        attention_mask=mask,
        merge_pieces=True,
        hide_special="renormalize",
    )
    for ax in heatmaps(fig):
        assert drawn(ax).shape == (9, 9)  # the .. steep she sat there
        np.testing.assert_allclose(drawn(ax).sum(axis=-1), 1.0, atol=1e-12)


def test_span_crops_rows_and_columns_without_renormalizing(batch):
    attentions, mask = batch
    fig = viz.attention_figure(
        attentions, TOKENS, "head", layer=0, head=0, attention_mask=mask, span=(2, 6)
    )
    (ax,) = heatmaps(fig)
    np.testing.assert_array_equal(drawn(ax), attentions[0][0, 0][2:6, 2:6])
    assert tick_texts(ax.get_xticklabels()) == TOKENS[2:6]
    # A word is kept when any of its pieces is in the span.
    fig = viz.attention_figure(
        attentions,
        TOKENS,
        "head",
        layer=0,
        head=0,
        attention_mask=mask,
        span=(6, 9),
        merge_pieces=True,
    )
    assert tick_texts(heatmaps(fig)[0].get_xticklabels()) == ["unbelievably", "steep"]


def test_token_lookup_by_word_and_by_position(batch):
    attentions, mask = batch
    example = attention_example(attentions, TOKENS, attention_mask=mask)
    display = for_display(example.attentions, example, merge_pieces=True)
    assert find_token(display, "unbelievably") == 5
    assert find_token(display, 7) == 5  # "##ievably" belongs to that word
    assert find_token(display, "[SEP]") == 7  # first occurrence


# ----- sentence separators, labels, annotations, sizes --------------------------------------


def separator_positions(ax):
    """Positions of the horizontal separator lines drawn on a heatmap."""
    horizontal = [line for line in ax.lines if line.get_ydata()[0] == line.get_ydata()[1]]
    return sorted({line.get_ydata()[0] for line in horizontal if line.get_color() == "black"})


def test_a_line_separates_sentence_a_from_sentence_b(batch):
    attentions, mask = batch
    fig = viz.attention_figure(
        attentions,
        TOKENS,
        "head",
        layer=0,
        head=0,
        attention_mask=mask,
        token_type_ids=np.array([SEGMENTS] * 2),
    )
    assert separator_positions(heatmaps(fig)[0]) == [9.5]
    fig = viz.attention_figure(
        attentions,
        TOKENS,
        "head",
        layer=0,
        head=0,
        attention_mask=mask,
        token_type_ids=SEGMENTS,
        merge_pieces=True,
        hide_special="hide",
    )
    # the, river, bank, was, unbelievably, steep | she, sat, there
    assert separator_positions(heatmaps(fig)[0]) == [5.5]
    fig = viz.attention_figure(attentions, TOKENS, "head", layer=0, head=0, attention_mask=mask)
    assert separator_positions(heatmaps(fig)[0]) == []


def test_labels_are_thinned_on_a_200_token_input():
    rng = np.random.default_rng(7)
    tokens = [f"w{i}" for i in range(200)]
    attentions = softmax_attentions(rng, 1, 1, 2, np.ones((1, 200)))
    fig = viz.attention_figure(attentions, tokens, "head", layer=0, head=1)
    (ax,) = heatmaps(fig)
    assert drawn(ax).shape == (200, 200)
    shown = tick_texts(ax.get_xticklabels())
    assert 20 <= len(shown) <= 40
    stride = math.ceil(200 / len(shown))
    assert shown == tokens[::stride]
    assert tick_texts(ax.get_yticklabels()) == shown
    width, height = fig.get_size_inches()
    assert width <= MAX_FIGURE_SIZE[0] + 1e-9 and height <= MAX_FIGURE_SIZE[1] + 1e-9
    fig = viz.attention_figure(attentions, tokens, "token", token=103)
    shown = tick_texts(heatmaps(fig)[0].get_xticklabels())
    assert len(shown) <= 40
    assert "w103" in shown  # the chosen token is always named


def test_thin_labels_keeps_everything_when_it_fits():
    labels = [str(i) for i in range(40)]
    assert viz.thin_labels(labels, 40) == (list(range(40)), labels)
    positions, shown = viz.thin_labels([str(i) for i in range(41)], 40)
    assert positions == list(range(0, 41, 2))
    with pytest.raises(ValueError, match="max_labels"):
        viz.thin_labels(labels, 0)


def test_figure_size_is_capped_and_keeps_the_aspect():
    assert viz.figure_size(10, 5) == (10, 5)
    width, height = viz.figure_size(64, 32, max_size=(16, 12))
    assert (width, height) == (16, 8)
    assert viz.figure_size(64, 32, max_size=(16, 12), keep_aspect=False) == (16, 12)
    assert viz.figure_size(1, 1) == (4.0, 3.0)


def test_annotations_print_every_value(batch):
    attentions, mask = batch
    fig = viz.attention_figure(
        attentions, TOKENS, "head", layer=0, head=0, attention_mask=mask, span=(0, 4), annotate=True
    )
    (ax,) = heatmaps(fig)
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 16
    assert texts[5] == f"{attentions[0][0, 0][1, 1]:.2f}"


# ----- projector rules: every token named, a fixed colour scale, titles counted from 0 -----


def forty_tokens():
    rng = np.random.default_rng(40)
    tokens = ["[CLS]"] + [f"word{i}" for i in range(38)] + ["[SEP]"]
    return softmax_attentions(rng, 2, 1, 3, np.ones((1, 40))), tokens


@pytest.mark.parametrize("view", ["head", "layer", "average", "rollout"])
def test_every_token_is_labelled_up_to_forty_tokens(view):
    attentions, tokens = forty_tokens()
    options = {"head": {"layer": 1, "head": 0}, "layer": {"layer": 0}}.get(view, {})
    fig = viz.attention_figure(attentions, tokens, view, **options)
    axes = heatmaps(fig)
    assert tick_texts(axes[-1].get_xticklabels()) == tokens  # bottom row
    assert tick_texts(axes[0].get_yticklabels()) == tokens  # left column
    sizes = {label.get_fontsize() for ax in axes for label in ax.get_xticklabels()}
    assert min(sizes) >= 6.0


def test_the_token_view_labels_every_token_up_to_forty():
    attentions, tokens = forty_tokens()
    fig = viz.attention_figure(attentions, tokens, "token", token="word7")
    for ax in heatmaps(fig):
        assert tick_texts(ax.get_xticklabels()) == tokens
        assert tick_texts(ax.get_yticklabels()) == ["layer 0", "layer 1"]
    assert "heads 0 to 2" in heatmaps(fig)[0].get_ylabel()


@pytest.mark.parametrize("view", ["head", "layer", "model", "token", "average", "rollout"])
def test_the_colour_scale_is_zero_to_one_unless_asked(view):
    attentions, tokens = forty_tokens()
    options = {"head": {"layer": 0, "head": 1}, "layer": {"layer": 1}, "token": {"token": 3}}
    fig = viz.attention_figure(attentions, tokens, view, **options.get(view, {}))
    assert {image.get_clim() for ax in fig.axes for image in ax.images} == {(0.0, 1.0)}
    assert all("colour scale" not in ax.get_ylabel() for ax in fig.axes)


def test_a_stretched_colour_scale_is_stated_on_the_colour_bar():
    # An untrained model's near-uniform map: 1/T everywhere, up to noise.
    attentions = (np.full((1, 1, 20, 20), 1 / 20) + 1e-3 * np.eye(20)[None, None],)
    tokens = [f"t{i}" for i in range(20)]
    fig = viz.attention_figure(attentions, tokens, "head", layer=0, head=0, vmax="auto")
    top = 1 / 20 + 1e-3
    assert {image.get_clim() for ax in fig.axes for image in ax.images} == {(0.0, top)}
    labels = " ".join(ax.get_ylabel() for ax in fig.axes)
    assert f"colour scale 0 to {top:.3g}, not 0 to 1" in labels


def test_titles_count_layers_and_heads_from_zero_like_the_arguments(batch):
    attentions, mask = batch
    fig = viz.attention_figure(attentions, TOKENS, "model", attention_mask=mask)
    axes = heatmaps(fig)
    assert [ax.get_title() for ax in axes[:4]] == ["head 0", "head 1", "head 2", "head 3"]
    assert [axes[i].get_ylabel() for i in (0, 4, 8)] == ["layer 0", "layer 1", "layer 2"]
    fig = viz.attention_figure(attentions, TOKENS, "rollout", attention_mask=mask)
    assert fig.get_suptitle() == "Attention rollout through layers 0 to 2"
    fig = viz.attention_figure(attentions, TOKENS, "average", layer=0, attention_mask=mask)
    assert fig.get_suptitle() == "layer 0 · mean of its 4 heads"
    fig = viz.attention_figure(attentions, TOKENS, "average", attention_mask=mask)
    assert [ax.get_title() for ax in heatmaps(fig)] == ["layer 0", "layer 1", "layer 2"]


@pytest.mark.parametrize(("layer", "head"), [(0, 0), (1, 3), (2, 1)])
def test_a_head_title_names_the_arguments_that_drew_it(batch, layer, head):
    attentions, mask = batch
    fig = viz.attention_figure(attentions, TOKENS, "head", layer=layer, head=head,
                               attention_mask=mask)
    (ax,) = heatmaps(fig)
    np.testing.assert_array_equal(drawn(ax), real(attentions[layer][0, head]))
    assert fig.get_suptitle() == f"layer {layer} · head {head}"
    assert ax.get_title().startswith(f"out.attentions[{layer}][:, {head}]")
    fig = viz.attention_figure(attentions, TOKENS, "layer", layer=layer, attention_mask=mask)
    assert fig.get_suptitle().startswith(f"layer {layer}:")


@pytest.mark.parametrize("n_heads", [2, 3, 5, 12])
def test_a_layer_grid_has_no_empty_cell(n_heads):
    rng = np.random.default_rng(n_heads)
    attentions = softmax_attentions(rng, 1, 1, n_heads, np.ones((1, 6)))
    fig = viz.attention_figure(attentions, list("abcdef"), "layer", layer=0)
    empty = [ax for ax in fig.axes if not ax.images and ax.get_label() != "<colorbar>"]
    assert len(heatmaps(fig)) == n_heads and empty == []


# ----- export and style -----------------------------------------------------------------


@pytest.fixture
def small_figure(batch):
    attentions, mask = batch
    return viz.attention_figure(attentions, TOKENS, "head", layer=0, head=0, attention_mask=mask)


@pytest.mark.parametrize("extension", ["png", "svg", "pdf", "PNG"])
def test_save_figure_writes_a_valid_file_of_each_format(small_figure, tmp_path, extension):
    path = viz.save_figure(small_figure, tmp_path / f"head.{extension}")
    data = path.read_bytes()
    assert len(data) > 1000
    if extension.lower() == "png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    elif extension == "pdf":
        assert data.startswith(b"%PDF")
        assert b"/FontFile2" in data  # TrueType text, editable once pasted into slides
    else:
        assert b"<svg" in data[:2000]
    assert [p.name for p in tmp_path.iterdir()] == [f"head.{extension}"]  # no temp file left


def test_png_resolution_follows_dpi(small_figure, tmp_path):
    low = viz.save_figure(small_figure, tmp_path / "low.png", dpi=50).read_bytes()
    high = viz.save_figure(small_figure, tmp_path / "high.png").read_bytes()
    low_width = int.from_bytes(low[16:20], "big")  # IHDR width
    high_width = int.from_bytes(high[16:20], "big")
    assert high_width / low_width == pytest.approx(viz.DEFAULT_DPI / 50, rel=0.05)


def test_save_figure_refuses_unknown_formats_and_non_figures(small_figure, tmp_path):
    with pytest.raises(ValueError, match=r"\.png, \.svg, \.pdf.*'\.jpg'"):
        viz.save_figure(small_figure, tmp_path / "head.jpg")
    with pytest.raises(ValueError, match="extension ''"):
        viz.save_figure(small_figure, tmp_path / "head")
    with pytest.raises(TypeError, match="Figure"):
        viz.save_figure("not a figure", tmp_path / "head.png")
    with pytest.raises(ValueError, match="dpi"):
        viz.save_figure(small_figure, tmp_path / "head.png", dpi=0)
    assert list(tmp_path.iterdir()) == []


def test_lecture_style_does_not_leak_into_global_settings():
    before = dict(matplotlib.rcParams)
    with viz.lecture_style():
        assert matplotlib.rcParams["font.size"] >= 14
        assert matplotlib.rcParams["image.cmap"] == viz.ATTENTION_CMAP
    assert dict(matplotlib.rcParams) == before


def test_figures_keep_large_fonts_after_the_style_block(small_figure):
    (ax,) = heatmaps(small_figure)
    assert small_figure.get_suptitle()
    assert small_figure._suptitle.get_fontsize() >= 16
    assert ax.xaxis.label.get_fontsize() >= 14


def lightness(rgb):
    """CIELAB L* of sRGB colours (n, 3) in [0, 1], D65 white."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    luminance = linear @ np.array([0.2126, 0.7152, 0.0722])
    delta = 6 / 29
    f = np.where(luminance > delta**3, np.cbrt(luminance), luminance / (3 * delta**2) + 4 / 29)
    return 116 * f - 16


def test_the_default_colour_map_is_monotonic_in_lightness():
    colors = colormaps[viz.ATTENTION_CMAP](np.linspace(0, 1, 256))[:, :3]
    values = lightness(colors)
    assert np.all(np.diff(values) > 0)  # grayscale keeps the order of the values
    assert values[-1] - values[0] > 70  # and spans most of the lightness range
    assert not np.all(np.diff(lightness(colormaps["jet"](np.linspace(0, 1, 256))[:, :3])) > 0)


# ----- training curves ------------------------------------------------------------------


HISTORY = [
    {"step": 0, "loss": 9.0, "lr": 0.0, "masked_lm_accuracy": 0.0, "split": "train"},
    {
        "step": 10,
        "loss": 7.5,
        "lr": 1e-4,
        "masked_lm_accuracy": 0.1,
        "split": "train",
        "masked_lm_loss": 7.0,
        "next_sentence_loss": 0.5,
        "next_sentence_accuracy": 0.6,
    },
    {"step": 10, "loss": 8.0, "masked_lm_accuracy": 0.05, "split": "heldout"},
    {"step": 20, "loss": np.float32(6.0), "lr": 5e-5, "split": "train", "elapsed": "0:03"},
    {"step": 20, "grad_norm": np.array(1.5), "split": "train"},
    {"step": 5, "loss": 8.5, "split": "train"},
    {"loss": 5.5},
]


def test_history_series_tolerates_missing_keys_and_sorts_by_step():
    series = viz.history_series(HISTORY)
    steps, values = series["loss"]["train"]
    np.testing.assert_array_equal(steps, [0, 5, 6, 10, 20])  # the last entry has index 6
    np.testing.assert_array_equal(values, [9.0, 8.5, 5.5, 7.5, 6.0])
    np.testing.assert_array_equal(series["loss"]["heldout"][1], [8.0])
    np.testing.assert_array_equal(series["next_sentence_accuracy"]["train"][0], [10])
    assert "elapsed" not in series
    np.testing.assert_array_equal(series["grad_norm"]["train"][1], [1.5])
    assert set(series["lr"]) == {"train"}


def test_history_series_keeps_a_diverged_value_as_a_gap():
    series = viz.history_series([{"step": 1, "loss": float("inf")}, {"step": 2, "loss": 1.0}])
    assert math.isnan(series["loss"]["train"][1][0])


def test_training_curves_plot_every_series():
    fig = viz.training_curves_figure(HISTORY, title="Pretraining")
    axes = {ax.get_title(): ax for ax in fig.axes if ax.lines}
    assert set(axes) == {
        "Loss",
        "Masked LM accuracy",
        "Next sentence accuracy",
        "Learning rate",
        "Gradient norm",
    }
    lines = {line.get_label(): line for line in axes["Loss"].lines}
    assert set(lines) == {
        "MLM + NSP (minimised) · train",
        "MLM + NSP (minimised) · held-out",
        "masked LM alone · train",
        "next sentence alone · train",
    }
    train, heldout = lines["MLM + NSP (minimised) · train"], \
        lines["MLM + NSP (minimised) · held-out"]
    np.testing.assert_array_equal(train.get_ydata(), [9.0, 8.5, 5.5, 7.5, 6.0])
    assert train.get_linestyle() == "-"
    assert heldout.get_linestyle() == "--"
    assert heldout.get_marker() == "o"
    # Held-out points drawn on top of the (lighter) training line.
    assert heldout.get_zorder() > train.get_zorder()
    assert axes["Masked LM accuracy"].get_ylim()[0] == 0.0


def test_training_curves_fill_their_grid_without_an_empty_cell():
    for history in (HISTORY, HISTORY[:3]):
        fig = viz.training_curves_figure(history)
        assert all(ax.lines for ax in fig.axes)
    fig = viz.training_curves_figure(HISTORY)
    assert len(fig.axes) == 5  # five panels, the loss panel twice as wide


def test_a_flat_learning_rate_gets_no_panel_and_no_offset_ticks():
    flat = [{"step": s, "loss": 5.0 - s / 10, "lr": 1e-3, "grad_norm": 1.0} for s in range(10)]
    fig = viz.training_curves_figure(flat, title="Run")
    assert "Learning rate" not in [ax.get_title() for ax in fig.axes]
    assert fig.get_suptitle() == "Run · learning rate 0.001 throughout"
    fig = viz.training_curves_figure(HISTORY)
    fig.canvas.draw()
    (lr_axes,) = [ax for ax in fig.axes if ax.get_title() == "Learning rate"]
    assert lr_axes.get_ylabel() == "learning rate (× 1e-4)"
    assert all(ax.yaxis.get_offset_text().get_text() == "" for ax in fig.axes)
    np.testing.assert_allclose(lr_axes.lines[0].get_ydata(), [0.0, 1.0, 0.5])


def test_training_curves_leave_out_panels_without_data():
    fig = viz.training_curves_figure([{"step": 1, "loss": 3.0}, {"step": 2, "loss": 2.0}])
    assert [ax.get_title() for ax in fig.axes if ax.lines] == ["Loss"]


def test_training_curves_refuse_bad_histories():
    with pytest.raises(ValueError, match="none of the keys"):
        viz.training_curves_figure([])
    with pytest.raises(ValueError, match="it holds epoch"):
        viz.training_curves_figure([{"step": 1, "epoch": 2}])
    with pytest.raises(TypeError, match=r"history\[1\] must be a dict"):
        viz.training_curves_figure([{"loss": 1.0}, 3.0])
    with pytest.raises(TypeError, match="list of dicts"):
        viz.training_curves_figure({"loss": 1.0})
    with pytest.raises(TypeError, match=r"history\[0\]\['loss'\] must be a number"):
        viz.training_curves_figure([{"loss": "high"}])
    with pytest.raises(TypeError, match=r"\['step'\] must be a number"):
        viz.training_curves_figure([{"step": "ten", "loss": 1.0}])


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


# ----- bad input for attention figures ---------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "pattern"),
    [
        ({"view": "head", "layer": 5, "head": 0}, ValueError, r"layer must be in 0\.\.2.*got 5"),
        ({"view": "head", "layer": -1, "head": 0}, ValueError, r"layer must be in 0\.\.2"),
        ({"view": "head", "layer": 0, "head": 4}, ValueError, r"head must be in 0\.\.3.*got 4"),
        ({"view": "head", "layer": 0, "head": 1.0}, TypeError, r"head must be an int"),
        ({"view": "head", "layer": 0}, ValueError, r"view='head' needs head="),
        ({"view": "layer"}, ValueError, r"view='layer' needs layer="),
        ({"view": "token"}, ValueError, r"view='token' needs token="),
        ({"view": "model", "layer": 1}, ValueError, r"view='model' does not use layer"),
        ({"view": "rollout", "head": 1}, ValueError, r"does not use head.*it uses: layer"),
        ({"view": "heads"}, ValueError, r"view must be one of head, layer, model, token"),
        (
            {"view": "token", "token": "banks"},
            ValueError,
            r"token 'banks' is not in the text; available: \[CLS\], the, river, bank",
        ),
        ({"view": "token", "token": 15}, ValueError, r"position 15 is not shown"),
        ({"view": "token", "token": 2.5}, TypeError, r"token must be a str or an int"),
        (
            {"view": "token", "token": "bank", "direction": "up"},
            ValueError,
            r"direction must be one of both, attends_to, attended_by",
        ),
        (
            {"view": "model", "hide_special": "drop"},
            ValueError,
            r"hide_special must be one of keep, hide, renormalize",
        ),
        ({"view": "model", "span": (5, 2)}, ValueError, r"span must satisfy 0 <= start < stop"),
        ({"view": "model", "span": (0, 99)}, ValueError, r"<= 16"),
        ({"view": "model", "span": (14, 16)}, ValueError, r"holds no token that is shown"),
        ({"view": "model", "span": 3}, TypeError, r"span must be a pair of ints"),
        ({"view": "model", "batch_index": 2}, ValueError, r"batch_index must be in 0\.\.1"),
        (
            {"view": "model", "attention_mask": np.ones(15)},
            ValueError,
            r"attention_mask must have shape \(T,\) or \(B, T\) with T = 16",
        ),
        ({"view": "model", "attention_mask": np.zeros(16)}, ValueError, r"every position"),
        ({"view": "model", "token_type_ids": [0, 1]}, ValueError, r"token_type_ids must have"),
        ({"view": "model", "max_labels": 0}, ValueError, r"max_labels must be >= 1, got 0"),
        ({"view": "model", "vmax": -1.0}, ValueError, r"vmax must be a finite number > 0.0"),
        ({"view": "model", "vmax": "max"}, ValueError, r"vmax must be a number > 0 or 'auto'"),
        ({"view": "model", "cmap": "nope"}, ValueError, r"cmap must be a matplotlib colour map"),
    ],
)
def test_attention_figure_refuses_bad_options(batch, options, error, pattern):
    attentions, _ = batch
    with pytest.raises(error, match=pattern):
        viz.attention_figure(attentions, TOKENS, **options)


def test_a_missing_token_gets_a_short_message_on_a_long_text():
    rng = np.random.default_rng(7)
    tokens = [f"w{i}" for i in range(60)]
    attentions = softmax_attentions(rng, n_layers=1, batch=1, n_heads=2, mask=np.ones((1, 60)))
    with pytest.raises(ValueError) as raised:
        viz.attention_figure(attentions, tokens, view="token", token="x" * 500)
    message = str(raised.value)
    assert "w0, w1" in message and "(60 tokens)" in message and "w59" not in message
    assert len(message) < 300


def test_attention_figure_refuses_bad_attentions_and_tokens(batch):
    attentions, _ = batch
    uneven = (attentions[0], attentions[1][..., :15, :15], attentions[2])
    with pytest.raises(ValueError, match=r"attentions\[1\] has shape \(2, 4, 15, 15\)"):
        viz.attention_figure(uneven, TOKENS, "model")
    with pytest.raises(ValueError, match=r"tokens has 15 entries.*16 x 16"):
        viz.attention_figure(attentions, TOKENS[:-1], "model")
    with pytest.raises(TypeError, match="tokens must be a list of str"):
        viz.attention_figure(attentions, "the river bank", "model")
    with pytest.raises(TypeError, match="tokens must be a list of str, found 3"):
        viz.attention_figure(attentions, TOKENS[:-1] + [3], "model")
    with pytest.raises(ValueError, match="must be square"):
        viz.attention_figure(np.ones((2, 2, 3, 4)) / 4, ["a", "b", "c"], "model")
    with pytest.raises(ValueError, match=r"\(L, N, T, T\) or \(L, B, N, T, T\)"):
        viz.attention_figure(np.ones((3, 3)), ["a", "b", "c"], "model")
    with pytest.raises(ValueError, match="at least one layer"):
        viz.attention_figure((), TOKENS, "model")
    with pytest.raises(TypeError, match=r"attentions\[0\] must be a numeric array"):
        viz.attention_figure(({"a": 1},), TOKENS, "model")
    broken = (np.full_like(attentions[0], np.nan),) + attentions[1:]
    with pytest.raises(ValueError, match="NaN or infinite"):
        viz.attention_figure(broken, TOKENS, "model")


@pytest.mark.parametrize("view", ["head", "layer", "model", "token", "average", "rollout"])
def test_tick_labels_are_at_least_10_pt_for_a_lecture_sized_input(view):
    # The lecture's sentence pair is 24 tokens: every view labels them at projector size.
    rng = np.random.default_rng(24)
    tokens = ["[CLS]"] + [f"w{i}" for i in range(22)] + ["[SEP]"]
    attentions = softmax_attentions(rng, 2, 1, 2, np.ones((1, 24)))  # 2 layers, 2 heads
    options = {"head": {"layer": 1, "head": 0}, "layer": {"layer": 0}, "token": {"token": 3}}
    fig = viz.attention_figure(attentions, tokens, view, **options.get(view, {}))
    sizes = [label.get_fontsize() for ax in fig.axes
             for label in ax.get_xticklabels() + ax.get_yticklabels() if label.get_text()]
    assert sizes and min(sizes) >= 10
