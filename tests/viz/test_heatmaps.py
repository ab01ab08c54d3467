"""viz.heatmaps: the attention figures draw the numbers given, name every token, count layers
and heads from 0, separate the sentences, keep a fixed colour scale, and refuse bad input
with a helpful message. Headless: the Agg backend, no window opens.
"""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from small_models import (  # noqa: E402
    N_REAL,
    SEGMENTS,
    TOKENS,
    drawn,
    heatmaps,
    loop_rollout,
    real,
    softmax_attentions,
    tick_texts,
)

from minibert import viz  # noqa: E402
from minibert.viz.style import MAX_FIGURE_SIZE  # noqa: E402

# ----- the numbers drawn are the numbers given -------------------------------------------


def test_head_view_draws_the_input_matrix_with_token_labels(attention_batch):
    attentions, mask = attention_batch
    fig = viz.attention_figure(attentions, TOKENS, "head", layer=1, head=2, attention_mask=mask)
    assert isinstance(fig, Figure)
    (ax,) = heatmaps(fig)
    np.testing.assert_array_equal(drawn(ax), real(attentions[1][0, 2]))
    assert fig.get_suptitle() == "layer 1 · head 2"
    assert ax.get_title() == "out.attentions[1][:, 2] · 3 layers × 4 heads, counted from 0"
    assert tick_texts(ax.get_xticklabels()) == TOKENS[:N_REAL]
    assert tick_texts(ax.get_yticklabels()) == TOKENS[:N_REAL]


def test_layers_and_heads_count_from_zero(attention_batch):
    attentions, mask = attention_batch
    fig = viz.attention_figure(attentions, TOKENS, "head", layer=0, head=0, attention_mask=mask)
    np.testing.assert_array_equal(drawn(heatmaps(fig)[0]), real(attentions[0][0, 0]))
    with pytest.raises(ValueError, match=r"0\.\.2"):
        viz.attention_figure(attentions, TOKENS, "head", layer=3, head=0, attention_mask=mask)


def test_batch_index_picks_the_example_and_its_padding(attention_batch):
    attentions, mask = attention_batch
    fig = viz.attention_figure(
        attentions, TOKENS, "head", layer=2, head=3, attention_mask=mask, batch_index=1
    )
    keep = N_REAL - 4
    np.testing.assert_array_equal(drawn(heatmaps(fig)[0]), attentions[2][1, 3][:keep, :keep])


def test_every_input_form_gives_the_same_stack(attention_batch):
    attentions, _ = attention_batch
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


def test_padding_is_dropped_by_default_and_found_from_pad_tokens_without_a_mask(attention_batch):
    attentions, mask = attention_batch
    with_mask = viz.attention_figure(
        attentions, TOKENS, "head", layer=0, head=1, attention_mask=mask
    )
    without_mask = viz.attention_figure(attentions, TOKENS, "head", layer=0, head=1)
    for fig in (with_mask, without_mask):
        (ax,) = heatmaps(fig)
        assert drawn(ax).shape == (N_REAL, N_REAL)
        assert "[PAD]" not in tick_texts(ax.get_xticklabels())


def test_kept_padding_shows_masked_keys_as_exact_zeros(attention_batch):
    attentions, mask = attention_batch
    fig = viz.attention_figure(
        attentions, TOKENS, "head", layer=2, head=0, attention_mask=mask, drop_padding=False
    )
    image = drawn(heatmaps(fig)[0])
    np.testing.assert_array_equal(image, attentions[2][0, 0])
    assert np.all(image[:, N_REAL:] == 0.0)
    np.testing.assert_allclose(image.sum(axis=-1), 1.0, atol=1e-12)


def test_layer_view_draws_every_head(attention_batch):
    attentions, mask = attention_batch
    fig = viz.attention_figure(attentions, TOKENS, "layer", layer=2, attention_mask=mask)
    axes = heatmaps(fig)
    assert len(axes) == 4
    for head, ax in enumerate(axes):
        np.testing.assert_array_equal(drawn(ax), real(attentions[2][0, head]))
        assert ax.get_title() == f"head {head}"
    assert fig.get_suptitle() == "layer 2: its 4 heads (counted from 0)"


def test_model_view_draws_layers_as_rows_and_heads_as_columns(attention_batch):
    attentions, mask = attention_batch
    fig = viz.attention_figure(attentions, TOKENS, "model", attention_mask=mask)
    axes = heatmaps(fig)
    assert len(axes) == 3 * 4
    for index, ax in enumerate(axes):
        layer, head = divmod(index, 4)
        np.testing.assert_array_equal(drawn(ax), real(attentions[layer][0, head]))


def test_one_colour_scale_is_shared_by_all_panels(attention_batch):
    attentions, mask = attention_batch
    fig = viz.attention_figure(attentions, TOKENS, "model", attention_mask=mask)
    assert {ax.images[0].get_clim() for ax in heatmaps(fig)} == {(0.0, 1.0)}
    fig = viz.attention_figure(attentions, TOKENS, "model", vmax="auto", attention_mask=mask)
    top = max(real(a[0]).max() for a in attentions)
    assert {ax.images[0].get_clim() for ax in heatmaps(fig)} == {(0.0, top)}


def test_token_view_shapes_and_values(attention_batch):
    attentions, mask = attention_batch
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


def test_average_view_draws_the_head_mean(attention_batch):
    attentions, mask = attention_batch
    fig = viz.attention_figure(attentions, TOKENS, "average", attention_mask=mask)
    axes = heatmaps(fig)
    assert len(axes) == 3
    for layer, ax in enumerate(axes):
        expected = sum(real(attentions[layer][0, h]) for h in range(4)) / 4
        np.testing.assert_allclose(drawn(ax), expected, atol=1e-15)
    fig = viz.attention_figure(attentions, TOKENS, "average", layer=1, attention_mask=mask)
    expected = sum(real(attentions[1][0, h]) for h in range(4)) / 4
    np.testing.assert_allclose(drawn(heatmaps(fig)[0]), expected, atol=1e-15)


def test_rollout_view_draws_the_rollout_of_the_real_tokens(attention_batch):
    attentions, mask = attention_batch
    stack = real(np.stack([a[0] for a in attentions]))
    fig = viz.attention_figure(attentions, TOKENS, "rollout", attention_mask=mask)
    np.testing.assert_allclose(drawn(heatmaps(fig)[0]), loop_rollout(stack)[-1], atol=1e-14)
    fig = viz.attention_figure(attentions, TOKENS, "rollout", layer=0, attention_mask=mask)
    np.testing.assert_allclose(drawn(heatmaps(fig)[0]), loop_rollout(stack)[0], atol=1e-14)


# ----- sentence separators, labels, annotations, sizes --------------------------------------


def separator_positions(ax):
    """Positions of the horizontal separator lines drawn on a heatmap."""
    horizontal = [line for line in ax.lines if line.get_ydata()[0] == line.get_ydata()[1]]
    return sorted({line.get_ydata()[0] for line in horizontal if line.get_color() == "black"})


def test_a_line_separates_sentence_a_from_sentence_b(attention_batch):
    attentions, mask = attention_batch
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


def test_annotations_print_every_value(attention_batch):
    attentions, mask = attention_batch
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


def test_titles_count_layers_and_heads_from_zero_like_the_arguments(attention_batch):
    attentions, mask = attention_batch
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
def test_a_head_title_names_the_arguments_that_drew_it(attention_batch, layer, head):
    attentions, mask = attention_batch
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
def test_attention_figure_refuses_bad_options(attention_batch, options, error, pattern):
    attentions, _ = attention_batch
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


def test_attention_figure_refuses_bad_attentions_and_tokens(attention_batch):
    attentions, _ = attention_batch
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
