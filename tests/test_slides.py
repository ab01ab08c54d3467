"""The lecture deck: its pages follow the plan, every page renders at 1280 x 720, text >= 20 pt.

The slow test builds the deck once from the reference checkpoint and checks it three ways:
the figures (size, font sizes), the PDF (page count; with poppler installed, every page
rendered by pdftoppm at 1280 x 720 and each page's title found by pdftotext).
"""

import re
import shutil
import struct
import subprocess
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import minibert as mb  # noqa: E402
from minibert.reference import reference_metrics  # noqa: E402
from minibert.viz.slides import (  # noqa: E402
    HANDOUT,
    MIN_FONT_SIZE,
    SLIDE_SIZE,
    SLIDES,
    build_handout,
    build_slides,
    gradcheck_rows,
    save_slides,
    write_slides,
)

ROOT = Path(__file__).resolve().parents[1]
PLAN = (ROOT / "docs" / "lecture_50min.md").read_text(encoding="utf-8")


def _plan_rows():
    """(minutes, first page, last page) for every row of the plan's minute-by-minute table."""
    rows = []
    for line in PLAN.splitlines():
        match = re.match(r"\|\s*(\d+–\d+)\s*\|\s*slides? (\d+)(?:–(\d+))?", line)
        if match:
            first = int(match.group(2))
            rows.append((match.group(1), first, int(match.group(3) or first)))
    return rows


def test_the_plan_names_the_pages_of_each_segment():
    rows = _plan_rows()
    assert len(rows) >= 10
    for minutes, first, last in rows:
        pages = [SLIDES[n - 1] for n in range(first, last + 1)]
        assert pages and all(slide.minutes == minutes for slide in pages), (minutes, first)
    named = {n for _, first, last in rows for n in range(first, last + 1)}
    segments = {slide.minutes for slide in SLIDES if slide.minutes}
    assert segments == {minutes for minutes, _, _ in rows}
    assert named >= {n for n, slide in enumerate(SLIDES, 1) if slide.minutes}


def test_titles_are_distinct_and_the_deck_covers_the_issue_list():
    titles = [slide.title for slide in SLIDES + HANDOUT]
    assert len(set(titles)) == len(titles)
    joined = " ".join(titles).lower()
    for topic in ["at a glance", "fine-tune", "input", "encoder block", "gradient check",
                  "attention backward", "pretraining objective", "heads with jobs", "nsp",
                  "where it looks", "published results", "homework"]:
        assert topic in joined, topic
    assert all(not slide.minutes for slide in HANDOUT)


def test_bad_paths_are_refused_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="must end in .pdf"):
        write_slides(tmp_path / "deck.png")
    existing = tmp_path / "deck.pdf"
    existing.write_bytes(b"keep me")
    with pytest.raises(ValueError, match="overwrite"):
        write_slides(existing)
    assert existing.read_bytes() == b"keep me"
    with pytest.raises(ValueError, match="name must be one of"):
        write_slides(tmp_path / "other.pdf", model="no-such-model")


def test_the_slides_command_refuses_bad_output_in_one_line(tmp_path, capsys):
    from minibert.cli import main

    assert main(["slides", "-o", str(tmp_path / "deck.png")]) == 2
    existing = tmp_path / "deck.pdf"
    existing.write_bytes(b"keep me")
    assert main(["slides", "-o", str(existing)]) == 2
    assert main(["slides", "-o", str(tmp_path / "new.pdf"), "--model", "no-such"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and "must end in .pdf" in errors[0] and "--overwrite" in errors[1]
    assert existing.read_bytes() == b"keep me" and not (tmp_path / "new.pdf").exists()


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    return struct.unpack(">II", header[16:24])


@pytest.mark.slow
def test_the_deck_from_the_reference_checkpoint(tmp_path):
    pages = build_slides("tiny-toy")
    assert len(pages) == len(SLIDES)
    for number, fig in enumerate(pages, 1):
        assert tuple(fig.get_size_inches()) == SLIDE_SIZE, number
        texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
        small = {t.get_text() for t in texts if t.get_fontsize() < MIN_FONT_SIZE}
        assert not small, (number, small)
    # the title page states the model it shows: its own depth, width, heads and steps
    config = mb.load_reference("tiny-toy")[0].config
    steps = reference_metrics("tiny-toy")["steps"]
    title_text = " ".join(t.get_text() for t in pages[0].findobj(Text))
    assert (f"({config.num_hidden_layers} layers, H = {config.hidden_size}, "
            f"{config.num_attention_heads} heads, trained {steps:,} steps)") in title_text
    handout = build_handout("tiny-toy")
    assert len(handout) == len(HANDOUT)
    assert all(tuple(fig.get_size_inches()) == SLIDE_SIZE for fig in handout)
    pdf = save_slides(pages, tmp_path / "lecture.pdf")
    assert len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf.read_bytes())) == len(SLIDES)
    if shutil.which("pdftoppm") is None or shutil.which("pdftotext") is None:
        pytest.skip("poppler (pdftoppm, pdftotext) is not installed: pages not rendered")
    subprocess.run(["pdftoppm", "-r", "100", "-png", str(pdf), str(tmp_path / "page")],
                   check=True, capture_output=True)
    rendered = sorted(tmp_path.glob("page-*.png"))
    assert len(rendered) == len(SLIDES)
    assert {_png_size(path) for path in rendered} == {(1280, 720)}
    for number, slide in enumerate(SLIDES, 1):
        text = subprocess.run(["pdftotext", "-f", str(number), "-l", str(number), str(pdf),
                               "-"], check=True, capture_output=True, text=True).stdout
        assert " ".join(slide.title.split()[:3]) in " ".join(text.split()), (number, text[:80])


def _page_texts(fig) -> str:
    return " ".join(t.get_text() for t in fig.findobj(Text))


def test_the_minus_100_page_names_row_v_minus_100_from_the_model():
    from types import SimpleNamespace

    from matplotlib.figure import Figure

    from minibert.viz.slides import _bugs_page

    for vocab in (120, 4591, 30522):
        context = SimpleNamespace(model=SimpleNamespace(config=SimpleNamespace(
            vocab_size=vocab)))
        fig = Figure(figsize=SLIDE_SIZE)
        _bugs_page(fig, context)
        text = _page_texts(fig)
        assert f"row V − 100 (row {vocab - 100:,}" in text and f"V = {vocab:,}" in text
        assert "last row" not in text
    assert "last row" not in PLAN


def _checker_summary() -> dict:
    """What `minibert gradcheck` prints per check: the largest relative error over the
    arrays whose gradient is not identically zero, computed here from the suite's tables."""
    from minibert.gradcheck import suite

    table, _ = suite.run_all(seed=0, include_model=False)
    name, thunk = next(iter(suite.model_cases(0)))
    table.extend(thunk(), prefix=f"{name}: ")
    cases: dict[str, list] = {}
    for row in table.rows:
        case, _, _ = row.name.partition(": ")
        cases.setdefault(case, []).append(row)
    return {case: (max((r.rel_error for r in rows if r.analytic_norm >= 1e-9), default=0.0),
                   [r for r in rows if r.analytic_norm < 1e-9]) for case, rows in cases.items()}


def test_the_gradient_check_picture_shows_what_the_checker_reports():
    from matplotlib.figure import Figure

    from minibert.gradcheck.suite import MODEL_TOL
    from minibert.viz.slides import _gradcheck_page

    summary = _checker_summary()
    rows = gradcheck_rows()
    checked = [row for row in rows if not row["bug"]]
    assert len(checked) >= 6
    for row in checked:
        error, zero_rows = summary[row["case"]]
        assert row["max_rel_error"] == error, row["case"]
        assert row["skipped"] == [r.name.partition(": ")[2] for r in zero_rows]
    model = next(row for row in checked if row["case"].startswith("BertForPreTraining"))
    # The whole model holds key-bias rows whose true gradient is 0 and whose relative error is
    # noise near 1: a bar taking the maximum over every row would stand above the tolerance.
    _, zero_rows = summary[model["case"]]
    assert zero_rows and max(r.rel_error for r in zero_rows) > MODEL_TOL
    assert model["max_rel_error"] < MODEL_TOL and model["skipped"]
    bug = next(row for row in rows if row["bug"])
    assert bug["max_rel_error"] > 1e-2
    fig = Figure(figsize=SLIDE_SIZE)
    _gradcheck_page(fig, None)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels == [f"{max(row['max_rel_error'], 1e-17):.1e}" for row in rows]
    assert "key.bias" in _page_texts(fig)


def test_the_worked_instance_is_notebook_06s():
    import json

    from minibert.viz.lecture_set import WORKED_INSTANCE, worked_instance_rows

    cells = json.loads((ROOT / "notebooks" / "06_pretraining_data.ipynb").read_text())["cells"]
    printed = next("".join(output["text"]) for cell in cells if cell["cell_type"] == "code"
                   for output in cell["outputs"]
                   if "next_sentence_label = " in "".join(output.get("text", "")))
    lines = printed.splitlines()
    assert lines[0].startswith(f"next_sentence_label = {WORKED_INSTANCE['next_sentence_label']}")
    table = [line.split() for line in lines[2:] if re.match(r"\d+\s+[01]\s", line)]
    rows = worked_instance_rows()
    assert len(table) == len(rows)
    for cells_of_row, row in zip(table, rows, strict=True):
        expected = [str(row["position"]), str(row["segment"]), row["token"], row["input"]]
        if row["branch"]:
            expected += [row["target"], row["branch"]]
        assert cells_of_row == expected


def test_the_handout_and_the_deck_are_written_apart(tmp_path):
    with pytest.raises(ValueError, match="another file"):
        write_slides(tmp_path / "deck.pdf", handout=tmp_path / "deck.pdf")
    with pytest.raises(ValueError, match="must end in .pdf"):
        write_slides(tmp_path / "deck.pdf", handout=tmp_path / "handout.txt")
    assert not (tmp_path / "deck.pdf").exists()
