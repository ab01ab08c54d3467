"""docs/lecture_50min.md and docs/lecture_guide.md name only figures and notebook cells that
exist, and every cited cell carries its label in text a reader can search for."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


def _minute_rows() -> list[list[str]]:
    """The cells of each row of the plan's minute-by-minute table."""
    rows = []
    for line in PLAN.splitlines():
        if re.match(r"\|\s*\d+–\d+\s*\|", line):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def test_the_segments_follow_each_other_and_fit_in_45_minutes():
    rows = _minute_rows()
    spans = [tuple(int(n) for n in row[0].split("–")) for row in rows]
    assert spans[0][0] == 0
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start == end, spans  # no gap, no overlap
    assert all(start < end for start, end in spans)
    # 40 minutes of content, then 5 for questions: the whole plan fits a 45-minute slot
    assert sum(end - start for start, end in spans) <= 40
    assert spans[-1][1] <= 40 and "The last 5 minutes, 40–45, are for questions" in PLAN


def test_each_segment_allows_one_and_a_half_times_its_estimate():
    """The plan's own estimate, slide by slide: the "say" notes at 130 words a minute, half a
    minute per page, a minute per trip out of the deck; each segment allows 1.5 times it."""
    for minutes, pages, trip, say in _minute_rows():
        start, end = (int(n) for n in minutes.split("–"))
        first, _, last = re.match(r"slides? (\d+)(–(\d+))?", pages).groups()
        count = int(last or first) - int(first) + 1
        estimate = len(say.split()) / 130 + 0.5 * count + (1 if trip != "—" else 0)
        assert 1.5 * estimate <= end - start, (minutes, round(estimate, 2))


def test_the_cuts_are_named_and_the_spare_page_has_no_minutes():
    from minibert.viz.slides import SLIDES

    cuts = PLAN.split("## If time runs short: the cuts, named", 1)[1].split("\n## ", 1)[0]
    assert "Already cut" in cuts and "First cut" in cuts and "Never cut 15–21" in cuts
    spare = [n for n, slide in enumerate(SLIDES, 1) if not slide.minutes and n > 1]
    assert spare and all(f"slide {n}" in cuts for n in spare)


def test_the_lecture_leaves_the_deck_at_most_four_times():
    trips = [row for row in _minute_rows() if row[2] != "—"]
    assert 1 <= len(trips) <= 4
    assert all(re.match(r"\*\*trip \d, \w+\*\*", row[2]) for row in trips), trips


def test_the_handout_takes_fine_tuning_results_and_homework():
    from minibert.viz.slides import HANDOUT, SLIDES

    handout = " ".join(slide.title for slide in HANDOUT).lower()
    assert "fine-tuning" in handout and "published results" in handout and "homework" in handout
    assert not {slide.title for slide in HANDOUT} & {slide.title for slide in SLIDES}
    assert "--handout handout.pdf" in PLAN


def test_the_checklist_prepares_the_room():
    checklist = PLAN.split("## Preparation checklist", 1)[1]
    for needed in ['pip install -e ".[dev]"', "Jupyter", "zoom", "explore.html",
                   "works", "fails", "What to say", "Likely questions"]:
        assert needed in checklist, needed
    answers = checklist.split("### Likely questions", 1)[1]
    assert answers.count("\n- *") >= 6  # each question in italics, its answer after it


def _fill_mask_table() -> list[tuple[str, str, str]]:
    """(sentence, stated first answer, works/fails) from the checklist's table."""
    found = re.findall(r'^\| "([^"]+)" \| (\S+) \| (works|fails) \|$', PLAN, re.MULTILINE)
    return [(sentence, answer, verdict) for sentence, answer, verdict in found]


def test_the_fill_mask_sentences_give_the_stated_answers_with_tiny_toy():
    import minibert as mb
    from minibert.fill_mask import fill_mask

    table = _fill_mask_table()
    assert sum(v == "works" for *_, v in table) >= 3 and sum(v == "fails" for *_, v in table) >= 3
    model, tokenizer = mb.load_reference("tiny-toy")
    for sentence, answer, verdict in table:
        best = fill_mask(model, tokenizer, sentence, top_k=1)[0]
        assert best["token_str"] == answer, (sentence, best)
        if verdict == "works":
            assert best["score"] > 0.9, (sentence, best)


def test_one_plateau_step_read_from_the_reference_history_everywhere():
    from minibert.reference import reference_path
    from minibert.viz.lecture_set import nsp_plateau

    history = json.loads((reference_path("tiny-toy") / "history.json").read_text())
    floor, step = nsp_plateau(history)
    row = next(row for row in _minute_rows() if "slide 14" in row[1])
    assert f"until step {step:,}" in row[3] and f"{floor:.2f}" in PLAN
    assert "about 2,000" not in PLAN and "1,800" not in PLAN
    cells = json.loads((ROOT / "notebooks" / "07_pretraining.ipynb").read_text())["cells"]
    printed = "".join("".join(output.get("text", "")) for cell in cells
                      if cell["cell_type"] == "code" for output in cell["outputs"])
    assert f"leaves the plateau at step {step:,}" in printed
    prose = "".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    assert "1,800" not in prose


def test_the_minus_100_row_is_v_minus_100_in_the_plan():
    assert "last row" not in PLAN and "last row" not in GUIDE
    vocab = json.loads((ROOT / "minibert" / "reference_checkpoints" / "tiny-toy" /
                        "config.json").read_text())["vocab_size"]
    assert f"row V − 100 (row {vocab - 100:,} of tiny-toy's {vocab:,})" in PLAN


def test_notebook_03_counts_heads_from_0_in_its_prose():
    cells = json.loads((ROOT / "notebooks" / "03_attention.ipynb").read_text())["cells"]
    prose = "".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    assert "from 1" not in prose
