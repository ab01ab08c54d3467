"""The quick tour and the layer notebooks (00, 02-05) run, and their committed outputs are current.

Each notebook is executed top to bottom with nbclient in a fresh ``python3`` kernel and must
finish without an error within its time budget. The kernel is the one ipykernel installs into
this interpreter's environment (``sys.prefix``), never a kernelspec from the user's home
folder, so the notebooks run with the same Python and packages as the tests. NumPy's BLAS
runs on one thread in the kernel: on a machine shared with other jobs, a multithreaded BLAS
oversubscribes the cores, and one thread measures the notebook's own work.

Cheap checks run on the committed files: the cells were executed once, in order; no output is
an error, a write to stderr or an absolute path of the machine that executed them; every code
cell shows an output unless it only defines functions; the exercise cells are committed
unsolved (their check prints "not implemented yet"); prose comes before every code cell.

``python tests/test_notebooks_layers.py [name ...]`` re-executes the notebooks (all of them,
or the named ones, e.g. ``03_attention``) and writes them back with their new outputs.
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
    "00_quick_tour",
    "02_embeddings_layernorm",
    "03_attention",
    "04_feedforward_block",
    "05_heads_and_losses",
)
EXERCISE_NOTEBOOKS = NOTEBOOKS[1:]
BUDGET_SECONDS = 90.0  # whole notebook, kernel start included, on a 2-core laptop CPU
CELL_TIMEOUT_SECONDS = 90
# Paths that would tell a reader where the notebook was executed, not what it computed.
ABSOLUTE_PATH = re.compile(r"(/work/|/home/|/tmp/|/Users/|/private/var/|[A-Z]:\\\\)")
MAX_FILE_BYTES = 1_000_000
SINGLE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                        "MKL_NUM_THREADS")}
EXERCISE_TAG = "exercise-check"
STUB_MARKER = 'raise NotImplementedError("your turn")'


def notebook_path(name: str) -> Path:
    return NOTEBOOK_DIR / f"{name}.ipynb"


def load(name: str) -> dict:
    return json.loads(notebook_path(name).read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else text


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


def _merge_streams(outputs: list) -> list:
    """Join consecutive stream outputs of the same name, as Jupyter shows them."""
    merged = []
    for output in outputs:
        if (output.get("output_type") == "stream" and merged
                and merged[-1].get("output_type") == "stream"
                and merged[-1]["name"] == output["name"]):
            merged[-1]["text"] += output["text"]
        else:
            merged.append(output)
    return merged


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
        if cell.cell_type == "code":
            cell.outputs = _merge_streams(cell.outputs)
    return notebook, seconds


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


def _only_definitions(code: str) -> bool:
    """True for a cell that only imports and defines functions: it has nothing to show."""
    lines = [line for line in code.splitlines() if not line.lstrip().startswith("%")]
    tree = ast.parse("\n".join(lines))
    return all(isinstance(node, (ast.FunctionDef, ast.Import, ast.ImportFrom))
               for node in tree.body)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_notebook_holds_current_outputs(name):
    path = notebook_path(name)
    assert path.is_file(), f"{path.name} is missing"
    assert path.stat().st_size < MAX_FILE_BYTES, f"{path.name} is too large: images too big?"
    notebook = load(name)
    assert notebook["nbformat"] == 4
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code_cells, f"{path.name} has no code cell"
    counts = [cell["execution_count"] for cell in code_cells]
    assert counts == list(range(1, len(code_cells) + 1)), (
        f"{path.name}: execution counts {counts} show cells run out of order or not at all"
    )
    for number, cell in enumerate(code_cells, start=1):
        if not _only_definitions(source(cell)):
            assert cell["outputs"], f"{path.name}: code cell {number} has no output"
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
    cells = load(name)["cells"]
    assert cells[0]["cell_type"] == "markdown", "a notebook opens with its title and purpose"
    assert source(cells[0]).startswith(f"# {name[:2]} · "), "the title starts with the number"
    for index, cell in enumerate(cells[1:], start=1):
        if cell["cell_type"] == "code":
            assert cells[index - 1]["cell_type"] == "markdown", (
                f"code cell at position {index} has no prose before it"
            )


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
    cells = load(name)["cells"]
    stubs = [cell for cell in cells if cell["cell_type"] == "code" and STUB_MARKER in source(cell)]
    checks = [cell for cell in cells
              if EXERCISE_TAG in cell.get("metadata", {}).get("tags", [])]
    assert len(stubs) == 1, f"{name}: expected one exercise stub, found {len(stubs)}"
    assert len(checks) == 1, f"{name}: expected one {EXERCISE_TAG!r} cell, found {len(checks)}"
    assert cells.index(stubs[0]) < cells.index(checks[0]), "the stub comes before its check"
    printed = "".join(_output_text(output) for output in checks[0]["outputs"])
    assert printed.strip() == "not implemented yet", (
        f"{name}: the committed check cell printed {printed!r}; commit the exercise unsolved"
    )
    solution = NOTEBOOK_DIR / "solutions" / f"{name}_solutions.py"
    assert solution.is_file(), f"{solution} is missing"
    assert solution.name in "".join(source(cell) for cell in cells), (
        f"{name} does not point the reader to {solution.name}"
    )


def test_index_lists_every_notebook():
    index = (NOTEBOOK_DIR / "README.md").read_text(encoding="utf-8")
    for path in sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb")):
        assert path.name in index, f"notebooks/README.md does not list {path.name}"


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom_within_budget(name):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook, seconds = execute_notebook(notebook_path(name))
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.outputs if output.output_type == "error"]
    assert not errors, f"{name}: {errors[0].ename}: {errors[0].evalue}"
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
