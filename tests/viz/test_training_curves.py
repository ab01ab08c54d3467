"""viz.training: training curves plot every series, leave gaps where a run diverged and
refuse bad histories. Headless: the Agg backend, no window opens.
"""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from minibert import viz  # noqa: E402

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
