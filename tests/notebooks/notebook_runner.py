"""Executing the teaching notebooks and checking their committed files: shared by the tests.

``tests/notebooks/test_notebooks_layers.py`` (00, 02-05) and
``tests/notebooks/test_notebooks_pipeline.py`` (01, 06-10) import this module; it holds no
test of its own. It is importable as ``notebook_runner`` because ``tests/notebooks/`` is on
``sys.path`` both ways those files run: pytest's default ("prepend") import mode puts the
folder of a test file that has no ``__init__.py`` there, and
``python tests/notebooks/test_notebooks_layers.py`` puts the script's folder there.

A notebook is executed top to bottom with nbclient in a fresh ``python3`` kernel. The kernel
is the one ipykernel installs into this interpreter's environment (``sys.prefix``), never a
kernelspec from the user's home folder, so the notebooks run with the same Python and
packages as the tests. NumPy's BLAS runs on one thread in the kernel: on a machine shared
with other jobs, a multithreaded BLAS oversubscribes the cores, and one thread measures the
notebook's own work.

The checks on a committed file: the cells were executed once, in order; no output is an
error, a write to stderr or an absolute path of the machine that executed them; every code
cell shows an output unless it only imports and defines functions or classes; prose comes
before every code cell; a notebook's exercises are committed unsolved and end it.
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

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = REPO / "notebooks"
BUDGET_SECONDS = 90.0  # whole notebook, kernel start included, on a 2-core laptop CPU
CELL_TIMEOUT_SECONDS = 90
# Paths that would tell a reader where the notebook was executed, not what it computed.
ABSOLUTE_PATH = re.compile(r"(/work/|/home/|/tmp/|/Users/|/private/var/|[A-Z]:\\\\)")
EXERCISE_TAG = "exercise-check"
STUB_MARKER = 'raise NotImplementedError("your turn")'
SINGLE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                        "MKL_NUM_THREADS")}


def notebook_path(name: str) -> Path:
    return NOTEBOOK_DIR / f"{name}.ipynb"


def load(name: str) -> dict:
    return json.loads(notebook_path(name).read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else text


def output_text(output: dict) -> str:
    """The text an output shows: a stream's text, or its plain, HTML and Markdown forms."""
    if output.get("output_type") == "stream":
        text = output.get("text", "")
        return "".join(text) if isinstance(text, list) else text
    data = output.get("data", {})
    parts = []
    for mime in ("text/plain", "text/html", "text/markdown"):
        value = data.get(mime, "")
        parts.append("".join(value) if isinstance(value, list) else value)
    return "\n".join(parts)


def only_definitions(code: str) -> bool:
    """True for a cell that only imports and defines functions or classes: nothing to show."""
    lines = [line for line in code.splitlines() if not line.lstrip().startswith("%")]
    body = ast.parse("\n".join(lines)).body
    return bool(body) and all(
        isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom))
        for node in body
    )


# ----------------------------------------------------------------------------------------
# Executing a notebook
# ----------------------------------------------------------------------------------------


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


def execute_notebook(path: Path, merge_streams: bool = False):
    """Run the notebook at ``path`` in a fresh kernel; returns (executed notebook, seconds).

    With ``merge_streams``, consecutive stream outputs of a cell are joined into one.
    """
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    manager = _kernel_manager()
    client = nbclient.NotebookClient(
        notebook,
        km=manager,
        timeout=CELL_TIMEOUT_SECONDS,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    try:
        client.execute(env=kernel_environment())
        seconds = time.perf_counter() - start
    finally:
        # nbclient shuts down only a kernel whose manager it created; this one is ours.
        if manager.has_kernel:
            manager.shutdown_kernel(now=True)
    for cell in notebook.cells:
        # Timestamps of the run would change every file on every execution.
        cell.metadata.pop("execution", None)
        if merge_streams and cell.cell_type == "code":
            cell.outputs = _merge_streams(cell.outputs)
    return notebook, seconds


def rewrite(names: list[str], notebooks: tuple[str, ...], merge_streams: bool = False) -> int:
    """Re-execute the named notebooks (all of ``notebooks`` if none) and save their outputs.

    Returns the exit status: 0, or 2 for a name not in ``notebooks``.
    """
    import nbformat

    unknown = [name for name in names if name not in notebooks]
    if unknown:
        print(f"unknown notebook(s) {unknown}; choose from {list(notebooks)}", file=sys.stderr)
        return 2
    for name in names or notebooks:
        notebook, seconds = execute_notebook(notebook_path(name), merge_streams)
        nbformat.write(notebook, notebook_path(name))
        print(f"{name}: executed in {seconds:.1f} s and saved")
    return 0


# ----------------------------------------------------------------------------------------
# Checks the two test files share
# ----------------------------------------------------------------------------------------


def check_committed_outputs(name: str, max_file_bytes: int) -> None:
    """The committed notebook was executed once, in order, and its outputs are clean."""
    path = notebook_path(name)
    assert path.is_file(), f"{path.name} is missing"
    assert path.stat().st_size < max_file_bytes, f"{path.name} is too large: images too big?"
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
        assert cell["outputs"] or only_definitions(source(cell)), (
            f"{path.name}: code cell {number} has no output"
        )
        for output in cell["outputs"]:
            assert output["output_type"] != "error", (
                f"{path.name}: code cell {number} ends in {output.get('ename')}"
            )
            assert not (output["output_type"] == "stream" and output["name"] == "stderr"), (
                f"{path.name}: code cell {number} wrote to stderr: {output_text(output)[:200]}"
            )
            found = ABSOLUTE_PATH.search(output_text(output))
            assert found is None, (
                f"{path.name}: code cell {number} shows the absolute path {found.group()!r}"
            )


def check_prose_before_code(cells: list) -> None:
    """The notebook opens with prose, and a Markdown cell comes before every code cell."""
    assert cells[0]["cell_type"] == "markdown", "a notebook opens with its title and purpose"
    for index, cell in enumerate(cells[1:], start=1):
        if cell["cell_type"] == "code":
            assert cells[index - 1]["cell_type"] == "markdown", (
                f"code cell at position {index} has no prose before it"
            )


def check_exercises_committed_unsolved(name: str) -> None:
    """Each exercise stub comes before its own check cell (tagged ``exercise-check``), every
    committed check printed "not implemented yet", and the notebook names its solutions file."""
    cells = load(name)["cells"]
    stubs = [cell for cell in cells if cell["cell_type"] == "code" and STUB_MARKER in source(cell)]
    checks = [cell for cell in cells
              if EXERCISE_TAG in cell.get("metadata", {}).get("tags", [])]
    assert stubs, f"{name}: no exercise stub"
    assert len(checks) == len(stubs), (
        f"{name}: {len(stubs)} exercise stub(s) but {len(checks)} {EXERCISE_TAG!r} cell(s)"
    )
    order = sorted([(cells.index(cell), "stub") for cell in stubs]
                   + [(cells.index(cell), "check") for cell in checks])
    assert [kind for _, kind in order] == ["stub", "check"] * len(stubs), (
        f"{name}: each stub must come before its own check"
    )
    for check in checks:
        printed = "".join(output_text(output) for output in check["outputs"])
        assert printed.strip() == "not implemented yet", (
            f"{name}: a committed check cell printed {printed!r}; commit the exercise unsolved"
        )
    solution = NOTEBOOK_DIR / "solutions" / f"{name}_solutions.py"
    assert solution.is_file(), f"{solution} is missing"
    assert solution.name in "".join(source(cell) for cell in cells), (
        f"{name} does not point the reader to {solution.name}"
    )


def check_exercises_come_last(name: str) -> None:
    """The exercises sit in one place, at the end: after the first exercise stub, every code
    cell is a stub or its check."""
    cells = [cell for cell in load(name)["cells"] if cell["cell_type"] == "code"]
    first = next(index for index, cell in enumerate(cells) if STUB_MARKER in source(cell))
    for number, cell in enumerate(cells[first:], start=first + 1):
        assert (STUB_MARKER in source(cell)
                or EXERCISE_TAG in cell.get("metadata", {}).get("tags", [])), (
            f"{name}: code cell {number} comes after the first exercise; the exercises end "
            f"the notebook"
        )


def check_runs_within_budget(name: str) -> None:
    """Executing the notebook raises no error and takes at most ``BUDGET_SECONDS``."""
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # nbclient raises CellExecutionError, with the cell and its traceback, if any cell fails;
    # an error output can remain only from a cell tagged "raises-exception".
    notebook, seconds = execute_notebook(notebook_path(name))
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.outputs if output.output_type == "error"]
    assert not errors, f"{name}: {errors[0].ename}: {errors[0].evalue}"
    assert seconds <= BUDGET_SECONDS, (
        f"{name} took {seconds:.1f} s, over its budget of {BUDGET_SECONDS:.0f} s"
    )
