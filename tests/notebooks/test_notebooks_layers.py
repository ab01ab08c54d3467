"""The quick tour, the layer notebooks (00, 02-05) and their capstone (14) run, and their
committed outputs are current.

Each notebook must run top to bottom without an error within its time budget, in a fresh
kernel of this environment with BLAS on one thread (``notebook_runner`` executes it and
holds the checks shared with the pipeline notebooks).

Cheap checks run on the committed files: the cells were executed once, in order; no output is
an error, a write to stderr or an absolute path of the machine that executed them; every code
cell shows an output unless it only imports and defines functions or classes; the exercise
cells are committed unsolved (each check prints "not implemented yet"); without torch, the
optional autograd cells of 02, 03 and 05 print one line and do nothing else, and the committed
runs (with torch) show autograd agreeing to rounding; prose comes before every code cell.

``python tests/notebooks/test_notebooks_layers.py [name ...]`` re-executes the notebooks (all
of them, or the named ones, e.g. ``03_attention``) and writes them back with their new outputs.
"""

from __future__ import annotations

import sys

import pytest
from notebook_runner import (
    NOTEBOOK_DIR,
    check_committed_outputs,
    check_exercises_come_last,
    check_exercises_committed_unsolved,
    check_prose_before_code,
    check_runs_within_budget,
    load,
    output_text,
    rewrite,
    source,
)

NOTEBOOKS = (
    "00_quick_tour",
    "02_embeddings_layernorm",
    "03_attention",
    "04_feedforward_block",
    "05_heads_and_losses",
    "14_layer_by_hand",
)
EXERCISE_NOTEBOOKS = NOTEBOOKS[1:]
MAX_FILE_BYTES = 1_000_000


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_holds_current_outputs(name):
    check_committed_outputs(name, MAX_FILE_BYTES)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_alternates_prose_and_code(name):
    cells = load(name)["cells"]
    check_prose_before_code(cells)
    assert source(cells[0]).startswith(f"# {name[:2]} · "), "the title starts with the number"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_figures_are_modest_pngs(name):
    images = [output["data"]["image/png"] for cell in load(name)["cells"]
              if cell["cell_type"] == "code" for output in cell["outputs"]
              if "image/png" in output.get("data", {})]
    assert images, f"{name} shows no figure"
    for image in images:
        encoded = "".join(image) if isinstance(image, list) else image
        assert len(encoded) < 200_000, f"{name}: a figure of {len(encoded)} base64 characters"


@pytest.mark.parametrize("name", EXERCISE_NOTEBOOKS)
def test_exercise_is_committed_unsolved(name):
    check_exercises_committed_unsolved(name)


@pytest.mark.parametrize("name", EXERCISE_NOTEBOOKS)
def test_exercises_end_the_notebook(name):
    check_exercises_come_last(name)


AUTOGRAD_TAG = "autograd-comparison"
AUTOGRAD_NOTEBOOKS = ("02_embeddings_layernorm", "03_attention", "05_heads_and_losses")


@pytest.mark.parametrize("name", AUTOGRAD_NOTEBOOKS)
def test_autograd_comparison_is_optional(name, monkeypatch, capsys):
    """Without torch the optional cell prints one line and touches nothing else."""
    cells = [cell for cell in load(name)["cells"]
             if AUTOGRAD_TAG in cell.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"{name}: expected one {AUTOGRAD_TAG!r} cell, found {len(cells)}"
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` raise ImportError
    namespace = {}
    exec(compile(source(cells[0]), f"{name}:{AUTOGRAD_TAG}", "exec"), namespace)
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed == ["PyTorch is not installed: the optional autograd comparison is skipped."]
    assert set(namespace) == {"__builtins__"}


@pytest.mark.parametrize("name", AUTOGRAD_NOTEBOOKS)
def test_committed_autograd_comparison_agrees_to_rounding(name):
    """The committed run (with torch) shows autograd within 1e-12 and finite differences close."""
    cell = next(cell for cell in load(name)["cells"]
                if AUTOGRAD_TAG in cell.get("metadata", {}).get("tags", []))
    lines = "".join(output_text(output) for output in cell["outputs"]).strip().splitlines()
    assert "PyTorch autograd" in lines[0], f"{name}: committed without the comparison"
    for line in lines[1:]:
        _, finite_differences, autograd = line.split()
        assert float(autograd) < 1e-12, line
        assert float(finite_differences) < 1e-6, line


def test_index_lists_every_notebook():
    index = (NOTEBOOK_DIR / "README.md").read_text(encoding="utf-8")
    for path in sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb")):
        assert path.name in index, f"notebooks/README.md does not list {path.name}"


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom_within_budget(name):
    check_runs_within_budget(name)


if __name__ == "__main__":
    # These notebooks are saved with consecutive stream outputs joined, as Jupyter shows them.
    sys.exit(rewrite(sys.argv[1:], NOTEBOOKS, merge_streams=True))
