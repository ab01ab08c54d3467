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
import math
import os
import re
import shutil
import stat
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
    late_days: float = 0.0  # grade_all: days late
    penalty: float = 0.0  # grade_all: percent taken off the total for lateness

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

_SUBMISSION_LIMIT = 50 * 2**20  # bytes of one submission (unzipped or copied), in all
_FILE_LIMIT = 5 * 2**20  # bytes of one file of a submission; a task file is a few KB
_FILE_COUNT = 1000  # files in one submission
_DEPTH = 4  # folders within a submission
# Canvas's "Download Submissions": name[_LATE]_userid_submissionid_original-name, with
# "-1", "-2" before the extension of a resubmitted file
_CANVAS = re.compile(r"^(?P<name>[^_/]+?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<id>\d+)_"
                     r"(?P<file>.+?)(?:-\d+)?(?P<ext>\.\w+)$")


def _printable(name: str) -> str:
    """``name`` as UTF-8 text: undecodable bytes of a file name shown as U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _task_root(folder: Path, depth: int = 0) -> Path | None:
    """The folder that holds the task files: ``folder`` itself, or its one subfolder."""
    names = {t.file for t in TASKS} | {"buggy_bert.py"}
    if any((folder / name).is_file() for name in names):
        return folder
    children = [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()
                and not p.name.startswith((".", "_"))]
    if len(children) == 1 and depth < _DEPTH:
        return _task_root(children[0], depth + 1)
    return None


class _Refused(Exception):
    """A submission that cannot be graded; the message is its CSV note."""


def _copy_folder(source: Path, target: Path, notes: list[str]) -> None:
    """Copy the regular files of ``source`` into ``target``, within the limits; symbolic
    links, devices and FIFOs are never followed or read (a note says what was left out)."""
    total = count = 0
    for folder, subfolders, files in os.walk(source, followlinks=False):
        here = Path(folder)
        relative = here.relative_to(source)
        if len(relative.parts) > _DEPTH:
            subfolders[:] = []
            continue
        for name in sorted(subfolders):
            if (here / name).is_symlink():
                notes.append(f"{_printable(str(relative / name))}: a symbolic link, not "
                             f"followed")
        subfolders[:] = [n for n in subfolders if not (here / n).is_symlink()
                         and not n.startswith(".")]
        (target / relative).mkdir(parents=True, exist_ok=True)
        for name in sorted(files):
            path = here / name
            shown = _printable(str(relative / name))
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                notes.append(f"{shown}: a symbolic link, not followed")
                continue
            if not stat.S_ISREG(info.st_mode):
                notes.append(f"{shown}: not a regular file, left out")
                continue
            if info.st_size > _FILE_LIMIT:
                notes.append(f"{shown}: {info.st_size / 2**20:.0f} MB, more than "
                             f"{_FILE_LIMIT // 2**20} MB: left out")
                continue
            count += 1
            total += info.st_size
            if count > _FILE_COUNT or total > _SUBMISSION_LIMIT:
                raise _Refused(f"more than {_FILE_COUNT} files or {_SUBMISSION_LIMIT // 2**20} "
                               f"MB in all")
            shutil.copyfile(path, target / relative / name, follow_symlinks=False)


def _unzip(path: Path, target: Path, notes: list[str]) -> None:
    """Extract ``path`` into ``target`` within the limits, member by member, reading no
    more than each member declares (a zip bomb stops at the limit)."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            if len(members) > _FILE_COUNT:
                raise _Refused(f"{_printable(path.name)} holds {len(members)} files, more than "
                               f"{_FILE_COUNT}")
            if sum(m.file_size for m in members) > _SUBMISSION_LIMIT:
                raise _Refused(f"{_printable(path.name)} holds more than "
                               f"{_SUBMISSION_LIMIT // 2**20} MB")
            root = target.resolve()
            for member in members:
                destination = (target / member.filename).resolve()
                if root not in destination.parents:
                    raise _Refused(f"{_printable(path.name)} holds a path outside its folder "
                                   f"({_printable(member.filename)!r})")
                if (member.external_attr >> 16) & 0o170000 == 0o120000:
                    notes.append(f"{_printable(member.filename)}: a symbolic link, not followed")
                    continue
                if member.file_size > _FILE_LIMIT:
                    notes.append(f"{_printable(member.filename)}: "
                                 f"{member.file_size / 2**20:.0f} MB, more than "
                                 f"{_FILE_LIMIT // 2**20} MB: left out")
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as source, open(destination, "wb") as sink:
                    left = member.file_size
                    while True:
                        chunk = source.read(min(2**20, left + 1))
                        if not chunk:
                            break
                        left -= len(chunk)
                        if left < 0:
                            raise _Refused(f"{_printable(path.name)}: "
                                           f"{_printable(member.filename)} unpacks to more "
                                           f"than it declares")
                        sink.write(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError,
            RuntimeError, ValueError, EOFError) as error:
        raise _Refused(f"{_printable(path.name)} is not a readable zip file "
                       f"({_printable(str(error))[:120]})") from None


@dataclass
class _Submission:
    name: str  # the row's name in the CSV
    sources: list  # the paths it comes from (a folder, a zip, Canvas's flat files)
    late: bool = False  # Canvas marked it late
    root: Path | None = None  # its task files, copied into the scratch folder
    kind: str = "backprop"
    notes: list = field(default_factory=list)


def _collect(folder: Path) -> list[_Submission]:
    """The submissions in a class folder: subfolders, zips, Canvas's flat files (grouped by
    student), each named once (a name used twice gets its source's name)."""
    found: dict[str, _Submission] = {}
    order: list[_Submission] = []

    def add(name: str, source: Path, late: bool = False, key: str | None = None) -> None:
        key = key or f"entry:{source.name}"
        if key not in found:
            found[key] = _Submission(_printable(name), [], late)
            order.append(found[key])
        found[key].sources.append(source)
        found[key].late = found[key].late or late

    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        canvas = _CANVAS.match(entry.name)
        if entry.is_symlink():
            add(entry.name, entry)
        elif entry.is_dir():
            add(entry.name, entry)
        elif canvas and (entry.suffix.lower() in (".py", ".md", ".zip")):
            if entry.suffix.lower() == ".zip":
                add(canvas["name"], entry, bool(canvas["late"]))
            else:
                add(canvas["name"], entry, bool(canvas["late"]),
                    key=f"canvas:{canvas['name']}_{canvas['user']}")
        elif entry.suffix.lower() == ".zip":
            add(entry.stem, entry)
    counts: dict[str, int] = {}
    for submission in order:
        counts[submission.name] = counts.get(submission.name, 0) + 1
    for submission in order:
        if counts[submission.name] > 1:  # alice/ and alice.zip: told apart by their sources
            submission.name = _printable(submission.sources[0].name)
    return order


def _prepare(submission: _Submission, target: Path) -> None:
    """Copy or unzip ``submission`` into ``target``; set its root and kind."""
    target.mkdir()
    first = submission.sources[0]
    if first.is_symlink():
        raise _Refused(f"{_printable(first.name)} is a symbolic link: not followed")
    if first.is_dir():
        _copy_folder(first, target, submission.notes)
    elif first.suffix.lower() == ".zip":
        _unzip(first, target, submission.notes)
    else:  # Canvas's flat files: each under its original name
        for path in submission.sources:
            canvas = _CANVAS.match(path.name)
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode) or info.st_size > _FILE_LIMIT:
                submission.notes.append(f"{_printable(path.name)}: not a regular file of at "
                                        f"most {_FILE_LIMIT // 2**20} MB, left out")
                continue
            shutil.copyfile(path, target / (canvas["file"] + canvas["ext"]),
                            follow_symlinks=False)
    root = _task_root(target)
    if root is None:
        raise _Refused("no task files found (linear.py ... nsp.py, or buggy_bert.py)")
    kind = "bugs" if (root / "buggy_bert.py").is_file() else "backprop"
    if (root / MARKER).is_file():
        try:
            kind = read_marker(root).get("kind", kind)
        except ValueError:
            pass
    submission.root, submission.kind = root.resolve(), kind if kind in ("backprop",
                                                                       "bugs") else "backprop"


def _read_late_days(path) -> dict[str, float]:
    """A CSV of two columns, submission and days late (a header row is allowed)."""
    days = {}
    with open(path, encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.reader(handle), 1):
            if not row or (number == 1 and not _is_number(row[-1])):
                continue
            if len(row) != 2 or not _is_number(row[1]) or float(row[1]) < 0:
                raise ValueError(f"late_days {str(path)!r} line {number}: expected "
                                 f"'submission,days' with days >= 0, got {row!r}")
            days[row[0]] = float(row[1])
    return days


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def grade_all(submissions, hidden=None, out=None, time_limit: float = DEFAULT_TIME_LIMIT,
              jobs: int = 2, import_limit: float = DEFAULT_IMPORT_LIMIT,
              progress=None, late_days=None, late_penalty: float = 0.0, only=None,
              similarity: bool = True) -> list[tuple[str, GradeReport | None, str]]:
    """Grade every submission in ``submissions`` (a folder) and write one CSV to ``out``.

    A submission is a subfolder, a .zip file, or (Canvas's "Download Submissions") the flat
    files ``name[_LATE]_userid_submissionid_file.py`` of one student; its task files may
    sit at its top or in its one subfolder, with or without the workspace's marker. Each
    is copied (or unzipped) into a scratch folder first, within limits (``_FILE_LIMIT``
    per file, ``_SUBMISSION_LIMIT`` in all; symbolic links never followed), and graded
    there; what cannot be used is one row with a note. All tasks of all submissions run
    in one pool of ``jobs`` processes.

    ``late_days``: a dict (or a CSV file of ``submission,days``) of days late; Canvas's
    LATE mark counts one day where the dict says nothing; ``late_penalty``: percent of the
    total taken off per day late (capped at 100). ``only``: names of the submissions to
    grade again (a regrade), whose rows replace theirs in an existing ``out``. With
    ``similarity``, each task file is compared with every other submission's and with
    the answer key (when the instructor's material is there): the notes name the most
    alike. Returns (name, report or None, note) per submission in name order;
    ``progress(done, total, name, report)`` is called as each finishes.
    """
    folder = Path(submissions)
    if not folder.is_dir():
        raise ValueError(f"submissions {str(folder)!r} is not a folder; give the folder that "
                         f"holds one subfolder (or .zip) per student")
    _check_limits(time_limit, import_limit, jobs)
    if not (math.isfinite(float(late_penalty)) and 0 <= float(late_penalty) <= 100):
        raise ValueError(f"late_penalty must be a percent in [0, 100], got {late_penalty!r}")
    seed = None if hidden is None else read_hidden_seed(hidden)
    if late_days is not None and not isinstance(late_days, dict):
        late_days = _read_late_days(late_days)
    late_days = dict(late_days or {})
    previous = None
    if out is not None:
        if only is not None:
            if not Path(out).is_file():
                raise ValueError(f"out {str(out)!r} does not exist: a regrade replaces rows "
                                 f"of the CSV of an earlier run")
            previous = Path(out).read_text(encoding="utf-8")
        prove_writable(out)  # before grading the class, not after
    plans = _collect(folder)
    if not plans:
        raise ValueError(f"submissions {str(folder)!r} holds no subfolder, no .zip file and "
                         f"no Canvas submission file")
    if only is not None:
        wanted = set(only)
        unknown = sorted(wanted - {p.name for p in plans})
        if unknown:
            raise ValueError(f"only names submissions that are not in {str(folder)!r}: "
                             f"{unknown}")
        plans = [p for p in plans if p.name in wanted]
    scratch = Path(tempfile.mkdtemp(prefix="minibert-grade-all-"))
    try:
        unusable: dict[int, str] = {}
        for index, plan in enumerate(plans):
            try:
                _prepare(plan, scratch / str(index))
            except _Refused as error:
                unusable[index] = str(error)
            except OSError as error:
                unusable[index] = _printable(f"cannot be read ({error.strerror or error})")
        job_list, owners = [], []
        for index, plan in enumerate(plans):
            if index in unusable:
                continue
            for job_name, _, _ in _tasks_of(plan.kind):
                job_list.append(Job(str(plan.root), job_name,
                                    seed if plan.kind != "bugs" else None, plan.kind))
                owners.append(index)
        remaining = {i: sum(1 for o in owners if o == i) for i in set(owners)}
        results_by_plan: dict[int, dict[int, object]] = {i: {} for i in remaining}
        done = [len(unusable)]
        reports: dict[int, GradeReport] = {}

        def collect(index, result) -> None:
            plan = owners[index]
            results_by_plan[plan][index] = result
            remaining[plan] -= 1
            if remaining[plan] == 0:
                ordered = [results_by_plan[plan][i] for i in sorted(results_by_plan[plan])]
                submission = plans[plan]
                reports[plan] = _report(submission.root, submission.kind, seed,
                                        _tasks_of(submission.kind), ordered)
                done[0] += 1
                if progress is not None:
                    progress(done[0], len(plans), submission.name, reports[plan])

        try:
            run_jobs(job_list, time_limit, import_limit, int(jobs), on_result=collect)
        except RuntimeError as error:  # the grader itself failed: the rows say so
            for index in set(owners) - set(reports):
                unusable[index] = _printable(f"not graded: {error}")
        alike = _similar_pairs(plans, unusable) if similarity else {}
        graded = []
        for index, plan in enumerate(plans):
            report = reports.get(index)
            notes = [unusable[index]] if index in unusable else []
            notes += plan.notes
            days = late_days.get(plan.name, 1.0 if plan.late else 0.0)
            if report is not None and days > 0:
                report.late_days = days
                report.penalty = min(100.0, days * float(late_penalty))
                notes.append(f"late {days:g} day(s): -{report.penalty:g}%")
            if alike.get(index):
                notes.append("alike: " + ", ".join(alike[index]))
            graded.append((plan.name, report, "; ".join(notes)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if out is not None:
        if previous is not None:
            write_csv(graded, out, previous=previous)
        else:
            write_csv(graded, out)
    return graded


def _similar_pairs(plans: list[_Submission], unusable: dict) -> dict[int, list[str]]:
    """For each submission, the task files alike (>= PAIR_THRESHOLD) another submission's
    or the answer key's: "task with NAME (97%)", most alike first, at most five."""
    from minibert.assignment import instructor
    from minibert.assignment.similarity import MIN_TOKENS, PAIR_THRESHOLD, fingerprint, tokens
    from minibert.assignment.similarity import similarity as alike

    key = {}
    if instructor.available():
        solutions = instructor.load("solutions")
        for task in TASKS:
            words = tokens(solutions.solution_source(task))
            key[task.file] = fingerprint(words)
    prints: dict[str, list[tuple[int, frozenset]]] = {}
    for index, plan in enumerate(plans):
        if index in unusable or plan.kind != "backprop":
            continue
        for task in TASKS:
            path = plan.root / task.file
            try:
                if not path.is_file() or path.stat().st_size > _FILE_LIMIT:
                    continue
                words = tokens(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
            if len(words) >= MIN_TOKENS and "NotImplementedError" not in words:
                prints.setdefault(task.file, []).append((index, fingerprint(words)))
    found: dict[int, list[tuple[float, str]]] = {}
    for file, entries in prints.items():
        task = file[:-3]
        for position, (a, first) in enumerate(entries):
            if file in key:
                share = alike(first, key[file])
                if share >= PAIR_THRESHOLD:
                    found.setdefault(a, []).append((share, f"{task} with the answer key"))
            for b, second in entries[position + 1:]:
                share = alike(first, second)
                if share >= PAIR_THRESHOLD:
                    found.setdefault(a, []).append((share, f"{task} with {plans[b].name}"))
                    found.setdefault(b, []).append((share, f"{task} with {plans[a].name}"))
    return {index: [f"{what} ({share:.0%})" for share, what in sorted(pairs, reverse=True)[:5]]
            for index, pairs in found.items()}


def csv_text(graded: list[tuple[str, GradeReport | None, str]], previous: str | None = None
             ) -> str:
    """One row per submission: total (after any late penalty), max_total, each task's
    points, the flags, the failed tasks' lines and the notes. With ``previous`` (the text
    of an earlier CSV), its rows are kept and those of ``graded`` replace theirs."""
    kinds = {report.kind for _, report, _ in graded if report is not None} or {"backprop"}
    columns = [row for kind in sorted(kinds) for _, row, _ in _tasks_of(kind)]
    header = ["submission", "total", "max_total", *columns, "late_penalty", "flags", "notes"]
    rows: dict[str, list] = {}
    if previous:
        reader = csv.reader(io.StringIO(previous))
        old_header = next(reader, [])
        for row in reader:
            if row:
                record = dict(zip(old_header, row))
                rows[row[0]] = [record.get(column, "") for column in header]
    full = sum(t.points for t in TASKS)
    for name, report, note in graded:
        if report is None:
            rows[name] = [name, 0, full, *([0] * len(columns)), "", "", note]
            continue
        points = {row.task: row.points for row in report.rows}
        failed = "; ".join(f"{row.task}: {row.message}" for row in report.rows if not row.passed)
        penalty = getattr(report, "penalty", 0.0)
        total = round(report.total * (1 - penalty / 100), 2) if penalty else report.total
        rows[name] = [name, total, report.max_total,
                      *[points.get(column, "") for column in columns],
                      f"{penalty:g}%" if penalty else "", "; ".join(report.flags),
                      "; ".join(part for part in (failed, note) if part)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for name in sorted(rows):
        writer.writerow(rows[name])
    return buffer.getvalue()


def write_csv(graded, out, previous: str | None = None) -> Path:
    """Write ``csv_text(graded, previous)`` to ``out`` atomically."""
    from minibert.io.fileio import atomic_write_text

    path = Path(out)
    atomic_write_text(path, csv_text(graded, previous))
    return path
