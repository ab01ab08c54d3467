"""Fixtures shared by the whole suite, and the ``jobs`` mark of ``make test-fast``."""

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import small_models

# The test files that run whole jobs: training runs and the command line in subprocesses,
# worker processes, MPI and signals, the assignment's grader, a browser, the notebooks, the
# explorer's pages, the slides and the benchmarks; and, in other files, the tests that
# pretrain. They get the ``jobs`` mark; ``make test-fast`` (-m "not slow and not parity
# and not jobs") leaves them out, ``make test`` and CI run them.
TESTS = Path(__file__).resolve().parent
JOB_FILES = frozenset({
    "assignment/test_assignment.py", "assignment/test_distribution.py",
    "assignment/test_grading.py", "assignment/test_integrity.py", "assignment/test_mistakes.py",
    "bridges/test_mpi.py",
    "cli/test_commands.py", "cli/test_help.py", "cli/test_messages.py", "cli/test_outputs.py",
    "cli/test_refusals.py", "cli/test_runs.py",
    "core/test_reference.py",
    "family/test_distill.py",
    "io/test_fuzz.py",
    "notebooks/test_notebook_figures.py", "notebooks/test_notebooks_layers.py",
    "notebooks/test_notebooks_pipeline.py",
    "project/test_benchmarks.py", "project/test_site.py",
    "training/test_finetune.py", "training/test_parallel.py", "training/test_signals.py",
    "training/test_trainer.py",
    "viz/test_explore.py", "viz/test_explore_browser.py", "viz/test_slides.py",
})
JOB_TESTS = frozenset({
    "test_cli_pretrain_and_fill_mask_with_albert",
    "test_pretrain_electra_writes_both_folders_and_resumes_bit_identically",
    "test_pretraining_with_albert_runs_resumes_and_loads",
})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _under_tests(item.path) in JOB_FILES or item.originalname in JOB_TESTS:
            item.add_marker(pytest.mark.jobs)


def _under_tests(path) -> str:
    """A test file's path below tests/, with forward slashes ("cli/test_help.py")."""
    return path.relative_to(TESTS).as_posix() if TESTS in path.parents else path.name


@pytest.fixture
def attention_batch():
    """Two examples of TOKENS, the second with four more padded positions."""
    rng = np.random.default_rng(1234)
    mask = np.ones((2, len(small_models.TOKENS)))
    mask[:, small_models.N_REAL:] = 0
    mask[1, small_models.N_REAL - 4:] = 0
    attentions = small_models.softmax_attentions(rng, n_layers=3, batch=2, n_heads=4, mask=mask)
    return attentions, mask


# ------------------------------------------------------------------------------------------
# No process outlives its test. pytest becomes a "child subreaper" (Linux), so a process
# whose parent died (the ranks of a killed mpiexec, the workers of a killed run) becomes
# pytest's child instead of vanishing from its tree; after each test, every live process
# below pytest is a leftover: it is killed, and the test errs, naming it. At the end of
# the session, the suite fails if any test left one behind.
# ------------------------------------------------------------------------------------------

_LEFTOVERS: list[str] = []


def _become_subreaper() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _children(pid: int) -> list[int]:
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
        except OSError:
            pass
    return found


def _live_descendants(keep: frozenset = frozenset()) -> dict[int, str]:
    """pid -> command line of every process below this one that is not a zombie, leaving
    out ``keep`` and everything below a process of ``keep`` (a browser's new tabs)."""
    live, queue = {}, [pid for pid in _children(os.getpid()) if pid not in keep]
    while queue:
        pid = queue.pop()
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if state not in ("Z", "X"):
            live[pid] = command[:200]
        queue += [child for child in _children(pid) if child not in keep]
    return live


def _leftovers(grace: float) -> dict[int, str]:
    """The live descendants still there after ``grace`` seconds (some are just ending)."""
    deadline = time.monotonic() + grace
    live = _live_descendants()
    while live and time.monotonic() < deadline:
        time.sleep(0.1)
        live = _live_descendants()
    return live


@pytest.fixture(scope="session", autouse=True)
def no_process_outlives_the_suite():
    """Fails the suite when any test left a process running (see ``no_process_outlives``)."""
    if not os.path.isdir(f"/proc/{os.getpid()}/task"):
        yield
        return
    _become_subreaper()
    yield
    left = _leftovers(5.0)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _LEFTOVERS.extend(f"after the session: pid {pid} {command}" for pid, command in left.items())
    assert not _LEFTOVERS, "processes outlived their tests: " + "; ".join(_LEFTOVERS)


@pytest.fixture(autouse=True)
def no_process_outlives(request, no_process_outlives_the_suite):
    """After each test: no process it started may still run (checked in /proc).

    Processes that were running when the test began (a browser of a module's fixture)
    are the fixture's: they are checked when the session ends.
    """
    if not os.path.isdir(f"/proc/{os.getpid()}/task"):
        yield
        return
    before = frozenset(_live_descendants()) if _children(os.getpid()) else frozenset()
    yield
    if not _children(os.getpid()):
        return
    deadline = time.monotonic() + 10.0
    left = _live_descendants(before)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _live_descendants(before)
    if not left:
        return
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _LEFTOVERS.extend(f"{request.node.nodeid}: pid {pid} {command}"
                      for pid, command in left.items())
    pytest.fail(f"{len(left)} process(es) outlived the test (killed now): "
                + "; ".join(f"pid {pid} {command}" for pid, command in left.items()),
                pytrace=False)


@pytest.fixture(autouse=True)
def end_started_processes(no_process_outlives):
    """The ``finally`` of every test: each process it registered in ``small_models.STARTED``
    is ended (its whole group where it leads one) before ``no_process_outlives`` looks."""
    try:
        yield
    finally:
        small_models.end_started()
