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

ROOT = Path(__file__).resolve().parents[2]
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


@pytest.fixture(scope="module")
def toy():
    from minibert.viz.slides import _load

    return _load("tiny-toy")


def test_the_minus_100_page_names_row_v_minus_100_from_the_model(toy):
    from matplotlib.figure import Figure

    from minibert.viz.slides import _bugs_page

    vocab = toy.model.config.vocab_size
    fig = Figure(figsize=SLIDE_SIZE)
    _bugs_page(fig, toy)
    text = _page_texts(fig)
    assert f"row V − 100 (row {vocab - 100:,}" in text and f"V = {vocab:,}" in text
    assert "last row" not in text
    assert "last row" not in PLAN


def test_the_minus_100_page_states_the_loss_it_measures(toy):
    """p.12 once said "the loss is just a little wrong"; measured, the bug multiplies it."""
    from matplotlib.figure import Figure

    from minibert.viz.slides import _bugs_page, minus_100_losses

    right, buggy = minus_100_losses(toy)
    assert buggy > 10 * right  # not "a little wrong"
    fig = Figure(figsize=SLIDE_SIZE)
    _bugs_page(fig, toy)
    text = " ".join(_page_texts(fig).split())
    assert "a little" not in text and "public from-scratch" not in text
    assert f"loss {buggy:.1f} nats" in text and f"not {right:.2f}" in text
    assert f"{buggy:.1f} nats instead of {right:.2f}" in PLAN and "a little wrong" not in PLAN


def _after_blank_decides(context, text: str) -> bool:
    """The claim of p.2: sure with the whole sentence, unsure with the text cut off after
    the blank (what a left-to-right model reads)."""
    from minibert.viz.slides import _mlm_top, left_side

    (word, p_whole), = _mlm_top(context, text, k=1)
    (cut_word, p_cut), = _mlm_top(context, left_side(text), k=1)
    return p_whole > 0.9 and (p_cut < 0.5 or cut_word != word)


def test_page_2_shows_that_the_words_after_the_blank_decide(toy):
    from matplotlib.figure import Figure

    from minibert.viz.slides import FILL_MASK_SENTENCES, _fill_mask_page, fill_mask_rows

    # the old example did not show it: the left side alone gave bank 0.96
    assert not _after_blank_decides(toy, "she deposited the money at the [MASK].")
    assert all(_after_blank_decides(toy, text) for text in FILL_MASK_SENTENCES)
    rows = fill_mask_rows(toy)
    assert {row["top"][0][0] for row in rows if not row.get("cut")} == {"bank"}
    fig = Figure(figsize=SLIDE_SIZE)
    _fill_mask_page(fig, toy)
    text = _page_texts(fig)
    for row in rows:
        word, probability = row["top"][0]
        assert f"{word} {probability:.2f}" in text
    # the plan says what the page shows
    cut = next(row for row in rows if row.get("cut"))
    assert f"*{cut['top'][0][0]}* {cut['top'][0][1]:.2f}" in PLAN


def test_the_curves_page_says_what_the_history_shows(toy):
    from matplotlib.figure import Figure

    from minibert.viz.lecture_set import nsp_plateau
    from minibert.viz.slides import _curves_page

    held = [r for r in toy.history if r.get("split") == "heldout"]
    floor, rise = nsp_plateau(held)
    before = [r["next_sentence_accuracy"] for r in held if r["step"] < rise]
    fig = Figure(figsize=SLIDE_SIZE)
    _curves_page(fig, toy)
    text = " ".join(_page_texts(fig).split())
    assert "ignores its input" not in text and "always answering NotNext" in text
    assert f"within {min(before):.2f}–{max(before):.2f}" in text
    assert f"MLM {held[-1]['masked_lm_accuracy']:.2f}" in text
    assert f"between {min(before):.2f} and {max(before):.2f} until step {rise:,}" in PLAN


def test_every_reading_on_the_last_page_is_defined_and_sourced(toy):
    from matplotlib.figure import Figure

    from minibert.viz.slides import _saliency_page

    fig = Figure(figsize=SLIDE_SIZE)
    _saliency_page(fig, toy)
    text = _page_texts(fig)
    for defined in ("∂logit/∂x · x", "averaged 0 → x", "(attention + I) multiplied",
                    "Abnar & Zuidema", "Sundararajan"):
        assert defined in text, defined
    assert "noon" in PLAN.split("### Likely questions", 1)[1]  # its top bar has an answer


def test_the_positions_page_reads_the_training_length(toy):
    from types import SimpleNamespace

    from matplotlib.figure import Figure

    from minibert.viz.slides import _positions_page

    length = toy.recipe["max_seq_length"]
    fig = Figure(figsize=SLIDE_SIZE)
    _positions_page(fig, toy)
    assert f"Training used length {length}:" in _page_texts(fig)
    fig = Figure(figsize=SLIDE_SIZE)
    _positions_page(fig, SimpleNamespace(model=toy.model, recipe=None))
    assert "Training used length" not in _page_texts(fig)


def test_the_handout_homework_is_the_notebooks_exercises():
    from minibert.viz.slides import HOMEWORK

    readme = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    listed = {number for number, _ in HOMEWORK}
    with_exercises = set(re.findall(r"(?i)\[`(\d\d)_\w+\.ipynb`\][^|]*\|[^|\n]*exercises?", readme))
    assert with_exercises <= listed, with_exercises - listed
    rollout = next(what for number, what in HOMEWORK if number == "08")
    assert "backward" not in rollout


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
    names = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert "gelu(none)" not in names and "softmax, bug" not in names
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


def test_the_curves_page_names_the_world_the_run_read():
    """A corpus file by its name, the everyday world by its scenes, else the themes."""
    from minibert.data.everyday import EVERYDAY_SCENES
    from minibert.data.templates import TOPICS
    from minibert.viz.slides import _corpus_note

    assert "everyday.txt;" in " ".join(_corpus_note({"corpus": "/runs/everyday.txt"}))
    everyday = " ".join(_corpus_note({"world": "everyday"}))
    assert f"everyday world: {len(EVERYDAY_SCENES)}" in everyday
    for recipe in (None, {}, {"world": "themes"}):
        assert f"{len(TOPICS)}-topic" in " ".join(_corpus_note(recipe))
