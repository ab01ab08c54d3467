"""Student workspaces: writing them, loading a student's functions, running the model on them.

A workspace is a folder with one file per task (``linear.py``, ``layernorm.py``, ...), the
public tests (``test_public.py``), a README and a marker file ``.minibert-assignment.json``
that says what kind of workspace it is. ``create_workspace(..., instructor=True)`` writes
three folders: ``student/`` to hand out, ``solutions/`` (a complete workspace) and
``hidden/`` (the hidden tests' seed and runner), which stay with the instructor.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import secrets
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from minibert import functional as F
from minibert.assignment.tasks import (
    EXTRA_FUNCTIONS,
    LAYER_BACKWARDS,
    TASK_NAMES,
    TASKS,
    Task,
    stub_source,
)

__all__ = ["MARKER", "NotAWorkspace", "create_workspace", "read_marker", "load_task_functions",
           "use_implementation", "TaskLoadError"]

MARKER = ".minibert-assignment.json"
KINDS = ("backprop", "bugs")
LABS = ("bugs",)


class NotAWorkspace(ValueError):
    """The folder given is not a workspace written by ``minibert assignment create``."""


class TaskLoadError(Exception):
    """A task's file cannot be used (syntax error, missing function, wrong signature)."""


def read_marker(workspace) -> dict:
    """The marker of ``workspace``; NotAWorkspace naming the folder otherwise."""
    folder = Path(workspace)
    marker = folder / MARKER
    if not folder.is_dir():
        raise NotAWorkspace(f"workspace {str(folder)!r} is not a folder; give the folder "
                            f"written by 'minibert assignment create'")
    if not marker.is_file():
        hint = (" (an instructor tree: grade its student/ or solutions/ folder)"
                if (folder / "student" / MARKER).is_file() else "")
        raise NotAWorkspace(f"workspace {str(folder)!r} has no {MARKER}: not a folder written "
                            f"by 'minibert assignment create'{hint}")
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise NotAWorkspace(f"workspace {str(folder)!r}: {MARKER} is unreadable ({error})") \
            from None
    if not isinstance(data, dict) or data.get("kind") not in KINDS + ("hidden",):
        raise NotAWorkspace(f"workspace {str(folder)!r}: {MARKER} names no kind in "
                            f"{list(KINDS)}")
    return data


# ----------------------------------------------------------------------------------------
# Writing workspaces
# ----------------------------------------------------------------------------------------

_PUBLIC_TESTS = '''"""Public tests: what 'minibert assignment grade .' runs, one test per task.

Each test loads your file, runs the task's public checks (a float64 gradient check with a
random upstream gradient, the shapes, one invariance) and fails with the grader's line.
"""

from pathlib import Path

import pytest

from minibert.assignment import TASK_NAMES, grade_task

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("task", TASK_NAMES)
def test_task(task):
    passed, message = grade_task(HERE, task)
    assert passed, message
'''

_HIDDEN_TESTS = '''"""Hidden tests: keep this folder private. Run them with

    minibert assignment grade STUDENT_DIR --hidden {hidden}

or ``MINIBERT_WORKSPACE=STUDENT_DIR pytest`` in this folder. cases.json holds the seed
that picks the hidden cases (shapes, masks, ids); change it to draw new ones.
"""

import json
import os
from pathlib import Path

import pytest

from minibert.assignment import TASK_NAMES, grade_task

HERE = Path(__file__).resolve().parent
SEED = json.loads((HERE / "cases.json").read_text())["seed"]


@pytest.mark.parametrize("task", TASK_NAMES)
def test_task(task):
    workspace = os.environ.get("MINIBERT_WORKSPACE")
    if not workspace:
        pytest.skip("set MINIBERT_WORKSPACE to the student folder to grade")
    passed, message = grade_task(workspace, task, hidden_seed=SEED)
    assert passed, message
'''


def _readme(kind: str) -> str:
    if kind == "bugs":
        from minibert.assignment.bugs import LAB_README
        return LAB_README
    rows = "\n".join(f"| {i} | `{t.file}` | `{t.function}` | {t.points} | {t.teaches} |"
                     for i, t in enumerate(TASKS, 1))
    total = sum(t.points for t in TASKS)
    return f"""# Assignment: BERT's backward passes

Fill in the function of each file, in this order. Each file's docstring gives the inputs,
the outputs, their shapes and the forward pass the function inverts; the forward passes
are minibert's own (``minibert.functional``, ``minibert.assignment.blocks``).

| # | file | function | points | what it teaches |
|---|---|---|---|---|
{rows}

Total: {total} points. You need Python with NumPy, pytest and minibert installed.

    pytest -q                              # the public tests, one per task
    minibert assignment grade .            # the graded table (each task in its own process)

pytest runs every task in one process, so an infinite loop hangs it (stop it with Ctrl-C);
the grader gives each task its own process and a time limit. Each task is graded with
minibert's versions of the other layers, so one mistake costs one task.

Then run the real model on your backward passes:

    import minibert as mb
    with mb.use_implementation("."):       # your layer backwards replace minibert's
        ...                                # e.g. a gradient check or a few training steps

The grader also runs hidden tests that you do not see: other shapes and seeds, masks,
repeated ids, and gradients that must be exactly zero. Passing the public tests is not a
proof; a correct function passes both.
"""


def _write_student_tree(folder: Path, kind: str, sources: dict[str, str]) -> None:
    folder.mkdir(parents=True)
    for name, text in sources.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "README.md").write_text(_readme(kind), encoding="utf-8")
    marker = {"kind": kind, "version": 1}
    if kind == "backprop":
        (folder / "test_public.py").write_text(_PUBLIC_TESTS, encoding="utf-8")
        marker["tasks"] = list(TASK_NAMES)
    (folder / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def create_workspace(path, instructor: bool = False, lab: str | None = None,
                     overwrite: bool = False, seed: int | None = None) -> Path:
    """Write a student workspace (or, with ``instructor``, the instructor's three folders).

    Inputs: path, the folder to create; instructor, also write solutions/ and hidden/;
    lab, None for the backward-pass assignment or "bugs" for the bug-hunting lab;
    overwrite, replace an existing workspace at path (never a folder of anything else);
    seed, the hidden tests' seed (default: drawn at random once, then stored).
    Output: the folder written. The tree is built beside ``path`` and renamed into place,
    so an interrupted call leaves nothing half-written.
    """
    from minibert.assignment.solutions import solution_source

    if lab is not None and lab not in LABS:
        raise ValueError(f"lab must be one of {list(LABS)} or None, got {lab!r}")
    target = Path(path)
    if target.exists():
        if not overwrite:
            raise FileExistsError(f"path {str(target)!r} exists; pass overwrite=True "
                                  f"(--overwrite) to replace the workspace there")
        is_ours = (target / MARKER).is_file() or (target / "student" / MARKER).is_file()
        if not target.is_dir() or not (is_ours or not any(target.iterdir())):
            raise FileExistsError(f"path {str(target)!r} exists and is not a workspace; "
                                  f"refusing to replace it")
    kind = "bugs" if lab == "bugs" else "backprop"
    if kind == "bugs":
        from minibert.assignment.bugs import buggy_source, fixed_source
        student, solved = {"buggy_bert.py": buggy_source()}, {"buggy_bert.py": fixed_source()}
    else:
        student = {t.file: stub_source(t) for t in TASKS}
        solved = {t.file: solution_source(t) for t in TASKS}
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        tree = staging / "tree"
        if not instructor:
            _write_student_tree(tree, kind, student)
        else:
            tree.mkdir()
            _write_student_tree(tree / "student", kind, student)
            _write_student_tree(tree / "solutions", kind, solved)
            if kind == "backprop":
                hidden = tree / "hidden"
                hidden.mkdir()
                chosen = secrets.randbelow(2**31) if seed is None else int(seed)
                (hidden / "cases.json").write_text(json.dumps({"seed": chosen}) + "\n",
                                                   encoding="utf-8")
                (hidden / "test_hidden.py").write_text(
                    _HIDDEN_TESTS.format(hidden=hidden.name), encoding="utf-8")
                (hidden / MARKER).write_text(json.dumps({"kind": "hidden", "version": 1})
                                             + "\n", encoding="utf-8")
        if target.exists():
            old = staging / "old"
            target.rename(old)
        tree.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def read_hidden_seed(hidden) -> int:
    """The seed of the hidden tests in the instructor's ``hidden/`` folder."""
    folder = Path(hidden)
    cases = folder / "cases.json"
    if not cases.is_file():
        raise NotAWorkspace(f"hidden {str(folder)!r} has no cases.json: give the hidden/ "
                            f"folder written by 'minibert assignment create --instructor'")
    try:
        return int(json.loads(cases.read_text(encoding="utf-8"))["seed"])
    except (ValueError, KeyError, TypeError) as error:
        raise NotAWorkspace(f"hidden {str(folder)!r}: cases.json has no integer 'seed' "
                            f"({error})") from None


# ----------------------------------------------------------------------------------------
# Loading a student's functions
# ----------------------------------------------------------------------------------------

def _import_file(path: Path, folder: Path):
    """Import one student file under a fresh module name (no cache between workspaces)."""
    name = f"_minibert_student_{abs(hash(str(path)))}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # The student's files may import each other ("from softmax import softmax_backward"):
    # their folder comes first on the path, and a task module of another folder that an
    # earlier import left in sys.modules is forgotten.
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    for task in TASKS:
        other = sys.modules.get(Path(task.file).stem)
        if other is not None and Path(getattr(other, "__file__", None) or "").parent != folder:
            del sys.modules[Path(task.file).stem]
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise TaskLoadError(f"{path.name} line {error.lineno}: SyntaxError: {error.msg}") \
            from None
    return module


def load_task_functions(workspace, task: Task, isolate: bool = True) -> dict:
    """The functions of ``task`` from the student's file, their signatures checked.

    With ``isolate``, any layer backward the file imported (e.g. its own softmax_backward
    inside attention) is replaced by minibert's, so one mistake costs one task only.
    Raises TaskLoadError with one line when the file cannot be used.
    """
    folder = Path(workspace).resolve()
    path = folder / task.file
    if not path.is_file():
        raise TaskLoadError(f"{task.file} is missing from the workspace")
    module = _import_file(path, folder)
    wanted = {task.function: task.arguments, **EXTRA_FUNCTIONS.get(task.name, {})}
    functions = {}
    for name, arguments in wanted.items():
        function = getattr(module, name, None)
        if not callable(function):
            raise TaskLoadError(f"{task.file} defines no function {name}")
        try:
            inspect.signature(function).bind(*arguments)
        except TypeError:
            raise TaskLoadError(f"{task.file}: {name}{inspect.signature(function)} has the "
                                f"wrong signature; expected {name}({', '.join(arguments)}, "
                                f"...)") from None
        except ValueError:
            pass  # a builtin without a signature: called as it is
        functions[name] = function
    if isolate:
        for other in LAYER_BACKWARDS:
            if other not in wanted and callable(getattr(module, other, None)):
                setattr(module, other, getattr(F, other))
    return functions


def _is_stub(path: Path, function: str) -> bool:
    """True when ``function`` in ``path`` still only raises NotImplementedError."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            body = [s for s in node.body if not (isinstance(s, ast.Expr)
                                                 and isinstance(s.value, ast.Constant))]
            return (len(body) == 1 and isinstance(body[0], ast.Raise)
                    and "NotImplementedError" in ast.unparse(body[0]))
    return True


@contextmanager
def use_implementation(workspace, names=None):
    """Run minibert's models on a student's layer backward passes inside a ``with`` block.

    Each of the eight layer backwards (``linear_backward`` ... ``cross_entropy_backward``)
    that the workspace has written (stubs that still raise NotImplementedError are left
    out) replaces ``minibert.functional``'s for the block, with the fast twins switched
    off (``minibert.fast_kernels(False)``) so the model calls the reference pairs, and so
    the student's code. Everything is restored on exit, also after an error.
    Inputs: workspace, the student's folder; names, an optional list of the backwards to use.
    Yields: the list of names that were replaced.
    """
    import minibert

    read_marker(workspace)
    folder = Path(workspace).resolve()
    chosen = list(LAYER_BACKWARDS) if names is None else list(names)
    unknown = [n for n in chosen if n not in LAYER_BACKWARDS]
    if unknown:
        raise ValueError(f"names must be among {list(LAYER_BACKWARDS)}, got {unknown}")
    replacements = {}
    for task in TASKS:
        if task.function in chosen and (folder / task.file).is_file() \
                and not _is_stub(folder / task.file, task.function):
            try:
                functions = load_task_functions(folder, task, isolate=False)
            except TaskLoadError as error:
                raise ValueError(f"workspace {str(folder)!r}: {error}") from None
            replacements[task.function] = functions[task.function]
    originals = {name: getattr(F, name) for name in replacements}
    with minibert.fast_kernels(False):
        try:
            for name, function in replacements.items():
                setattr(F, name, function)
            yield sorted(replacements, key=LAYER_BACKWARDS.index)
        finally:
            for name, function in originals.items():
                setattr(F, name, function)
