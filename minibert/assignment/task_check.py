"""Grade one task in this process: load the student's file, run its checks, collect flags.

``check_task`` is what each of the grader's processes runs (``runner.py``) and what
``grade_task`` (the public tests' entry) wraps. The student's file is loaded inside
``isolated_imports`` (another task's file imports as minibert's version of it) and
``watch_reference`` (a call of minibert's own answer from the student's folder is
recorded); the flags of ``integrity.scan_file`` are added to the result.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from minibert.assignment.checks import CheckFailed, run_checks
from minibert.assignment.integrity import (
    AuditWatch,
    GraderSnapshot,
    autodiff_loaded,
    foreign_library_modules,
    library_flags,
    scan_file,
    watch_reference,
    watch_threads,
)
from minibert.assignment.tasks import task_by_name
from minibert.assignment.workspace import (
    TaskLoadError,
    isolated_imports,
    load_task_functions,
    read_marker,
)

__all__ = ["TaskResult", "check_task", "grade_task"]


class _Tampered(Exception):
    """The task's file changed the grader's own functions."""


@dataclass
class TaskResult:
    passed: bool
    message: str  # "ok", or the first failing check in one line
    flags: list = field(default_factory=list)  # integrity flags, one line each
    public_passed: bool | None = None  # the public checks alone passed


def _location(error: BaseException, folder: Path) -> str:
    """' (file.py line N)' for the deepest frame in the student's folder, else ''."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if Path(f.filename).resolve().parent == folder]
    return f" ({Path(frames[-1].filename).name} line {frames[-1].lineno})" if frames else ""


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def check_task(workspace, task: str, hidden_seed: int | None = None, kind: str | None = None,
               on_loaded=None) -> TaskResult:
    """Grade one task in this process: passed, a one-line message and the integrity flags.

    The public checks always run; the hidden ones too when ``hidden_seed`` is given.
    ``kind`` ("backprop" or "bugs") skips reading the folder's marker (a submission
    without one); ``on_loaded()`` is called once the student's file is loaded (the
    runner starts the checks' clock there).
    """
    folder = Path(workspace).resolve()
    kind = kind or read_marker(workspace).get("kind")
    if kind == "bugs":
        from minibert.assignment.bugs import grade_bug
        if on_loaded is not None:
            on_loaded()
        return TaskResult(*grade_bug(folder, task))
    spec = task_by_name(task)
    path = folder / spec.file
    flags = scan_file(path, spec) + library_flags(path, spec) if path.is_file() else []
    calls: list[str] = []
    before = set(sys.modules)
    foreign_before = set(foreign_library_modules())
    audit = AuditWatch.install()
    loaded = False
    public_passed = False  # True once the public checks passed

    def signal_loaded() -> None:
        nonlocal loaded
        if not loaded and on_loaded is not None:
            on_loaded()
        loaded = True

    try:
        with isolated_imports(folder, spec), watch_reference(spec, folder, calls), \
                watch_threads(spec.file, calls):
            snapshot = GraderSnapshot()
            # the grader's own steps held here: a task file that replaces the module's names
            # (task_check.run_checks, _verify) does not reach these
            verify, run = _verify, run_checks
            audit.start(folder, spec.file)
            try:
                functions = load_task_functions(folder, spec)
            finally:
                signal_loaded()
            verify(snapshot, audit)
            run(task, functions, "public")
            verify(snapshot, audit)
            public_passed = True
            if hidden_seed is not None:
                run(task, functions, "hidden", hidden_seed)
            verify(snapshot, audit)
        passed, message = True, "ok"
    except _Tampered as error:
        passed, message = False, _one_line(f"{spec.file} changed the grader's own {error} "
                                           f"(the task scores 0)")
        flags.append(message)
    except (TaskLoadError, CheckFailed) as error:
        passed, message = False, _one_line(str(error))
    except NotImplementedError as error:
        name = str(error) or spec.function
        passed, message = False, f"{name}: not implemented yet (raises NotImplementedError)"
    except RecursionError as error:
        passed, message = False, _one_line(f"{spec.function}: RecursionError"
                                           f"{_location(error, folder)}")
    except SystemExit:
        passed, message = False, f"{spec.function}: called sys.exit() (or exit())"
    except Exception as error:  # the student's code may raise anything: report it, go on
        passed, message = False, _one_line(f"{spec.function} raised {type(error).__name__}: "
                                           f"{error}{_location(error, folder)}")
    finally:
        calls += audit.stop()
    flags += [c for c in calls if c not in flags]
    flags += [f"{spec.file}: {line}" for line in foreign_library_modules()
              if line not in foreign_before]
    flags += [f"{spec.file}: {name} was imported while the task ran (automatic "
              f"differentiation; the task asks for the gradient by hand)"
              for name in autodiff_loaded(before)
              if not any(f" {name}" in flag for flag in flags)]
    return TaskResult(passed, message, flags, public_passed)


def _verify(snapshot: GraderSnapshot, audit: AuditWatch) -> None:
    if audit.tampered():
        snapshot.restore()
        raise _Tampered(audit.tampered()[0])
    changed = snapshot.changed()
    if changed:
        snapshot.restore()
        raise _Tampered(", ".join(changed[:3]) + (" ..." if len(changed) > 3 else ""))


def grade_task(workspace, task: str, hidden_seed: int | None = None) -> tuple[bool, str]:
    """Grade one task in this process: (passed, one-line message).

    The public checks always run; the hidden ones too when ``hidden_seed`` is given.
    Integrity flags are in ``check_task``'s result and in ``grade``'s report.
    """
    result = check_task(workspace, task, hidden_seed)
    return result.passed, result.message
