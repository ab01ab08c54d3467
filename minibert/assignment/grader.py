"""The grader: each task in its own process, a table, JSON, Gradescope's results.json, a CSV.

``check_task`` grades one task in this process and returns its result with any integrity
flags; ``grade_task`` is its short form (what ``test_public.py`` and the tests use).
``grade`` runs every task of a workspace in its own process (``runner.run_jobs``), so an
infinite loop, a crash or a syntax error costs one task only; ``grade_all`` grades a
folder of submissions in one run and writes one CSV. The processes run with one BLAS
thread, so the same workspace gets the same score, and the same messages, whatever the
caller's thread settings; the checks' tolerances hold on any CPU (see ``checks.py``).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import tempfile
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from minibert.assignment.runner import DEFAULT_IMPORT_LIMIT, Job, check_limit, run_jobs
from minibert.assignment.task_check import TaskResult, check_task, grade_task
from minibert.assignment.tasks import TASKS, task_by_name
from minibert.assignment.workspace import MARKER, NotAWorkspace, read_hidden_seed, read_marker

__all__ = ["GradeRow", "GradeReport", "TaskResult", "grade", "grade_all", "grade_task",
           "check_task", "prove_writable", "DEFAULT_TIME_LIMIT", "DEFAULT_IMPORT_LIMIT"]

DEFAULT_TIME_LIMIT = 60.0  # seconds of checks per task; a correct task takes well under 5 s
_FLAG_NOTE = "flagged for the lecturer (the score stands; the lecturer decides)"
GRADESCOPE_VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")


@dataclass
class GradeRow:
    task: str
    points: int
    max_points: int
    passed: bool
    message: str  # "ok", or the first failing check in one line
    flags: list = field(default_factory=list)  # integrity flags (the score is not changed)
    public_passed: bool | None = None  # the public checks alone passed


@dataclass
class GradeReport:
    workspace: str
    levels: list[str]
    rows: list[GradeRow] = field(default_factory=list)
    kind: str = "backprop"

    @property
    def total(self) -> int:
        return sum(row.points for row in self.rows)

    @property
    def max_total(self) -> int:
        return sum(row.max_points for row in self.rows)

    @property
    def flags(self) -> list[str]:
        return [f"{row.task}: {flag}" for row in self.rows for flag in row.flags]

    def to_dict(self) -> dict:
        return {"workspace": self.workspace, "kind": self.kind, "levels": self.levels,
                "total": self.total, "max_total": self.max_total,
                "tasks": [asdict(row) for row in self.rows]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def table(self) -> str:
        width = max([len(row.task) for row in self.rows] + [5])
        lines = [f"{'task':<{width}}  points  result"]
        for row in self.rows:
            score = f"{row.points}/{row.max_points}"
            mark = "  [flagged]" if row.flags else ""
            lines.append(f"{row.task:<{width}}  {score:>6}  {row.message}{mark}")
        tests = " + ".join(self.levels)
        lines.append(f"{'total':<{width}}  {f'{self.total}/{self.max_total}':>6}  ({tests} tests)")
        if self.kind == "bugs":
            fixed = sum(row.passed for row in self.rows)
            lines.append(f"{fixed} of {len(self.rows)} bugs fixed")
        if self.flags:
            lines.append(f"{_FLAG_NOTE}:")
            lines.extend(f"  {flag}" for flag in self.flags)
        return "\n".join(lines)

    def to_gradescope(self, hidden_visibility: str = "after_published") -> dict:
        """Gradescope's autograder results.json: one test per task, its points and its line.

        Without hidden tests each task is one visible test. With them, each task is two:
        its public checks, visible at once (no points), and the task with the hidden
        checks, which carries the points and shows with ``hidden_visibility`` ("hidden",
        "after_due_date", "after_published" or "visible"); the total is then left for
        Gradescope to add up, so it shows no sooner than the hidden tests. Flags go into
        the task's output and ``extra_data``.
        """
        if hidden_visibility not in GRADESCOPE_VISIBILITY:
            raise ValueError(f"hidden_visibility must be one of {list(GRADESCOPE_VISIBILITY)}, "
                             f"got {hidden_visibility!r}")
        hidden = "hidden" in self.levels
        tests = []
        for row in self.rows:
            spec = _spec(row.task) if self.kind != "bugs" else None
            name = f"{row.task} ({spec.file}: {spec.function})" if spec else row.task
            output = row.message + "".join(f"\n{_FLAG_NOTE}: {flag}" for flag in row.flags)
            if hidden:
                public = bool(row.public_passed)
                tests.append({"name": f"{name}: public tests", "score": 0, "max_score": 0,
                              "status": "passed" if public else "failed",
                              "output": output if not public else "ok",
                              "visibility": "visible"})
                name = f"{name}: all tests (hidden included)"
            tests.append({"name": name, "score": row.points, "max_score": row.max_points,
                          "status": "passed" if row.passed else "failed", "output": output,
                          "visibility": hidden_visibility if hidden else "visible"})
        for number, test in enumerate(tests, 1):
            test["number"] = str(number)
        summary = f"{self.total}/{self.max_total} points ({' + '.join(self.levels)} tests)"
        if self.flags:
            summary += f"; {_FLAG_NOTE}: " + "; ".join(self.flags)
        results = {"output": summary if not hidden else "the public tests' results are "
                   "below; the points show when the hidden tests do",
                   "visibility": "visible", "stdout_visibility": "hidden", "tests": tests,
                   "extra_data": {"flags": self.flags, "levels": self.levels,
                                  "total": self.total, "summary": summary}}
        if not hidden or hidden_visibility == "visible":
            results["score"] = self.total
        return results


def _spec(name: str):
    try:
        return task_by_name(name)
    except ValueError:
        return None


def _tasks_of(kind: str) -> list[tuple[str, str, int]]:
    """(job name, row name, points) of every task of a workspace of ``kind``."""
    if kind == "bugs":
        from minibert.assignment.bugs import BUG_IDS
        return [(bug, f"bug {k}", 1) for k, bug in enumerate(BUG_IDS, 1)]
    return [(task.name, task.name, task.points) for task in TASKS]


def _check_limits(time_limit, import_limit, jobs) -> None:
    check_limit(time_limit, "time_limit")
    check_limit(import_limit, "import_limit")
    if int(jobs) < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")


def prove_writable(path) -> None:
    """Raise the OSError a write of ``path`` would meet, before any work: a folder that does
    not exist or cannot be written, a folder or socket at ``path``. A stream (/dev/stdout)
    passes; a file there is not touched (a probe file beside it is made and removed)."""
    import errno
    import os

    from minibert.io.fileio import writable_destination

    target = writable_destination(path)
    if target is None:
        return
    folder = target.parent
    while not folder.exists() and folder != folder.parent:  # the write makes the folders
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{folder} is not a folder", str(path))
    try:
        handle, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".probe",
                                         dir=folder)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    os.close(handle)
    os.unlink(probe)


def grade(workspace, hidden=None, time_limit: float = DEFAULT_TIME_LIMIT, jobs: int = 2,
          import_limit: float = DEFAULT_IMPORT_LIMIT) -> GradeReport:
    """Grade every task of ``workspace``, each in its own process.

    Inputs: workspace, a folder written by ``create_workspace``; hidden, the instructor's
    hidden/ folder (adds the hidden tests); time_limit, seconds of checks per task (> 0),
    counted after the task's file has loaded; import_limit, seconds to load the file;
    jobs, how many tasks run at once. Output: GradeReport (rows in teaching order).
    """
    folder, kind = _workspace(workspace)
    if kind == "hidden":
        raise ValueError(f"workspace {str(workspace)!r} is the hidden tests' folder; pass it "
                         f"as hidden= (--hidden) and grade the student's folder")
    _check_limits(time_limit, import_limit, jobs)
    folder = folder.resolve()
    seed = None if hidden is None else read_hidden_seed(hidden)
    tasks = _tasks_of(kind)
    results = run_jobs([Job(str(folder), name, seed, kind) for name, _, _ in tasks],
                       time_limit, import_limit, int(jobs))
    return _report(folder, kind, seed, tasks, results)


def _workspace(workspace) -> tuple[Path, str]:
    """(the folder of the task files, its kind): a workspace with its marker, or an upload
    without one (Gradescope's submission folder) whose task files sit at its top or in
    its one subfolder, as grade_all reads a submission."""
    try:
        return Path(workspace), read_marker(workspace)["kind"]
    except NotAWorkspace:
        folder = Path(workspace)
        root = _task_root(folder) if folder.is_dir() else None
        if root is None:
            raise
    if (root / MARKER).is_file():
        try:
            kind = read_marker(root).get("kind", "backprop")
        except NotAWorkspace:
            kind = "backprop"
        return root, kind if kind in ("backprop", "bugs") else "backprop"
    return root, "bugs" if (root / "buggy_bert.py").is_file() else "backprop"


def _report(folder: Path, kind: str, seed, tasks, results) -> GradeReport:
    levels = ["public"] + (["hidden"] if seed is not None and kind != "bugs" else [])
    report = GradeReport(str(folder), levels, kind=kind)
    for (_, row_name, points), result in zip(tasks, results):
        report.rows.append(GradeRow(row_name, points if result.passed else 0, points,
                                    result.passed, result.message, list(result.flags),
                                    getattr(result, "public_passed", None)))
    return report


# ----------------------------------------------------------------------------------------
# A class folder of submissions
# ----------------------------------------------------------------------------------------

_ZIP_LIMIT = 50 * 1024 * 1024  # uncompressed bytes of one submission's zip


def _task_root(folder: Path) -> Path | None:
    """The folder that holds the task files: ``folder`` itself, or its one subfolder."""
    names = {t.file for t in TASKS} | {"buggy_bert.py"}
    if any((folder / name).is_file() for name in names):
        return folder
    children = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))]
    if len(children) == 1:
        return _task_root(children[0])
    return None


def _unzip(path: Path, target: Path) -> str | None:
    """Extract ``path`` into ``target``; a one-line reason when it cannot be used."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if sum(m.file_size for m in members) > _ZIP_LIMIT:
                return f"{path.name} holds more than {_ZIP_LIMIT // 2**20} MB"
            for member in members:
                destination = (target / member.filename).resolve()
                if target.resolve() not in destination.parents and destination != target:
                    return f"{path.name} holds a path outside its folder ({member.filename!r})"
            archive.extractall(target)
    except (zipfile.BadZipFile, OSError) as error:
        return f"{path.name} is not a readable zip file ({error})"
    return None


def grade_all(submissions, hidden=None, out=None, time_limit: float = DEFAULT_TIME_LIMIT,
              jobs: int = 2, import_limit: float = DEFAULT_IMPORT_LIMIT,
              progress=None) -> list[tuple[str, GradeReport | None, str]]:
    """Grade every submission in ``submissions`` (a folder) and write one CSV to ``out``.

    A submission is a subfolder or a .zip file, named after the student; its task files
    may sit at its top or in its one subfolder, with or without the workspace's marker
    (then it is graded as the backward-pass assignment). All tasks of all submissions run
    in one pool of ``jobs`` processes. Returns (name, report or None, note) per submission
    in name order; ``progress(done, total, name, report)`` is called as each finishes.
    """
    folder = Path(submissions)
    if not folder.is_dir():
        raise ValueError(f"submissions {str(folder)!r} is not a folder; give the folder that "
                         f"holds one subfolder (or .zip) per student")
    _check_limits(time_limit, import_limit, jobs)
    seed = None if hidden is None else read_hidden_seed(hidden)
    if out is not None:
        prove_writable(out)  # before grading the class, not after
    entries = sorted(p for p in folder.iterdir() if not p.name.startswith(".")
                     and (p.is_dir() or p.suffix.lower() == ".zip"))
    if not entries:
        raise ValueError(f"submissions {str(folder)!r} holds no subfolder and no .zip file")
    scratch = Path(tempfile.mkdtemp(prefix="minibert-grade-all-"))
    try:
        plans = []  # (name, root or None, kind, note)
        for entry in entries:
            name = entry.stem if entry.suffix.lower() == ".zip" else entry.name
            base = entry
            if entry.is_file():
                base = scratch / f"{len(plans)}"
                base.mkdir()
                reason = _unzip(entry, base)
                if reason:
                    plans.append((name, None, "backprop", reason))
                    continue
            root = _task_root(base)
            if root is None:
                plans.append((name, None, "backprop", "no task files found"))
                continue
            kind = "backprop"
            if (root / MARKER).is_file():
                try:
                    kind = read_marker(root).get("kind", "backprop")
                except ValueError:
                    kind = "backprop"
            kind = kind if kind in ("backprop", "bugs") else "backprop"
            plans.append((name, root.resolve(), kind, ""))
        job_list, owners = [], []
        for index, (_, root, kind, _) in enumerate(plans):
            if root is None:
                continue
            for job_name, _, _ in _tasks_of(kind):
                job_list.append(Job(str(root), job_name, seed if kind != "bugs" else None,
                                    kind))
                owners.append(index)
        remaining = {i: sum(1 for o in owners if o == i) for i in set(owners)}
        results_by_plan: dict[int, dict[int, object]] = {i: {} for i in remaining}
        done = [sum(1 for p in plans if p[1] is None)]
        reports: dict[int, GradeReport] = {}

        def collect(index, result) -> None:
            plan = owners[index]
            results_by_plan[plan][index] = result
            remaining[plan] -= 1
            if remaining[plan] == 0:
                name, root, kind, _ = plans[plan]
                ordered = [results_by_plan[plan][i] for i in sorted(results_by_plan[plan])]
                reports[plan] = _report(root, kind, seed, _tasks_of(kind), ordered)
                done[0] += 1
                if progress is not None:
                    progress(done[0], len(plans), name, reports[plan])

        run_jobs(job_list, time_limit, import_limit, int(jobs), on_result=collect)
        graded = [(name, reports.get(i), note) for i, (name, _, _, note) in enumerate(plans)]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if out is not None:
        write_csv(graded, out)
    return graded


def csv_text(graded: list[tuple[str, GradeReport | None, str]]) -> str:
    """One row per submission: total, each task's points, the flags, the failed tasks' lines."""
    kinds = {report.kind for _, report, _ in graded if report is not None} or {"backprop"}
    columns = [row for kind in sorted(kinds) for _, row, _ in _tasks_of(kind)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", "total", "max_total", *columns, "flags", "notes"])
    for name, report, note in graded:
        if report is None:
            writer.writerow([name, 0, "", *([""] * len(columns)), "", note])
            continue
        points = {row.task: row.points for row in report.rows}
        failed = "; ".join(f"{row.task}: {row.message}" for row in report.rows if not row.passed)
        writer.writerow([name, report.total, report.max_total,
                         *[points.get(column, "") for column in columns],
                         "; ".join(report.flags), failed])
    return buffer.getvalue()


def write_csv(graded, out) -> Path:
    """Write ``csv_text(graded)`` to ``out`` atomically."""
    from minibert.io.fileio import atomic_write_text

    path = Path(out)
    atomic_write_text(path, csv_text(graded))
    return path
