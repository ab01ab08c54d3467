"""Student workspaces: writing them, loading a student's functions, running the model on them.

A workspace is a folder with one file per task (``linear.py``, ``layernorm.py``, ...), the
public tests (``test_public.py``), the handout (``README.md``, see ``handout.py``),
``answers.md`` for the written questions and a marker file ``.minibert-assignment.json``
that says what kind of workspace it is. ``create_workspace(..., instructor=True)`` writes
three folders: ``student/`` to hand out, ``solutions/`` (a complete workspace) and
``hidden/`` (the hidden tests' seed and runner), which stay with the instructor; it needs
the instructor's material of the repository (``instructor.py``), which the installed
package does not carry.

Loading a task's file (``load_task_functions``) happens inside ``isolated_imports``: the
other task files import as minibert's versions of them, so one file's mistake costs its
own task only.
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
import traceback
import types
from contextlib import contextmanager
from pathlib import Path

from minibert import functional as F
from minibert.assignment import instructor as instructor_material
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


def _readme(kind: str, course: dict | None = None) -> str:
    if kind == "bugs":
        from minibert.assignment.bugs import LAB_README
        return LAB_README
    from minibert.assignment.handout import handout_markdown
    return handout_markdown(**(course or {}))


def _answers() -> str:
    """The file the written questions are answered in."""
    from minibert.assignment.handout import QUESTIONS
    lines = ["# Answers to the written questions", ""]
    for title, questions in QUESTIONS.values():
        lines += [f"## {title}", ""]
        for number, question in enumerate(questions, 1):
            lines += [f"### Question {number}", "", f"> {question}", "", "(your answer)", ""]
    return "\n".join(lines)


def _write_student_tree(folder: Path, kind: str, sources: dict[str, str],
                        pdf: bool = False, course: dict | None = None) -> None:
    folder.mkdir(parents=True)
    for name, text in sources.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "README.md").write_text(_readme(kind, course), encoding="utf-8")
    marker = {"kind": kind, "version": 1}
    if kind == "backprop":
        (folder / "test_public.py").write_text(_PUBLIC_TESTS, encoding="utf-8")
        (folder / "answers.md").write_text(_answers(), encoding="utf-8")
        marker["tasks"] = list(TASK_NAMES)
    if pdf:
        from minibert.assignment.handout import write_pdf
        write_pdf(_readme(kind, course), folder / "README.pdf")
    (folder / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")


def create_workspace(path, instructor: bool = False, lab: str | None = None,
                     overwrite: bool = False, seed: int | None = None,
                     pdf: bool = False, deadline: str | None = None, submit: str | None = None,
                     late_policy: str | None = None) -> Path:
    """Write a student workspace (or, with ``instructor``, the instructor's three folders).

    Inputs: path, the folder to create; instructor, also write solutions/ and hidden/
    (for the lab: solutions/ with the fixed file and BUGS.md, the lecturer's list);
    lab, None for the backward-pass assignment or "bugs" for the bug-hunting lab;
    overwrite, replace an existing workspace at path (never a folder of anything else);
    seed, the hidden tests' seed (default: drawn at random once, then stored); pdf, also
    draw the student's README as README.pdf; deadline, submit (how to hand in) and
    late_policy, the handout's "Submitting" section (one line each).
    Output: the folder written. The tree is built beside ``path`` and renamed into place,
    so an interrupted call leaves nothing half-written.
    """
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
    course = {}
    for name, value in (("deadline", deadline), ("submit", submit),
                        ("late_policy", late_policy)):
        if value is not None:
            if not isinstance(value, str) or not value.strip() or "\n" in value:
                raise ValueError(f"{name} must be one line of text, got {value!r}")
            course[name] = value.strip()
    solved = {}
    if kind == "bugs":
        from minibert.assignment.bugs import LAB_FILE, buggy_source
        student = {LAB_FILE: buggy_source()}
        if instructor:
            solved = {LAB_FILE: instructor_material.load("bugs_key").fixed_source()}
    else:
        student = {t.file: stub_source(t) for t in TASKS}
        if instructor:
            solution_source = instructor_material.load("solutions").solution_source
            solved = {t.file: solution_source(t) for t in TASKS}
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    except OSError as error:  # name the folder asked for, not the hidden staging folder
        raise OSError(error.errno, error.strerror, str(target)) from None
    try:
        tree = staging / "tree"
        if not instructor:
            _write_student_tree(tree, kind, student, pdf, course)
        else:
            tree.mkdir()
            _write_student_tree(tree / "student", kind, student, pdf, course)
            _write_student_tree(tree / "solutions", kind, solved, course=course)
            if kind == "bugs":
                notes = instructor_material.load("bugs_key").instructor_notes()
                (tree / "solutions" / "BUGS.md").write_text(notes, encoding="utf-8")
            else:
                rubric = instructor_material.load("written").rubric_markdown()
                (tree / "solutions" / "RUBRIC.md").write_text(rubric, encoding="utf-8")
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

TASK_STEMS: dict[str, Task] = {Path(task.file).stem: task for task in TASKS}


def reference_functions(task: Task) -> dict:
    """minibert's own functions for ``task`` (name -> callable): what a stand-in serves.

    Only the layer tasks have one in the installed package (``minibert.functional``'s
    pairs); the other tasks' answers are the instructor's, so their stand-ins are empty."""
    if task.part != "layers":
        return {}
    names = (task.function, *EXTRA_FUNCTIONS.get(task.name, {}))
    return {name: getattr(F, name) for name in names}


def _stand_in(task: Task) -> types.ModuleType:
    """A module named like ``task``'s file that holds minibert's functions of that task."""
    module = types.ModuleType(Path(task.file).stem, f"minibert's {task.function} (stand-in "
                              f"for {task.file} while another task is graded)")
    module.__dict__.update(reference_functions(task))
    module.__dict__["__minibert_stand_in__"] = task.name
    return module


@contextmanager
def isolated_imports(folder: Path, task: Task | None):
    """While grading ``task``, another task's file imports as minibert's version of it.

    ``from softmax import softmax_backward`` inside attention.py gets minibert's
    softmax_backward, so a mistake (even a syntax error) in softmax.py costs the softmax
    task only. The student's folder is on the path for their own helper modules. With
    ``task`` None (``use_implementation``) the student's files import each other for real.
    sys.path and sys.modules are restored on exit.
    """
    saved_modules = {stem: sys.modules.get(stem) for stem in TASK_STEMS}
    added = str(folder) not in sys.path
    if added:
        sys.path.insert(0, str(folder))
    try:
        for stem, other in TASK_STEMS.items():
            sys.modules.pop(stem, None)
            if task is not None and other.name != task.name:
                sys.modules[stem] = _stand_in(other)
        yield
    finally:
        for stem, module in saved_modules.items():
            if module is None:
                sys.modules.pop(stem, None)
            else:
                sys.modules[stem] = module
        if added and str(folder) in sys.path:
            sys.path.remove(str(folder))


def _where(error: BaseException, folder: Path) -> str:
    """'file.py line N' for the deepest frame of ``error`` in the student's folder, else ''."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if Path(f.filename).resolve().parent == folder]
    return f"{Path(frames[-1].filename).name} line {frames[-1].lineno}" if frames else ""


def _import_file(path: Path, folder: Path):
    """Import one student file under a fresh module name (no cache between workspaces).

    Call inside ``isolated_imports``. Errors become one TaskLoadError line that names the
    file and line where they are (a syntax error in a helper module names the helper).
    """
    name = f"_minibert_student_{abs(hash(str(path)))}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        where = Path(error.filename).name if error.filename else path.name
        raise TaskLoadError(f"{where} line {error.lineno}: {type(error).__name__}: "
                            f"{error.msg}") from None
    except ImportError as error:
        where = _where(error, folder) or path.name
        stem = getattr(error, "name", None)
        if stem in TASK_STEMS and isinstance(sys.modules.get(stem), types.ModuleType) and \
                hasattr(sys.modules[stem], "__minibert_stand_in__"):
            other = TASK_STEMS[stem]
            served = ", ".join(reference_functions(other)) or "nothing"
            raise TaskLoadError(f"{where}: {error}; while {path.name} is graded, "
                                f"{other.file} is minibert's version of it (it serves "
                                f"{served}): put helpers in the file that uses them") from None
        raise TaskLoadError(f"{where}: {type(error).__name__} while loading {path.name}: "
                            f"{error}") from None
    except SystemExit:
        raise TaskLoadError(f"{path.name}: calls sys.exit() (or exit()) while it is "
                            f"loaded") from None
    except Exception as error:  # the student's top-level code may raise anything
        where = _where(error, folder) or path.name
        raise TaskLoadError(f"{where}: {type(error).__name__} while loading {path.name}: "
                            f"{error}") from None
    return module


def load_task_functions(workspace, task: Task, isolate: bool = True) -> dict:
    """The functions of ``task`` from the student's file, their signatures checked.

    With ``isolate``, the file is imported inside ``isolated_imports`` (another task's file
    is minibert's version of it) and any layer backward the file defines besides its own
    (e.g. a helper softmax_backward inside attention.py) is replaced by minibert's, so one
    mistake costs one task only. Call it inside ``isolated_imports`` to keep the stand-ins
    for the checks too (a function may import at call time). Raises TaskLoadError with
    one line when the file cannot be used.
    """
    folder = Path(workspace).resolve()
    path = folder / task.file
    if not path.is_file():
        raise TaskLoadError(f"{task.file} is missing from the workspace")
    with isolated_imports(folder, task if isolate else None):
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
    out) replaces ``minibert.functional``'s for the block; the layers look their pairs up
    there at each call, so the model runs the student's code. Everything is restored on
    exit, also after an error.
    Inputs: workspace, the student's folder; names, an optional list of the backwards to use.
    Yields: the list of names that were replaced.
    """
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
    try:
        for name, function in replacements.items():
            setattr(F, name, function)
        yield sorted(replacements, key=LAYER_BACKWARDS.index)
    finally:
        for name, function in originals.items():
            setattr(F, name, function)
