"""CI runs what a newcomer runs: ``.ci/run``'s order, read from the script itself.

The first ``make test`` pass must come before any step that installs an extra (``make
site`` installs the docs extra), so that a test needing an install step ``make test``
lacks fails in CI as it fails in a fresh clone; the site is built before the second pass,
whose browser tests read it; and a skipped MPI test is a failure in CI.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def commands() -> list[str]:
    """The script's lines that run something (comments, echo lines and blanks left out)."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines
            if line.strip() and not line.strip().startswith(("#", "echo"))]


def first(pattern: str, lines: list[str]) -> int:
    found = [i for i, line in enumerate(lines) if re.search(pattern, line)]
    assert found, f"no line of .ci/run matches {pattern!r}"
    return found[0]


def test_the_first_test_pass_runs_before_any_extra_is_installed():
    lines = commands()
    one = first(r"OPENBLAS_NUM_THREADS=1 make test\b", lines)
    site = first(r"\bmake site\b", lines)
    two = first(r"OPENBLAS_NUM_THREADS=2 make test\b", lines)
    assert one < site < two
    installs = [i for i, line in enumerate(lines)
                if re.search(r"pip install|make (site|notebooks|demo)\b", line)]
    assert all(i > one for i in installs), [lines[i] for i in installs]


def test_ci_turns_a_skipped_mpi_test_into_a_failure():
    lines = commands()
    require = first(r"MINIBERT_REQUIRE_MPI=1", lines)
    assert require < first(r"make test\b", lines)
    mpi_tests = ROOT / "tests" / "bridges" / "test_mpi.py"
    assert "MINIBERT_REQUIRE_MPI" in mpi_tests.read_text(encoding="utf-8")


def test_make_test_installs_the_mpi_extra():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert '-e ".[mpi]"' in makefile
