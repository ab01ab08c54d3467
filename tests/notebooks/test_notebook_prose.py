"""The notebooks' prose teaches the material, not the project's diary.

No Markdown cell of a numbered notebook states a date, a timing of the machine that ran
something, or the project's history (what an earlier version did, what changed since): those
belong in docs/ (docs/results.md, docs/parallel.md), where the command and the machine go
with every figure. A code cell may print a time it measured live; the prose does not quote
one. Citations such as "(Devlin et al., 2019)" are not dates.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(path.stem for path in NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|"
         r"December)")
FORBIDDEN = {
    "a date": re.compile(rf"\b(?:19|20)\d\d-\d\d-\d\d\b|\b{MONTH} (?:\d{{1,2}}, )?(?:19|20)\d\d\b"
                         rf"|\b\d{{1,2}} {MONTH} (?:19|20)\d\d\b"),
    "a machine timing": re.compile(
        r"\b\d+(?:[.,]\d+)*\s?(?:ms|s|sec|seconds?|min|minutes?|hours?)\b(?!\s*[=≤<>])"
        r"|\b(?:one|two|three|four|five|ten|a few) (?:seconds?|minutes?|hours?)\b"
        r"|\ba (?:minute|hour)\b"
        r"|\b\d+-core\b|\blaptop\b|\bthis machine\b|\bidle machine\b|tokens/s\b|\bsteps?/s\b",
        re.IGNORECASE),
    "the project's history": re.compile(
        r"\b(?:previously|used to|no longer|an earlier version|was changed|were changed"
        r"|shipped until|before the workers|we (?:changed|switched|rewrote)"
        r"|now (?:take|takes|runs|uses))\b", re.IGNORECASE),
}


def markdown_cells(name: str) -> list[tuple[int, str]]:
    cells = json.loads((NOTEBOOK_DIR / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
    return [(index, "".join(cell["source"])) for index, cell in enumerate(cells)
            if cell["cell_type"] == "markdown"]


def without_math_and_code(text: str) -> str:
    """Prose only: formulas ($...$) and code spans (`...`) can hold "2 s" or "h" legitimately."""
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.DOTALL)
    return re.sub(r"`[^`]*`", " ", text)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_markdown_states_no_date_timing_or_history(name):
    found = []
    for index, text in markdown_cells(name):
        prose = without_math_and_code(text)
        for what, pattern in FORBIDDEN.items():
            for match in pattern.finditer(prose):
                start = max(0, match.start() - 40)
                found.append(f"cell {index}: {what}: ...{prose[start:match.end() + 40]!r}")
    assert not found, f"{name}:\n" + "\n".join(found)


@pytest.mark.parametrize("text, what", [
    ("trained on 2026-11-24 on the server", "a date"),
    ("measured in November 2026", "a date"),
    ("well under a minute on an idle 2-core laptop", "a machine timing"),
    ("2 workers took 58.6 ms a step", "a machine timing"),
    ("Run time: about two minutes", "a machine timing"),
    ("Before the workers shared memory, the gradient went round a ring", "the project's history"),
    ("8 workers now take 31.2 ms", "the project's history"),
])
def test_the_patterns_catch_what_they_name(text, what):
    assert FORBIDDEN[what].search(without_math_and_code(text))


@pytest.mark.parametrize("text", [
    "BERT (Devlin et al., 2019) and Vaswani et al. (2017, section 3.2.1)",
    "divided by 2h = 2e-5",
    "2. s ≤ e, and at most `max_answer_length` tokens",
    "trained on 16 Cloud TPUs (64 chips) for 4 days (Devlin et al., 2019)",
    "a second barrier carries each chunk's sum of squares",
])
def test_the_patterns_spare_citations_and_formulas(text):
    prose = without_math_and_code(text)
    assert not any(pattern.search(prose) for pattern in FORBIDDEN.values()), text
