"""docs/lecture_50min.md and docs/lecture_guide.md name only figures and notebook cells that
exist, and every cited cell carries its label in text a reader can search for."""

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

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
    section = PLAN.split("\n## Minute by minute", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
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


def _timing():
    """benchmarks/lecture_timing.py (its rules) and the figures it measured."""
    path = ROOT / "benchmarks" / "lecture_timing.py"
    spec = importlib.util.spec_from_file_location("lecture_timing", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figures = json.loads((ROOT / "docs" / "results" / "lecture_timing.json")
                         .read_text(encoding="utf-8"))
    return module, figures


def test_the_timing_ran_every_command_the_plan_runs_in_the_room():
    timing, figures = _timing()
    rows = timing.minute_rows(PLAN)
    assert [s["minutes"] for s in figures["segments"]] == [r["minutes"] for r in rows]
    assert [s["slides"] for s in figures["segments"]] == [r["slides"] for r in rows]
    measured = figures["commands"]
    commands = [c for r in rows for c in timing.trip_commands(r["trip"], PLAN)]
    assert any(" fill-mask " in c for c in commands) and any(" explore " in c for c in commands)
    for command in commands:
        if " fill-mask " in command:  # the room's sentence: a measured one stands for it
            stem = command.split(" '", 1)[0].split(' "', 1)[0]
            assert any(c.startswith(stem) for c in measured), command
        else:
            assert command in measured, command
    for command, seconds in measured.items():
        assert seconds["runs"] >= 3 and 0 < seconds["median"] <= seconds["slowest"], command
    # every page a segment shows has its words counted
    assert {n for r in rows for n in r["slides"]} <= {int(n) for n in figures["page_words"]}
    assert all(words > 0 for words in figures["page_words"].values())


def test_the_speaking_rate_is_stated_with_its_source():
    timing, figures = _timing()
    assert figures["rate_words_per_minute"] == timing.RATE == 125
    assert "Lucas" in figures["rate_source"] and "p. 300" in figures["rate_source"]
    assert "125 words a minute" in PLAN and "Lucas (*The Art of Public Speaking*" in PLAN


def _estimates(rate: int) -> list[tuple[dict, dict]]:
    """(segment, estimate) with the plan's words now and the measured seconds."""
    timing, figures = _timing()
    pages = {int(n): words for n, words in figures["page_words"].items()}
    return [(row, timing.segment_estimate(row, pages, segment["estimate"]["live_seconds"],
                                          rate))
            for row, segment in zip(timing.minute_rows(PLAN), figures["segments"],
                                    strict=True)]


def test_each_segment_allows_one_and_a_half_times_its_timed_estimate():
    """Spoken words (notes and pages) at 125 a minute, the commands' measured seconds and
    the switching allowance: each segment allows 1.5 times that, and the whole fits 40
    minutes, then 5 for questions."""
    timing, _ = _timing()
    estimates = _estimates(timing.RATE)
    for row, estimate in estimates:
        assert timing.MARGIN * estimate["minutes"] <= row["length"], (row["minutes"], estimate)
    assert sum(row["length"] for row, _ in estimates) == 40
    assert timing.MARGIN * sum(e["minutes"] for _, e in estimates) + 5 <= 45


def test_on_a_slow_day_the_named_cuts_cover_the_overrun():
    """At 100 words a minute some segments overrun their 1.5-times margin; the cuts the plan
    names save at least that, and the segment never cut still fits on its own."""
    timing, _ = _timing()
    slow = _estimates(timing.SLOW_RATE)
    overrun = sum(max(0.0, timing.MARGIN * e["minutes"] - row["length"]) for row, e in slow)
    named = timing.cuts(PLAN)
    assert set(named) == {"First cut", "Second cut", "Third cut"}, named
    assert overrun <= sum(named.values()), (overrun, named)
    never = next(e for row, e in slow if row["minutes"] == "15–21")
    assert timing.MARGIN * never["minutes"] <= 6


def test_the_plan_quotes_the_timing_it_measured():
    timing, figures = _timing()
    assert timing.markdown_table(figures) in PLAN
    assert f"{figures['total_minutes']:.1f} minutes" in PLAN
    assert "not idle" in PLAN and "load average" in PLAN


@pytest.mark.slow
def test_the_timing_script_runs_what_the_plan_runs(tmp_path):
    """benchmarks/lecture_timing.py in its smallest mode (one run of each command)."""
    out = tmp_path / "timing.json"
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lecture_timing.py"),
                             "--repeats", "1", "--out", str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    figures = json.loads(out.read_text(encoding="utf-8"))
    timing, committed = _timing()
    def others(commands):
        return {c for c in commands if " fill-mask " not in c}

    assert others(figures["commands"]) == others(committed["commands"])
    assert any(" fill-mask " in c for c in figures["commands"])
    assert all(c["runs"] == 1 for c in figures["commands"].values())
    assert [s["minutes"] for s in figures["segments"]] == [
        r["minutes"] for r in timing.minute_rows(PLAN)]
    assert timing.markdown_table(figures).count("\n") == len(figures["segments"]) + 1


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
