"""The grader: each task in its own process with a time limit, then a table and JSON.

``grade_task`` grades one task in this process (what ``test_public.py`` and the tests
use); ``grade`` runs every task in a child Python process (``_child_main``) so that an
infinite loop, a crash or a syntax error costs one task only. The children run with one
BLAS thread, so the same workspace gets the same score, and the same messages, whatever
the caller's thread settings; the checks' tolerances hold on any CPU (see ``checks.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from minibert.assignment.checks import CheckFailed, run_checks
from minibert.assignment.tasks import TASKS, task_by_name
from minibert.assignment.workspace import (
    TaskLoadError,
    load_task_functions,
    read_hidden_seed,
    read_marker,
)

__all__ = ["GradeRow", "GradeReport", "grade", "grade_task", "DEFAULT_TIME_LIMIT"]

DEFAULT_TIME_LIMIT = 60.0  # seconds per task; a correct task takes well under 5 s
_RESULT = "@@minibert-grade "
_CHILD = "import sys; from minibert.assignment.grader import _child_main; _child_main(sys.argv[1:])"
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                     "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


@dataclass
class GradeRow:
    task: str
    points: int
    max_points: int
    passed: bool
    message: str  # "ok", or the first failing check in one line


@dataclass
class GradeReport:
    workspace: str
    levels: list[str]
    rows: list[GradeRow] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(row.points for row in self.rows)

    @property
    def max_total(self) -> int:
        return sum(row.max_points for row in self.rows)

    def to_dict(self) -> dict:
        return {"workspace": self.workspace, "levels": self.levels, "total": self.total,
                "max_total": self.max_total, "tasks": [asdict(row) for row in self.rows]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def table(self) -> str:
        width = max(len(row.task) for row in self.rows) if self.rows else 4
        lines = [f"{'task':<{width}}  points  result"]
        for row in self.rows:
            score = f"{row.points}/{row.max_points}"
            lines.append(f"{row.task:<{width}}  {score:>6}  {row.message}")
        tests = " + ".join(self.levels)
        lines.append(f"{'total':<{width}}  {f'{self.total}/{self.max_total}':>6}  ({tests} tests)")
        return "\n".join(lines)


def _location(error: BaseException, folder: Path) -> str:
    """' (file.py line N)' for the deepest frame in the student's folder, else ''."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if Path(f.filename).resolve().parent == folder]
    return f" ({Path(frames[-1].filename).name} line {frames[-1].lineno})" if frames else ""


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def grade_task(workspace, task: str, hidden_seed: int | None = None) -> tuple[bool, str]:
    """Grade one task in this process: (passed, one-line message).

    The public checks always run; the hidden ones too when ``hidden_seed`` is given.
    """
    kind = read_marker(workspace).get("kind")
    folder = Path(workspace).resolve()
    if kind == "bugs":
        from minibert.assignment.bugs import grade_bug
        return grade_bug(folder, task)
    spec = task_by_name(task)
    try:
        functions = load_task_functions(folder, spec)
        run_checks(task, functions, "public")
        if hidden_seed is not None:
            run_checks(task, functions, "hidden", hidden_seed)
    except TaskLoadError as error:
        return False, _one_line(str(error))
    except CheckFailed as error:
        return False, _one_line(str(error))
    except NotImplementedError as error:
        name = str(error) or spec.function
        return False, f"{name}: not implemented yet (raises NotImplementedError)"
    except RecursionError as error:
        return False, _one_line(f"{spec.function}: RecursionError{_location(error, folder)}")
    except Exception as error:  # the student's code may raise anything: report it, go on
        return False, _one_line(f"{spec.function} raised {type(error).__name__}: {error}"
                                f"{_location(error, folder)}")
    return True, "ok"


def _child_environment() -> dict:
    env = dict(os.environ)
    for name in _THREAD_VARIABLES:
        env[name] = "1"
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the student's folder
    return env


def _grade_in_child(folder: Path, task: str, hidden_seed, time_limit: float) -> tuple[bool, str]:
    command = [sys.executable, "-c", _CHILD, str(folder), task,
               "none" if hidden_seed is None else str(hidden_seed)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=time_limit,
                              env=_child_environment(), cwd=str(folder),
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"time limit of {time_limit:g} s exceeded (an infinite loop?)"
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(_RESULT):
            result = json.loads(line[len(_RESULT):])
            return bool(result["passed"]), str(result["message"])
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return False, _one_line(f"the task's process ended with exit code {done.returncode}: {last}")


def grade(workspace, hidden=None, time_limit: float = DEFAULT_TIME_LIMIT,
          jobs: int = 2) -> GradeReport:
    """Grade every task of ``workspace``, each in its own process.

    Inputs: workspace, a folder written by ``create_workspace``; hidden, the instructor's
    hidden/ folder (adds the hidden tests); time_limit, seconds per task (> 0); jobs, how
    many tasks run at once. Output: GradeReport (rows in teaching order).
    """
    marker = read_marker(workspace)
    if marker["kind"] == "hidden":
        raise ValueError(f"workspace {str(workspace)!r} is the hidden tests' folder; pass it "
                         f"as hidden= (--hidden) and grade the student's folder")
    if not time_limit > 0:
        raise ValueError(f"time_limit must be > 0 seconds, got {time_limit}")
    if int(jobs) < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    folder = Path(workspace).resolve()
    seed = None if hidden is None else read_hidden_seed(hidden)
    if marker["kind"] == "bugs":
        from minibert.assignment.bugs import BUGS
        tasks = [(bug.name, 1) for bug in BUGS]
    else:
        tasks = [(task.name, task.points) for task in TASKS]
    with ThreadPoolExecutor(max_workers=int(jobs)) as pool:
        results = list(pool.map(lambda t: _grade_in_child(folder, t[0], seed, time_limit),
                                tasks))
    report = GradeReport(str(folder), ["public"] + (["hidden"] if seed is not None else []))
    for (name, points), (passed, message) in zip(tasks, results):
        report.rows.append(GradeRow(name, points if passed else 0, points, passed, message))
    return report


def _child_main(argv: list[str]) -> None:
    folder, task, seed = argv
    passed, message = grade_task(folder, task, None if seed == "none" else int(seed))
    sys.stdout.write("\n" + _RESULT + json.dumps({"passed": passed, "message": message}) + "\n")
    sys.stdout.flush()

