"""The board pictures and the lecture set: what each picture states can be read back."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from minibert.viz import board  # noqa: E402

TOKENS = ["[CLS]", "the", "bank", "[SEP]", "[PAD]"]


def texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_the_encoder_block_states_every_shape_from_the_config():
    shown = texts(board.encoder_block_figure(768, 12, 3072))
    for shape in ["(B, T, H=768)", "(B, N=12, T, D=64)", "(B, N, T, T)", "(B, T, I=3072)"]:
        assert shape in shown


def test_the_encoder_block_shows_the_fan_out_and_the_gradients_that_add():
    fig = board.encoder_block_figure(128, 2, 512)
    shown = texts(fig)
    assert {"x", "Q", "K", "V", "dQ", "dK", "dV", "a"} <= set(shown)
    assert any(t.startswith("dx = dQ·W_Q + dK·W_K + dV·W_V") for t in shown)
    assert not any("LayerNorm(a" in t for t in shown)  # no undefined names in the boxes
    sizes = [t.get_fontsize() for ax in fig.axes for t in ax.texts]
    assert min(sizes) >= 20  # readable at 1280 x 720
    assert tuple(fig.get_size_inches()) == (12.8, 7.2)


def test_the_masks_are_bidirectional_and_causal_and_hide_padding():
    fig = board.attention_masks_figure(TOKENS, [1, 1, 1, 1, 0])
    bidirectional, causal = (np.asarray(ax.images[0].get_array()) for ax in fig.axes)
    assert np.all(bidirectional[:, :4] == 1) and np.all(bidirectional[:, 4] == 0)
    np.testing.assert_array_equal(causal, np.tril(bidirectional))
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == TOKENS


def test_the_embedding_sum_draws_the_three_rows_and_their_sum():
    rng = np.random.default_rng(0)
    word, segment, position = (rng.normal(size=(5, 32)) for _ in range(3))
    fig = board.embedding_sum_figure(TOKENS, word, segment, position, word + segment + position,
                                     dims=8)
    images = [np.asarray(ax.images[0].get_array()) for ax in fig.axes if ax.images]
    np.testing.assert_allclose(images[3], (word + segment + position)[:, :8].T)


def test_multihead_and_position_pictures():
    fig = board.multihead_figure(num_heads=3, head_size=2, length=4)
    assert len(fig.axes[0].patches) == 3 * 4 * 6  # Q, the three heads, the merged context
    table = np.random.default_rng(1).normal(size=(10, 8))
    fig = board.position_embeddings_figure({"toy": table}, positions=6)
    similarity = np.asarray(fig.axes[0].images[0].get_array())
    assert similarity.shape == (6, 6)
    np.testing.assert_allclose(np.diag(similarity), 1.0)
    with pytest.raises(ValueError, match="num_heads must be"):
        board.multihead_figure(num_heads=9)


@pytest.mark.slow
def test_the_lecture_set_is_written_as_png_and_svg(tmp_path):
    from minibert.viz.lecture_set import write_lecture_figures

    paths = write_lecture_figures("tiny-toy", tmp_path, dpi=40)
    names = {p.name for p in paths}
    for name in ["head", "layer", "model", "rollout", "saliency", "training_curves",
                 "board_encoder_block", "board_masks", "board_attention_backward",
                 "board_pretraining_objective"]:
        assert {f"{name}.png", f"{name}.svg"} <= names


@pytest.mark.slow
def test_the_figures_command(tmp_path):
    from minibert.cli import main

    assert main(["figures", "--model", "tiny-toy", "-o", str(tmp_path), "--formats", "png",
                 "--dpi", "40"]) == 0
    assert (tmp_path / "saliency.png").is_file() and not list(tmp_path.glob("*.svg"))
    assert main(["figures", "--model", "tiny-toy", "-o", str(tmp_path), "--formats", "gif"]) != 0


def test_embedding_sum_colour_bar_names_how_many_dimensions_are_drawn():
    rng = np.random.default_rng(0)
    small = [rng.standard_normal((3, 8)) for _ in range(4)]
    wide = [rng.standard_normal((3, 40)) for _ in range(4)]
    labels = [board.embedding_sum_figure(["a", "b", "c"], *arrays).axes[-1].get_ylabel()
              for arrays in (small, wide)]
    assert labels == ["value (all H = 8 dimensions)", "value (first 16 of H = 40 dimensions)"]


def test_data_parallel_pictures_follow_the_ring_schedule():
    from minibert.viz import board

    fig = board.data_parallel_figure(3, 8)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "shard 2\nB = 2" in texts and "shard 0\nB = 3" in texts
    ring = board.ring_allreduce_figure(3)
    panels = [ax for ax in ring.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == [
        "start", "reduce-scatter 1", "reduce-scatter 2", "all-gather 1", "all-gather 2"]
    last = [t.get_text() for t in panels[-1].texts]
    assert last == ["3"] * 9  # every worker ends with every chunk summed over all 3
    with pytest.raises(ValueError, match="num_workers"):
        board.ring_allreduce_figure(1)
    with pytest.raises(ValueError, match="batch_size"):
        board.data_parallel_figure(3, 2)


def test_the_attention_backward_states_each_gradient_and_the_scale():
    fig = board.attention_backward_figure()
    shown = " ".join(texts(fig))
    for formula in [r"dV = P^\top dC", r"dP = dC\,V^\top", r"p_i \odot (dP_i - p_i \cdot dP_i)",
                    r"dQ = dS\,K/\sqrt{D}", r"dK = dS^\top Q/\sqrt{D}",
                    r"p_{ij}(\delta_{jk} - p_{ik})"]:
        assert formula in shown, formula
    assert "1/√D" in shown and "key bias gets exactly 0" in shown
    assert min(t.get_fontsize() for ax in fig.axes for t in ax.texts) >= 20
    assert tuple(fig.get_size_inches()) == (12.8, 7.2)


def test_the_pretraining_objective_reads_its_instance():
    from minibert.viz.lecture_set import worked_instance_rows

    rows = worked_instance_rows()
    fig = board.pretraining_objective_figure(rows, 0, not_next_share=0.617)
    shown = texts(fig)
    assert "Masked LM: 15% of 32 → 5 targets" in shown
    assert {"heron", "##mory", "80%: [MASK]", "10%: random", "10%: kept"} <= set(shown)
    assert "label 0: IsNext" in shown and "Here NotNext is 0.62:" in shown
    assert min(t.get_fontsize() for ax in fig.axes for t in ax.texts) >= 20
    assert "Here NotNext" not in " ".join(texts(board.pretraining_objective_figure(rows, 1)))
    with pytest.raises(ValueError, match="at least one MLM target"):
        board.pretraining_objective_figure([dict(row, branch="") for row in rows], 0)
    with pytest.raises(ValueError, match="next_sentence_label"):
        board.pretraining_objective_figure(rows, 2)
