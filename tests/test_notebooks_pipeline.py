"""The pipeline notebooks (tokens, pretraining data, pretraining, heatmaps, a real BERT) run.

Each notebook is executed top to bottom with nbclient in a fresh ``python3`` kernel and must
finish without an error within its time budget. The kernel is the one ipykernel installs into
this interpreter's environment (``sys.prefix``), never a kernelspec from the user's home
folder, so the notebooks run with the same Python and packages as the tests.

The kernel runs NumPy's BLAS on one thread. On a machine shared with other jobs, a
multithreaded BLAS oversubscribes the cores and small matrix products slow down several-fold;
one thread measures the notebook's own work.

A cheap check runs on the committed files: every code cell holds outputs (except a cell that
only defines functions), the cells were executed once in order, no output is an error or
stderr, and no output shows an absolute path of the machine that executed it.

``python tests/test_notebooks_pipeline.py [name ...]`` re-executes the notebooks (all of them,
or the named ones, e.g. ``07_pretraining``) and writes them back with their new outputs.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = REPO / "notebooks"
NOTEBOOKS = (
    "01_tokenization",
    "06_pretraining_data",
    "07_pretraining",
    "08_attention_heatmaps",
    "09_finetuning",
    "10_real_bert",
)
BUDGET_SECONDS = 90.0  # whole notebook, kernel start included, on a 2-core laptop CPU
CELL_TIMEOUT_SECONDS = 90
# Paths that would tell a reader where the notebook was executed, not what it computed.
ABSOLUTE_PATH = re.compile(r"(/work/|/home/|/tmp/|/Users/|/private/var/|[A-Z]:\\\\)")
MAX_FILE_BYTES = 3_000_000
SINGLE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                        "MKL_NUM_THREADS")}


def notebook_path(name: str) -> Path:
    return NOTEBOOK_DIR / f"{name}.ipynb"


def _kernel_manager():
    """A kernel manager for the ``python3`` kernel of this interpreter's environment."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    # Only the environment's own kernelspec folder; if it lacks python3, jupyter_client falls
    # back to ipykernel's built-in spec, which also runs sys.executable.
    specs = KernelSpecManager(kernel_dirs=[str(Path(sys.prefix) / "share" / "jupyter" / "kernels")])
    return KernelManager(kernel_name="python3", kernel_spec_manager=specs)


def kernel_environment() -> dict[str, str]:
    """The kernel's environment: the package importable from this checkout, BLAS on one thread."""
    python_path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": python_path, **SINGLE_THREAD}


def execute_notebook(path: Path):
    """Run the notebook at ``path`` in a fresh kernel; returns (executed notebook, seconds)."""
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        km=_kernel_manager(),
        timeout=CELL_TIMEOUT_SECONDS,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute(env=kernel_environment())
    seconds = time.perf_counter() - start
    for cell in notebook.cells:
        # Timestamps of the run would change every file on every execution.
        cell.metadata.pop("execution", None)
    return notebook, seconds


def _only_defines(source: str) -> bool:
    """Whether a cell's code only defines functions or classes (so it prints nothing)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%"))
    body = ast.parse(code).body
    return bool(body) and all(
        isinstance(node, (ast.FunctionDef, ast.ClassDef)) for node in body
    )


def _output_text(output: dict) -> str:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        return "".join(text) if isinstance(text, list) else text
    data = output.get("data", {})
    parts = []
    for mime in ("text/plain", "text/html", "text/markdown"):
        value = data.get(mime, "")
        parts.append("".join(value) if isinstance(value, list) else value)
    return "\n".join(parts)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_holds_current_outputs(name):
    path = notebook_path(name)
    assert path.is_file(), f"{path.name} is missing"
    assert path.stat().st_size < MAX_FILE_BYTES, f"{path.name} is too large: images too big?"
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code_cells, f"{path.name} has no code cell"
    counts = [cell["execution_count"] for cell in code_cells]
    assert counts == list(range(1, len(code_cells) + 1)), (
        f"{path.name}: execution counts {counts} show cells run out of order or not at all"
    )
    for number, cell in enumerate(code_cells, start=1):
        source = "".join(cell["source"])
        assert cell["outputs"] or _only_defines(source), (
            f"{path.name}: code cell {number} has no output"
        )
        for output in cell["outputs"]:
            assert output["output_type"] != "error", (
                f"{path.name}: code cell {number} ends in {output.get('ename')}"
            )
            assert not (output["output_type"] == "stream" and output["name"] == "stderr"), (
                f"{path.name}: code cell {number} wrote to stderr: {_output_text(output)[:200]}"
            )
            found = ABSOLUTE_PATH.search(_output_text(output))
            assert found is None, (
                f"{path.name}: code cell {number} shows the absolute path {found.group()!r}"
            )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_alternates_prose_and_code(name):
    notebook = json.loads(notebook_path(name).read_text(encoding="utf-8"))
    cells = notebook["cells"]
    assert cells[0]["cell_type"] == "markdown", "a notebook opens with its title and purpose"
    for index, cell in enumerate(cells[1:], start=1):
        if cell["cell_type"] == "code":
            assert cells[index - 1]["cell_type"] == "markdown", (
                f"code cell at position {index} has no prose before it"
            )


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom_within_budget(name):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # nbclient raises CellExecutionError, with the cell and its traceback, if any cell fails.
    _, seconds = execute_notebook(notebook_path(name))
    assert seconds <= BUDGET_SECONDS, (
        f"{name} took {seconds:.1f} s, over its budget of {BUDGET_SECONDS:.0f} s"
    )


def main(names: list[str]) -> int:
    """Re-execute the notebooks and write them back with fresh outputs."""
    import nbformat

    unknown = [name for name in names if name not in NOTEBOOKS]
    if unknown:
        print(f"unknown notebook(s) {unknown}; choose from {list(NOTEBOOKS)}", file=sys.stderr)
        return 2
    for name in names or NOTEBOOKS:
        notebook, seconds = execute_notebook(notebook_path(name))
        nbformat.write(notebook, notebook_path(name))
        print(f"{name}: executed in {seconds:.1f} s and saved")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
