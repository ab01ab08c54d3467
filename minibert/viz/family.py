"""The BERT-family comparison as one figure: size, speed and what each model learned.

Reads the results that ``benchmarks/family_comparison.py`` writes
(docs/results/family_comparison.json): one bar per recipe for parameters and seconds per
step, and for the three scores the mean over seeds as a bar, each seed as a dot and the
standard deviation as an error bar.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from minibert.viz.style import lecture_style

__all__ = ["family_comparison_figure"]

_COLORS = {"bert": "#0072B2", "roberta": "#E69F00", "albert": "#009E73", "distil": "#CC79A7"}
_SHORT = {"bert": "BERT", "roberta": "RoBERTa", "albert": "ALBERT", "distil": "DistilBERT"}


def family_comparison_figure(results: dict) -> Figure:
    """Five panels: parameters, s/step, held-out MLM accuracy, probes, classify accuracy.

    Inputs: results, the dict of docs/results/family_comparison.json ({"recipes": {name:
    row}} with "parameters", "seconds_per_step" and {"mean", "std", "values"} scores).
    """
    if not isinstance(results, dict) or not isinstance(results.get("recipes"), dict):
        raise TypeError("results must be the dict of family_comparison.json, with 'recipes'")
    rows = results["recipes"]
    names = list(rows)
    panels = [
        ("parameters", "parameters (millions)", lambda r: r["parameters"] / 1e6, None),
        ("seconds_per_step", "seconds per step", lambda r: r["seconds_per_step"], None),
        ("heldout_mlm_accuracy", "held-out MLM accuracy", None, (0, 1)),
        ("probes", f"probes answered (of {rows[names[0]].get('probes_total', 12)})", None,
         None),
        ("classify_accuracy", "fine-tuned classify accuracy", None, (0, 1)),
    ]
    seeds = len(results.get("seeds", [])) or 1
    with lecture_style():
        fig = Figure(figsize=(17.0, 4.6), layout="constrained")
        axes = fig.subplots(1, len(panels))
        for ax, (key, title, value, limits) in zip(axes, panels, strict=True):
            for x, name in enumerate(names):
                row, color = rows[name], _COLORS.get(name, "#777777")
                if value is not None:
                    height = value(row)
                    if height is None:
                        continue
                    ax.bar(x, height, color=color)
                    ax.text(x, height, f"{height:.2f}", ha="center", va="bottom", fontsize=11)
                    continue
                score = row[key]
                ax.bar(x, score["mean"], color=color, alpha=0.55)
                # A score is never below 0: the bar's lower arm stops there.
                below = min(score["std"], score["mean"])
                ax.errorbar(x, score["mean"], yerr=[[below], [score["std"]]], color="black",
                            capsize=6)
                ax.plot([x] * len(score["values"]), score["values"], "o", color=color,
                        markeredgecolor="black")
            ax.set_xticks(range(len(names)), [_SHORT.get(n, n) for n in names], rotation=30)
            ax.set_title(title, fontsize=12)
            if limits is not None:
                ax.set_ylim(*limits)
        steps = results.get("steps")
        fig.suptitle(f"BERT's family on the toy corpus: {steps} steps each, mean ± std over "
                     f"{seeds} seeds (dots: each seed)")
    return fig
