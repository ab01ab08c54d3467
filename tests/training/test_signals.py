"""Signals and dead workers, through the real entry point (``python -m minibert pretrain``).

SIGINT, SIGTERM or SIGHUP, to the parent alone, to the whole process group (as Ctrl-C,
``timeout``, systemd and SLURM's ``scancel`` send them) or to one worker alone: the step
under way finishes, a checkpoint of it is written, one line names the signal, the step and
the command that resumes, the exit status is 128 + the signal, and the resumed run ends
with the weights of a run never interrupted, bit for bit. kill -9 of a worker: one line
naming the worker and how it ended, the last checkpoint intact, exit status 3.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from small_models import STARTED, sha256, start_pretrain

RUN = ["--steps", "150", "--eval-every", "150", "--batch-size", "8", "--max-seq-length", "32",
       "--vocab-size", "400", "--num-documents", "60"]


def pretrain(out, workers: int, *extra):
    return subprocess.run([sys.executable, "-m", "minibert", "pretrain", "--out", str(out),
                           *RUN, "--workers", str(workers), *extra], capture_output=True,
                          text=True, timeout=300)


def start(out, workers: int, *extra, step: int = 10):
    """A run in a session of its own (its own process group), once it printed ``step``;
    tests/conftest.py ends its group after the test, whatever happened."""
    process, seen = start_pretrain(out, *RUN, "--workers", workers, *extra, step=step,
                                   new_session=True)
    STARTED.append(process)
    return process, seen


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        return [int(child) for child in handle.read().split()]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The weights of runs never interrupted, by number of workers (computed once each)."""
    cache = {}

    def get(workers: int) -> str:
        if workers not in cache:
            out = tmp_path_factory.mktemp(f"reference{workers}") / "run"
            result = pretrain(out, workers)
            assert result.returncode == 0, result.stderr
            cache[workers] = sha256(out)
        return cache[workers]
    return get


def finish(process, seen, signum: int, source: str = ""):
    """The run's last line: one line, no traceback, exit 128 + signum; the resume command."""
    _, rest = process.communicate(timeout=120)
    stderr = "".join(seen) + rest
    assert process.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    how = "interrupted" if signum == signal.SIGINT else \
        f"stopped by {signal.Signals(signum).name}"
    assert last.startswith(f"minibert pretrain: {how}{source}; the checkpoint holds step "), last
    return shlex.split(last.split("resume with: ", 1)[1]), int(last.split("holds step ")[1]
                                                                .split(";")[0])


def resume_and_compare(command, out, expected: str, step: int) -> None:
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"at step {step}" in resumed.stderr
    assert sha256(out) == expected


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/task"),
                                reason="finding the workers needs Linux's /proc")


def test_sigterm_to_the_process_group_with_two_workers_saves_and_resumes_exactly(
        tmp_path, uninterrupted):
    """As `timeout` or `scancel` stop a job: every process gets SIGTERM."""
    out = tmp_path / "run"
    process, seen = start(out, 2)
    os.killpg(process.pid, signal.SIGTERM)
    command, step = finish(process, seen, signal.SIGTERM)
    assert 10 <= step < 150
    resume_and_compare(command, out, uninterrupted(2), step)


@pytest.mark.slow
@pytest.mark.parametrize("name, workers, target", [
    ("SIGINT", 1, "group"), ("SIGHUP", 2, "group"), ("SIGINT", 3, "group"),
    ("SIGTERM", 2, "parent"), ("SIGTERM", 1, "parent")])
def test_a_signal_to_the_group_or_the_parent_saves_and_resumes_exactly(
        tmp_path, uninterrupted, name, workers, target):
    out = tmp_path / "run"
    process, seen = start(out, workers)
    signum = getattr(signal, name)
    (os.killpg if target == "group" else os.kill)(process.pid, signum)
    command, step = finish(process, seen, signum)
    resume_and_compare(command, out, uninterrupted(workers), step)


@pytest.mark.slow
@needs_proc
def test_sigterm_to_one_worker_alone_stops_the_run_after_its_step(tmp_path, uninterrupted):
    out = tmp_path / "run"
    process, seen = start(out, 2)
    workers = children(process.pid)
    assert len(workers) == 2
    os.kill(workers[1], signal.SIGTERM)
    command, step = finish(process, seen, signal.SIGTERM, " (received by worker 1)")
    resume_and_compare(command, out, uninterrupted(2), step)


@pytest.mark.slow
def test_a_second_signal_does_not_damage_the_checkpoint(tmp_path, uninterrupted):
    """Two SIGTERMs in quick succession: the second ends the run at once unless the save
    of the first is under way (which it finishes); either way a complete checkpoint."""
    out = tmp_path / "run"
    process, seen = start(out, 2)
    os.killpg(process.pid, signal.SIGTERM)
    time.sleep(0.02)
    os.killpg(process.pid, signal.SIGTERM)
    command, step = finish(process, seen, signal.SIGTERM)
    assert not list(out.glob(".checkpoint.*"))  # no staging folder left behind
    resume_and_compare(command, out, uninterrupted(2), step)


@pytest.mark.slow
@needs_proc
def test_kill_9_of_a_worker_is_one_line_and_the_checkpoint_resumes(tmp_path, uninterrupted):
    out = tmp_path / "run"
    process, seen = start(out, 2, "--save-every", "5", step=20)
    workers = children(process.pid)
    os.kill(workers[1], signal.SIGKILL)
    _, rest = process.communicate(timeout=120)
    stderr = "".join(seen) + rest
    assert process.returncode == 3, stderr
    assert "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("minibert pretrain: worker 1 killed by SIGKILL (killed: out of "
                           "memory?); the checkpoint holds step "), last
    assert _gone(workers[0])  # the other worker was stopped too
    step = int(last.split("holds step ")[1].split(";")[0])
    assert step >= 20 and step % 5 == 0
    resume_and_compare(shlex.split(last.split("resume with: ", 1)[1]), out,
                       uninterrupted(2), step)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize("transport", ["workers", "mpi"])
def test_random_interruptions_leave_no_process_and_resume_exactly(transport):
    """A few cases of benchmarks/fault_injection.py (the benchmark runs 60): each run ends
    within 30 s, prints no traceback, leaves a whole checkpoint that resumes to the
    uninterrupted run's weights, bit for bit, and a run it stopped printed minibert's line."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import fault_injection

    from minibert.bridges import mpi

    mpiexec = shutil.which("mpiexec", path=os.pathsep.join(
        [str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if transport == "mpi" and (mpi.mpi_available() or not mpiexec):
        if os.environ.get("MINIBERT_REQUIRE_MPI") == "1":
            pytest.fail(f"MINIBERT_REQUIRE_MPI=1 but MPI cannot run: "
                        f"{mpi.mpi_available() or 'no mpiexec'}")
        pytest.skip(f"MPI: {mpi.mpi_available() or 'no mpiexec on PATH'}")
    records = fault_injection.run(4, seed=7, transports=[transport], mpiexec=mpiexec)
    assert len(records) == 4
    for record in records:
        assert not record["hang"], record
        assert not record["traceback"], record
        assert not record["lost"], record
        assert record["equal"], record
        assert record["named"] or record["status"] == 0, record  # a stop says why, in one line
