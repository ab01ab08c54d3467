"""docs/lecture_50min.md and docs/lecture_guide.md name only figures and notebook cells that
exist, and every cited cell carries its label in text a reader can search for."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAN = (ROOT / "docs" / "lecture_50min.md").read_text(encoding="utf-8")
GUIDE = (ROOT / "docs" / "lecture_guide.md").read_text(encoding="utf-8")


def test_every_figure_named_in_the_plan_and_guide_exists():
    figures = set(re.findall(r"docs/images/[\w.-]+\.png", PLAN + GUIDE))
    assert len(figures) >= 2
    assert [f for f in figures if not (ROOT / f).is_file()] == []


def _citations(text: str) -> list[tuple[str, list[str]]]:
    """(notebook path, labels) for each "`notebooks/X.ipynb` cell(s) `[label]`, ..." phrase."""
    found = re.findall(r"`(notebooks/[\w.-]+\.ipynb)` cells? ((?:`\[[\w-]+\]`(?:, )?)+)", text)
    return [(notebook, re.findall(r"`\[([\w-]+)\]`", labels)) for notebook, labels in found]


def _visible_text(notebook: str) -> str:
    """What a reader sees and the notebook's search finds: every cell's source."""
    cells = json.loads((ROOT / notebook).read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells)


def test_every_cell_the_plan_and_guide_cite_carries_its_visible_label():
    citations = _citations(PLAN) + _citations(GUIDE)
    assert len(citations) >= 8
    for notebook, labels in citations:
        text = _visible_text(notebook)
        missing = [label for label in labels if f"[{label}]" not in text]
        assert missing == [], (notebook, missing)


def test_a_label_names_one_cell_of_its_own_notebook():
    for notebook, labels in _citations(PLAN) + _citations(GUIDE):
        number = Path(notebook).name[:2]
        cells = json.loads((ROOT / notebook).read_text(encoding="utf-8"))["cells"]
        for label in labels:
            assert label.startswith(f"{number}-"), (notebook, label)
            holding = [c for c in cells if f"[{label}]" in "".join(c["source"])]
            # The label is written once, on the first line of the cell it names.
            starts = [c for c in holding if "".join(c["source"]).lstrip("# *").startswith(
                f"[{label}]")]
            assert len(starts) == 1, (notebook, label, len(starts))


def test_the_glance_box_cites_the_paper_for_each_number():
    box = [line for line in PLAN.splitlines() if line.startswith("> |") and "---" not in line]
    rows = box[1:]  # after the header
    assert len(rows) >= 8 and all(re.search(r"§3|Appendix", row) for row in rows)
    for number in ["L = 12", "H = 768", "110M", "L = 24", "340M", "3.3B", "1,000,000",
                   "256 sequences", "90%", "1e-4", "32,768", "335,141,888", "336,226,108"]:
        assert number in PLAN


def test_the_plan_covers_fine_tuning_and_the_published_results():
    assert "fine-tun" in PLAN.lower() and "GLUE" in PLAN and "SQuAD" in PLAN
    assert "second lecture" in PLAN.lower()
