"""viz.attention: head average and rollout against hand-worked and loop references; special
tokens, word pieces and spans. Headless: the Agg backend, no window opens.
"""


import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from small_models import (  # noqa: E402
    N_REAL,
    TOKENS,
    drawn,
    heatmaps,
    loop_rollout,
    softmax_attentions,
    tick_texts,
)

from minibert import viz  # noqa: E402
from minibert.viz.attention import (  # noqa: E402
    attention_example,
    find_token,
    for_display,
)

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


def test_hide_special_drops_cls_and_sep_rows_and_columns(attention_batch):
    attentions, mask = attention_batch
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


def test_renormalize_rows_sum_to_one(attention_batch):
    attentions, mask = attention_batch
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


def test_merged_words_match_a_loop_reference_and_rows_sum_to_one(attention_batch):
    attentions, mask = attention_batch
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


def test_merge_with_renormalize_still_sums_to_one(attention_batch):
    attentions, mask = attention_batch
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


def test_span_crops_rows_and_columns_without_renormalizing(attention_batch):
    attentions, mask = attention_batch
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


def test_token_lookup_by_word_and_by_position(attention_batch):
    attentions, mask = attention_batch
    example = attention_example(attentions, TOKENS, attention_mask=mask)
    display = for_display(example.attentions, example, merge_pieces=True)
    assert find_token(display, "unbelievably") == 5
    assert find_token(display, 7) == 5  # "##ievably" belongs to that word
    assert find_token(display, "[SEP]") == 7  # first occurrence
