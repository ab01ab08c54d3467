"""docs/lecture_50min.md names only cells and figures that exist."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAN = (ROOT / "docs" / "lecture_50min.md").read_text(encoding="utf-8")


def test_every_figure_named_in_the_plan_exists():
    figures = set(re.findall(r"docs/images/[\w.-]+\.png", PLAN))
    assert len(figures) >= 8
    assert [f for f in figures if not (ROOT / f).is_file()] == []


def test_every_notebook_cell_named_in_the_plan_exists():
    references = re.findall(r"`(notebooks/[\w.-]+\.ipynb)` cells? ((?:`[\w-]+`(?:, )?)+)", PLAN)
    assert len(references) >= 6
    for notebook, cells in references:
        ids = {cell.get("id") for cell in json.loads((ROOT / notebook).read_text())["cells"]}
        named = re.findall(r"`([\w-]+)`", cells)
        assert set(named) <= ids, (notebook, set(named) - ids)


def test_the_glance_box_cites_the_paper_for_each_number():
    box = [line for line in PLAN.splitlines() if line.startswith("> |") and "---" not in line]
    rows = box[1:]  # after the header
    assert len(rows) >= 8 and all(re.search(r"§3|Appendix", row) for row in rows)
    for number in ["L = 12", "H = 768", "110M", "L = 24", "340M", "3.3B", "1,000,000",
                   "256 sequences", "90%", "1e-4"]:
        assert number in PLAN
