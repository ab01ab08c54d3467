"""The BERT-family comparison figure (minibert.viz.family) and the committed results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minibert.viz.family import family_comparison_figure

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results" / "family_comparison.json"


def score(values):
    mean = sum(values) / len(values)
    return {"mean": mean, "std": 0.01, "values": values}


def synthetic():
    rows = {name: {"label": name, "parameters": 10**6 * (i + 1), "seconds_per_step": 0.1,
                   "heldout_mlm_accuracy": score([0.5, 0.6, 0.55]),
                   "probes": score([5, 6, 7]), "probes_total": 12,
                   "classify_accuracy": score([0.8, 0.9, 0.85])}
            for i, name in enumerate(("bert", "roberta", "albert", "distil"))}
    return {"steps": 10, "seeds": [0, 1, 2], "recipes": rows}


def test_figure_has_a_panel_per_measure_and_a_dot_per_seed():
    fig = family_comparison_figure(synthetic())
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["parameters (millions)", "seconds per step", "held-out MLM accuracy",
                      "probes answered (of 12)", "fine-tuned classify accuracy"]
    mlm = fig.axes[2]
    dots = [line for line in mlm.lines if line.get_marker() == "o"]
    assert len(dots) == 4 and all(len(line.get_ydata()) == 3 for line in dots)
    assert "3 seeds" in fig._suptitle.get_text()


def test_figure_refuses_other_input():
    with pytest.raises(TypeError, match="results must be"):
        family_comparison_figure({"rows": []})


def test_committed_results_cover_four_recipes_and_three_seeds():
    results = json.loads(RESULTS.read_text())
    assert list(results["recipes"]) == ["bert", "roberta", "albert", "distil"]
    assert len(results["seeds"]) >= 3
    for row in results["recipes"].values():
        for key in ("heldout_mlm_accuracy", "probes", "classify_accuracy"):
            assert len(row[key]["values"]) == len(results["seeds"])
        assert row["seconds_per_step"] > 0 and row["parameters"] > 0
    family_comparison_figure(results)
