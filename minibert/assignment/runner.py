"""Run grading jobs, each task in its own process, with a time limit that starts after loading.

``run_jobs`` starts one supervisor process (a fresh Python with one BLAS thread, so a
workspace gets the same score and messages whatever the caller's thread settings). The
supervisor imports minibert and the checks once, then gives every job (one task of one
workspace) its own process: a fork of itself where the platform forks safely (Linux),
else a new Python. Each job's process

1. loads the student's file (imports, top-level code): up to ``import_limit`` seconds;
2. says so on its pipe, and runs the checks: up to ``time_limit`` seconds from then on;
3. writes its result on the pipe and exits.

So a slow import (torch, say) is not called an infinite loop, and the message says which
phase ran out. A crash, ``os._exit`` or a kill costs that job only. Output the student's
code prints goes to a file, never into the protocol; the result line carries a token the
student's code is not given, so a line it writes into the pipe is not taken for a result.

The grader survives its students: each job runs in its own process group, and the
supervisor adopts what a job leaves behind (Linux's child subreaper), so a process a task
starts, detached or not, is killed when the job ends; every process of the run carries a
token in its environment, and ``run_jobs`` kills any left at the end. A task that kills
the supervisor costs its own row ("killed the grader's process"): ``run_jobs`` starts a
new supervisor for the jobs not yet run. This is not a sandbox: code that runs in the
job's process can do what its user can (see docs/assignments.md).
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Job", "JobResult", "run_jobs", "check_limit", "DEFAULT_IMPORT_LIMIT", "MAX_LIMIT"]

DEFAULT_IMPORT_LIMIT = 120.0  # seconds to load a file; importing torch takes a few
MAX_LIMIT = 86400.0  # the longest time or import limit: one day
_RUN_TOKEN = "MINIBERT_GRADER_RUN"  # in the environment of every process of a run
_OUTPUT_LIMIT = 64 * 2**20  # bytes a forked job may write to any file
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                     "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
_SUPERVISOR = ("import sys; from minibert.assignment.runner import _supervise; "
               "_supervise(sys.stdin.buffer.read())")
_SPAWNED = ("import sys; from minibert.assignment.runner import _spawned_job; "
            "_spawned_job(sys.argv[1], int(sys.argv[2]))")


@dataclass
class Job:
    workspace: str  # the student's folder
    task: str  # a task name, or a bug name for the lab
    hidden_seed: int | None = None
    kind: str | None = None  # "backprop" or "bugs"; None: read the folder's marker


@dataclass
class JobResult:
    passed: bool
    message: str
    flags: list
    load_seconds: float | None  # None when loading did not finish
    check_seconds: float | None
    public_passed: bool | None = None  # the public checks alone passed


def check_limit(value, name: str) -> float:
    """``value`` as seconds in (0, MAX_LIMIT]; ValueError naming ``name`` otherwise."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number of seconds, got {value!r}") from None
    if not 0 < seconds <= MAX_LIMIT:
        raise ValueError(f"{name} must be > 0 and at most {MAX_LIMIT:g} seconds (one day), "
                         f"got {value!r}")
    return seconds


def _environment(token: str) -> dict:
    env = dict(os.environ)
    env[_RUN_TOKEN] = token
    for name in _THREAD_VARIABLES:
        env[name] = "1"
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the student's folder
    return env


def run_jobs(jobs: list[Job], time_limit: float, import_limit: float = DEFAULT_IMPORT_LIMIT,
             workers: int = 2, on_result=None) -> list[JobResult]:
    """Run ``jobs``, ``workers`` at a time; returns their results in the jobs' order.

    ``on_result(index, result)`` is called as each finishes (for progress lines).
    """
    time_limit = check_limit(time_limit, "time_limit")
    import_limit = check_limit(import_limit, "import_limit")
    results: list[JobResult | None] = [None] * len(jobs)
    token = secrets.token_hex(16)
    try:
        pending = list(range(len(jobs)))
        while pending:
            started, lost = _run_supervisor(jobs, pending, results, time_limit, import_limit,
                                            workers, token, on_result)
            if pending and not started:  # it died before starting any job: not a task's doing
                raise RuntimeError("the grader's supervisor process ended before it started "
                                   "a job")
            # the jobs that ran when it died: one at a time, so that the one that kills
            # its parent again is the only one that pays
            for index in lost:
                _run_supervisor(jobs, [index], results, time_limit, import_limit, 1, token,
                                on_result, blame=True)
            pending = [i for i in pending if results[i] is None]
    finally:
        _kill_leftovers(token)
    return results


def _run_supervisor(jobs, indices, results, time_limit, import_limit, workers, token,
                    on_result, blame: bool = False) -> tuple[int, list[int]]:
    """One supervisor for the jobs ``indices``; fills ``results``. Returns how many jobs it
    started and the jobs that were running when it died (a task killed its parent); with
    ``blame`` (one job at a time) those get a row that says so."""
    request = json.dumps({"jobs": [vars(jobs[i]) for i in indices], "indices": indices,
                          "time_limit": time_limit, "import_limit": import_limit,
                          "workers": int(workers), "token": token})
    process = subprocess.Popen([sys.executable, "-c", _SUPERVISOR], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=_environment(token), start_new_session=True)
    running: dict[int, int] = {}  # job index -> its process id
    started = 0
    try:
        process.stdin.write(request.encode())
        process.stdin.close()
        for line in process.stdout:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            index = record.pop("index")
            if "started" in record:
                running[index] = record["started"]
                started += 1
                continue
            running.pop(index, None)
            results[index] = JobResult(**record)
            if on_result is not None:
                on_result(index, results[index])
        process.wait()
    except BaseException:
        _kill_group(process.pid)
        process.wait()
        raise
    finally:
        process.stdout.close()
        error = process.stderr.read().decode(errors="replace").strip()
        process.stderr.close()
        for pid in running.values():
            _kill_group(pid)
    if running and blame:
        code = process.returncode
        how = f"killed by signal {-code}" if code < 0 else f"ended with exit code {code}"
        for index in running:
            flag = (f"the grader's process was {how} while this task ran alone (the task's "
                    f"code killed its parent?)")
            results[index] = JobResult(False, f"{flag}; the task scores 0", [flag], None, None)
            if on_result is not None:
                on_result(index, results[index])
    elif not running and any(results[i] is None for i in indices) and started == 0:
        last = (error.splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the grader's supervisor process ended early (exit code "
                           f"{process.returncode}): {last}")
    return started, sorted(running)


def _kill_leftovers(token: str) -> None:
    """Kill every process whose environment carries this run's token (Linux's /proc)."""
    needle = f"{_RUN_TOKEN}={token}".encode()
    proc = Path("/proc")
    if not proc.is_dir():
        return
    for _ in range(3):  # a process may start another while we look
        found = False
        for entry in proc.iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environment = (entry / "environ").read_bytes()
            except OSError:
                continue
            if needle in environment.split(b"\0"):
                found = True
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if not found:
            return
        time.sleep(0.05)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ----------------------------------------------------------------------------------------
# The supervisor (runs in its own process)
# ----------------------------------------------------------------------------------------

def _forks() -> bool:
    # macOS system libraries (Accelerate among them) are not fork-safe; Windows has no fork.
    return hasattr(os, "fork") and sys.platform.startswith("linux")


@dataclass
class _Running:
    index: int
    pid: int
    popen: subprocess.Popen | None
    started: float
    output: object  # the temporary file the job's stdout and stderr go to
    loaded_at: float | None = None
    load_seconds: float | None = None
    result: dict | None = None
    buffer: bytes = b""
    secret: str = ""  # the token its result line must carry
    forged: bool = False  # a result line without the token came through its pipe


def _become_subreaper() -> None:
    """Adopt the orphans of this process's descendants (Linux): a process that a job
    detaches (setsid, double fork) is reparented here, where the sweep finds it."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _sweep(keep: set[int]) -> None:
    """Kill and reap this process's children that are not running jobs (what finished jobs
    left behind, adopted as orphans)."""
    for pid in _children():
        if pid not in keep:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _children() -> list[int]:
    """This process's children: the kernel's list where it keeps one, else /proc scanned."""
    me, proc = os.getpid(), Path("/proc")
    try:
        return [int(pid) for pid in (proc / "self" / "task" / str(me) / "children")
                .read_text().split()]
    except OSError:
        pass
    found = []
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 1 and int(fields[1]) == me:
                found.append(int(entry.name))
    return found


def _supervise(raw: bytes) -> None:
    request = json.loads(raw)
    jobs = [Job(**job) for job in request["jobs"]]
    indices = request.get("indices") or list(range(len(jobs)))  # in the caller's list
    _become_subreaper()
    time_limit, import_limit = request["time_limit"], request["import_limit"]
    workers = max(1, request["workers"])
    out = os.fdopen(os.dup(1), "w", buffering=1)
    fork = _forks()
    if fork:
        # what every job needs, imported once and shared by the forks
        import minibert.assignment.bugs  # noqa: F401
        import minibert.assignment.checks  # noqa: F401
        import minibert.assignment.task_check  # noqa: F401
        from minibert.assignment.similarity import warm

        warm()  # minibert's answers read once, not in every job
    pending = list(range(len(jobs)))
    running: dict[int, _Running] = {}  # read end of the job's pipe -> job
    try:
        while pending or running:
            while pending and len(running) < workers:
                index = pending.pop(0)
                read_end, job = _start(index, jobs[index], out, fork)
                running[read_end] = job
                out.write(json.dumps({"index": indices[index], "started": job.pid}) + "\n")
            now = time.monotonic()
            deadlines = [_deadline(job, time_limit, import_limit) for job in running.values()]
            timeout = max(0.0, min(deadlines) - now)
            ready, _, _ = select.select(list(running), [], [], timeout)
            for fd in ready:
                job = running[fd]
                chunk = os.read(fd, 65536)
                if chunk:
                    _consume(job, chunk)
                    if job.result is None:
                        continue  # a process the job started may hold the pipe open
                del running[fd]
                os.close(fd)
                _emit(out, job, _finish(job, jobs[job.index]), indices)
                _sweep({j.pid for j in running.values()})
            now = time.monotonic()
            for fd, job in list(running.items()):
                if now >= _deadline(job, time_limit, import_limit):
                    del running[fd]
                    _kill(job)
                    os.close(fd)
                    _emit(out, job, _timeout(job, jobs[job.index], time_limit, import_limit),
                          indices)
                    _sweep({j.pid for j in running.values()})
    finally:
        for job in running.values():
            _kill(job)
        _sweep(set())


def _start(index: int, job: Job, out, fork: bool):
    read_end, write_end = os.pipe()
    output = tempfile.TemporaryFile()
    started = time.monotonic()
    secret = secrets.token_hex(16)
    if fork:
        pid = os.fork()
        if pid == 0:  # the job's process
            try:
                os.close(read_end)
                out.close()
                os.dup2(output.fileno(), 1)
                os.dup2(output.fileno(), 2)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)
                os.setpgid(0, 0)  # its own group: a kill takes what it started too
                # nothing of the supervisor's: other jobs' pipes and output files
                limit = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 4096
                os.closerange(3, write_end)
                os.closerange(write_end + 1, max(write_end + 2, min(limit, 65536)))
                # a job that prints forever fills its output file up to here, then stops
                import resource

                resource.setrlimit(resource.RLIMIT_FSIZE, (_OUTPUT_LIMIT, _OUTPUT_LIMIT))
                _job_main(job, write_end, secret)
            except BaseException:
                traceback.print_exc()
                os._exit(1)
            finally:
                os._exit(0)
        os.close(write_end)
        return read_end, _Running(index, pid, None, started, output, secret=secret)
    popen = subprocess.Popen([sys.executable, "-c", _SPAWNED, json.dumps(vars(job)),
                              str(write_end)], pass_fds=(write_end,), stdin=subprocess.PIPE,
                             stdout=output, stderr=output, start_new_session=True)
    popen.stdin.write(secret.encode() + b"\n")
    popen.stdin.close()
    os.close(write_end)
    return read_end, _Running(index, popen.pid, popen, started, output, secret=secret)


def _spawned_job(job_json: str, fd: int) -> None:
    secret = sys.stdin.readline().strip()
    sys.stdin.close()
    _job_main(Job(**json.loads(job_json)), fd, secret)


def _job_main(job: Job, fd: int, secret: str) -> None:
    """Grade one job in this process; write 'L seconds' after loading, then 'R secret json'."""
    from minibert.assignment.task_check import check_task

    start = time.monotonic()
    folder = Path(job.workspace).resolve()
    if folder.is_dir():
        os.chdir(folder)

    def loaded() -> None:
        os.write(fd, f"L {time.monotonic() - start:.6f}\n".encode())

    result = check_task(folder, job.task, job.hidden_seed, kind=job.kind, on_loaded=loaded)
    line = json.dumps({"passed": result.passed, "message": result.message,
                       "flags": result.flags, "public_passed": result.public_passed})
    os.write(fd, f"R {secret} {line}\n".encode())


def _consume(job: _Running, chunk: bytes) -> None:
    job.buffer += chunk
    *lines, job.buffer = job.buffer.split(b"\n")
    for line in lines:
        if line.startswith(b"L ") and job.loaded_at is None:
            job.loaded_at = time.monotonic()
            job.load_seconds = float(line[2:])
        elif line.startswith(b"R ") and job.result is None:
            secret, _, record = line[2:].partition(b" ")
            if secret.decode(errors="replace") != job.secret:
                job.forged = True
                continue
            job.result = json.loads(record)


def _deadline(job: _Running, time_limit: float, import_limit: float) -> float:
    if job.loaded_at is None:
        return job.started + import_limit
    return job.loaded_at + time_limit


def _reap(job: _Running) -> int:
    if job.popen is not None:
        return job.popen.wait()
    _, status = os.waitpid(job.pid, 0)
    return os.waitstatus_to_exitcode(status)


def _kill(job: _Running) -> None:
    for kill in (lambda: os.killpg(job.pid, signal.SIGKILL), lambda: os.kill(job.pid,
                                                                            signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass
    _reap(job)


def _tail(job: _Running) -> str:
    job.output.seek(0)
    text = job.output.read().decode(errors="replace").strip()
    job.output.close()
    return (text.splitlines() or ["no output"])[-1]


def _finish(job: _Running, spec: Job) -> dict:
    checks = None if job.loaded_at is None else time.monotonic() - job.loaded_at
    if job.result is not None:
        _kill(job)  # the result is in; what the job left running goes with it
        job.output.close()
        return {**job.result, "load_seconds": job.load_seconds, "check_seconds": checks}
    code = _reap(job)
    reason = f"was killed by signal {-code}" if code < 0 else f"ended with exit code {code}"
    phase = "while loading its file" if job.loaded_at is None else "while the checks ran"
    message = " ".join(f"the task's process {reason} {phase}: {_tail(job)}".split())[:300]
    return {"passed": False, "message": message, "flags": [], "load_seconds": job.load_seconds,
            "check_seconds": checks}


def _timeout(job: _Running, spec: Job, time_limit: float, import_limit: float) -> dict:
    job.output.close()
    if job.loaded_at is None:
        message = (f"loading the task's file took longer than {import_limit:g} s (the import "
                   f"limit; a slow import, or a loop at the top level of the file?)")
        return {"passed": False, "message": message, "flags": [], "load_seconds": None,
                "check_seconds": None}
    message = (f"time limit of {time_limit:g} s exceeded while the checks ran (an infinite "
               f"loop?); loading the file took {job.load_seconds:.1f} s, not counted")
    return {"passed": False, "message": message, "flags": [],
            "load_seconds": job.load_seconds, "check_seconds": None}


def _emit(out, job: _Running, result: dict, indices: list[int]) -> None:
    if job.forged:
        flag = ("the task's process wrote a result line of its own into the grader's pipe "
                "(the task scores 0)")
        result = {**result, "passed": False, "message": flag,
                  "flags": [*result.get("flags", []), flag]}
    out.write(json.dumps({"index": indices[job.index], **result}) + "\n")
