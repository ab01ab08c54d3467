"""The handout: the student workspace's README, and the same text as a PDF.

``handout_markdown()`` walks through the tasks in teaching order: for each, the section of
docs/backprop.md (or optim.md, data.md) and the notebook section that derive it, what the
hidden tests add; per part, written questions; then what is forbidden and how it is
graded. ``write_pdf(markdown, path)`` draws it on A4 pages with matplotlib (a runtime
dependency already), no other tool.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from minibert.assignment.tasks import TASKS

__all__ = ["READING", "CELLS", "QUESTIONS", "HIDDEN_CHECKS", "READING_PAGE", "handout_markdown",
           "write_pdf"]

# task -> (doc sections "file#anchor", notebook sections "NN §k Title"); a test checks
# that every heading named here exists.
READING: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "linear": (("backprop.md#linear",), ("04 §4 The feed-forward sublayer",)),
    "embedding": (("backprop.md#embedding",),
                  ("02 §2 The backward of a lookup is a scatter-add",)),
    "layernorm": (("backprop.md#layernorm",),
                  ("02 §4 LayerNorm, backward one step at a time", "02 §5 The fused formula")),
    "gelu": (("backprop.md#gelu", "backprop.md#erf"), ("04 §3 GELU's backward",)),
    "softmax": (("backprop.md#softmax",), ("03 §5 The backward, one step at a time",)),
    "dropout": (("backprop.md#dropout",), ()),
    "attention": (("backprop.md#attention",),
                  ("03 §5 The backward, one step at a time",
                   "03 §6 The fused backward and the gradient checks")),
    "cross_entropy": (("backprop.md#cross-entropy",),
                      ("05 §1 Cross-entropy with ignored labels",)),
    "encoder_block": (("backprop.md#multi-head-split-and-merge",
                       "backprop.md#the-post-ln-residual-block"),
                      ("04 §5 Residual connection and post-LN, by hand",
                       "04 §6 A whole BertLayer")),
    "tied_decoder": (("backprop.md#the-mlm-head-and-tied-weights",),
                     ("05 §4 Tied weights: one array, two uses",)),
    "model_gradcheck": (("backprop.md#norm-wise-relative-error",
                         "backprop.md#why-gradient-checks-run-in-float64"),
                        ("05 §6 The whole model against finite differences",)),
    "adamw": (("optim.md#decoupled-weight-decay-adamw", "optim.md#gradient-clipping"),
              ("07 §5 The training loop",)),
    "masking": (("data.md#3-masking",), ("06 §5 Masking: the 80/10/10 rule",)),
    "nsp": (("data.md#2-instances-segments-before-masks",),
            ("06 §3 Sentence pairs and NotNext",)),
}

# task -> labelled notebook cells (the "# [NN-label]" line that opens a code cell), where
# the notebook has them; a test checks that each exists.
CELLS: dict[str, tuple[str, ...]] = {
    "embedding": ("02-014",),
    "softmax": ("03-jacobian", "03-collapsed"),
    "attention": ("03-step1", "03-jacobian", "03-collapsed", "03-dq-dk", "03-036"),
    "cross_entropy": ("05-006",),
    "encoder_block": ("03-006",),
    "tied_decoder": ("05-026",),
}

# What the hidden tests add to the public ones, per task (the handout lists it).
HIDDEN_CHECKS: dict[str, str] = {
    "linear": "a 2-D input without bias (dbias must be None), a 4-D input",
    "embedding": "every id the same, a 3-D array of ids, a float32 table",
    "layernorm": "another shape, eps = 1e-3 (the eps inside rstd matters)",
    "gelu": "both forms on larger inputs (x drawn with standard deviation 3)",
    "softmax": "axes 0, -2 and 2; -inf entries (masked keys) get exactly zero gradient",
    "dropout": "p = 0.6 on a 3-D array, eval mode (the identity), dout left unchanged",
    "attention": "another shape, a causal (T, T) mask, no mask, dropout with another seed",
    "cross_entropy": "a 2-D shape, every label ignored (all zeros)",
    "encoder_block": "a larger block (4 heads), padded positions whose outputs are used",
    "tied_decoder": "a larger vocabulary and batch, a repeated id",
    "model_gradcheck": "a model whose LayerNorm backward is wrong: your checker must report it",
    "adamw": "other lr, betas and weight decay; clipping just above the limit",
    "masking": "masked_lm_prob 0.3 on short sequences; replacements uniform over the "
               "non-special ids; every position equally likely",
    "nsp": "two documents, some with one sentence; a single document raises ValueError",
}

# part -> (title, written questions)
QUESTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "layers": ("Part 1: the layers (tasks 1-8)", (
        "A BERT whose LayerNorm backward lacks the variance term still trains: its loss goes "
        "down. Why, and what does a gradient check show that the loss curve does not?",
        "Why do the checks draw a random upstream gradient and never use all ones? What "
        "would a softmax backward that returns zeros score with all ones, and why?",
    )),
    "composition": ("Part 2: composition (tasks 9-11)", (
        "In one encoder block, x reaches the output through attention and around it. Write "
        "dx as a sum over its paths and name the residual each term comes from.",
        "The key bias of attention has exactly zero gradient. Show it from softmax(s + c) = "
        "softmax(s), and say what your gradient checker's relative error means for such an "
        "array.",
    )),
    "training": ("Part 3: training (tasks 12-14)", (
        "AdamW multiplies the parameter by (1 - lr * weight_decay); L2 regularisation adds "
        "weight_decay * p to the gradient. Why does Adam's division by sqrt(v) make the two "
        "differ, and for which parameters most?",
        "What share of your pairs are NotNext? minibert's pretraining data has about 60% "
        "(docs/data.md): which of Google's rules makes the difference?",
    )),
}


READING_PAGE = "assignment_reading.md"  # backprop.md's named sections, derivations only
DEFAULT_SUBMIT = ("hand in the task files (`linear.py` ... `nsp.py`) and `answers.md`, as "
                  "they are in this folder: a zip of the folder or the files themselves, "
                  "on the course's site (Gradescope, Canvas, ...)")


def _docs_link(section: str) -> str:
    file, anchor = section.split("#")
    if file == "backprop.md":  # the derivation without the library's code
        file = READING_PAGE
    return f"`docs/{file}` § {anchor.replace('-', ' ')}"


def handout_markdown(deadline: str | None = None, submit: str | None = None,
                     late_policy: str | None = None) -> str:
    """The student workspace's README: the handout.

    ``deadline``, ``submit`` (how to hand in) and ``late_policy`` fill its "Submitting"
    section; left out, it says what to hand in and that the course sets the rest.
    """
    total = sum(t.points for t in TASKS)
    lines = [
        "# Assignment: BERT's backward passes",
        "",
        "You write the backward passes of BERT's layers, compose them into a BERT layer and "
        "a tied decoder, check a whole model's gradients, and write the pieces that train "
        "it. Each task is one function in one file of this folder; the file's docstring "
        "gives the inputs, outputs, shapes and the forward pass the function inverts. Read "
        "the derivation named for each task before you write it: the course's `docs/` "
        "folder and notebooks 02-07 (in the minibert repository).",
        "",
        f"Total: {total} points. You need Python with NumPy, pytest and minibert installed.",
        "",
        "    pytest -q                              # the public tests, one per task",
        "    minibert assignment grade .            # the graded table",
        "",
        "## Submitting",
        "",
        f"- Deadline: {deadline or '(your course gives it)'}.",
        f"- How: {submit or DEFAULT_SUBMIT}.",
        "- Keep each function's name and signature, and the file names; helpers go in the "
        "file that uses them. Do not hand in `test_public.py` or caches.",
        f"- Late work: {late_policy or '(your course gives its policy)'}.",
        "",
    ]
    part = None
    for number, task in enumerate(TASKS, 1):
        if task.part != part:
            part = task.part
            title, questions = QUESTIONS[part]
            lines += [f"## {title}", ""]
        docs, notebooks = READING[task.name]
        reading = ", ".join(_docs_link(d) for d in docs)
        reading += "; notebook " + ", ".join(notebooks) if notebooks else \
            " (no notebook section)"
        if task.name in CELLS:
            reading += " (cells " + ", ".join(f"[{c}]" for c in CELLS[task.name]) + ")"
        lines += [
            f"### Task {number}: `{task.function}` in `{task.file}` ({task.points} points)",
            "",
            f"What it teaches: {task.teaches}.",
            "",
            f"Read first: {reading}.",
            "",
            f"The hidden tests add: {HIDDEN_CHECKS[task.name]}.",
            "",
        ]
        last_of_part = number == len(TASKS) or TASKS[number].part != part
        if last_of_part:
            lines += ["Written questions (answer in a few sentences each, in `answers.md`):",
                      ""]
            lines += [f"{k}. {q}" for k, q in enumerate(QUESTIONS[part][1], 1)]
            lines += [""]
    lines += [
        "## What is forbidden",
        "",
        "- Automatic differentiation: a file that imports torch, jax, autograd or the like "
        "is flagged.",
        "- minibert's own answer, by any route: a file that imports or calls minibert's "
        "function for its task (`minibert.functional.layernorm_backward` in `layernorm.py`, "
        "`minibert.flat_layer` in `encoder_block.py`, `minibert.gradcheck` in "
        "`model_gradcheck.py`, ...), copies it (renamed variables are still a copy), runs "
        "its source with `exec`, or differentiates minibert's forwards numerically is "
        "flagged. The other tasks' functions are allowed: attention may call minibert's "
        "`softmax_backward`, the encoder block minibert's layer pairs.",
        "- Getting round the grader: threads, processes, signals, `ctypes`, looking at the "
        "grader's frames or objects are flagged; changing the grader's own functions scores "
        "the task 0.",
        "- A flag does not change the score; the report shows it with the file and line, and "
        "the lecturer decides.",
        "",
        "## How it is graded",
        "",
        "- Each task scores all its points or none: one wrong array is a wrong backward.",
        "- The checks: a float64 gradient check against centred finite differences with a "
        "random upstream gradient (tolerance 1e-7 for a layer, 1e-6 for a composition), the "
        "shapes and dtypes, and one invariance per task. A failing check prints one line, "
        "with a hint when the mistake is a known one.",
        "- The hidden tests run the same checks on other cases (listed under each task); "
        "passing the public tests is not a proof.",
        "- One mistake costs one task: each task is graded in its own process, and while it "
        "is graded the other task files are minibert's versions of them (import only their "
        "task's functions from them; keep helpers in the file that uses them).",
        "- Each task has a time limit for its checks (60 s by default; a correct task takes "
        "well under 5 s). Loading your file (its imports) is timed apart, so a slow import "
        "is not called an infinite loop.",
        "- The written questions are graded by hand.",
        "",
        "`pytest` runs every task in one process, so an infinite loop hangs it (stop it with "
        "Ctrl-C); the grader gives each task its own process.",
        "",
        "## Then: your backward passes train BERT",
        "",
        "    import minibert as mb",
        "    with mb.use_implementation(\".\"):       # your layer backwards replace minibert's",
        "        ...                                # a gradient check, a few training steps",
        "",
    ]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------
# PDF: the markdown drawn line by line on A4 pages
# ----------------------------------------------------------------------------------------

_PAGE = (8.27, 11.69)  # A4 in inches
_MARGIN = 0.75  # inches
_WIDTH_CHARS = 92  # characters of body text per line at 9 pt
_STYLES = {"h1": (16, "bold", 0.36), "h2": (13, "bold", 0.30), "h3": (10.5, "bold", 0.24),
           "body": (9, "normal", 0.17), "code": (8.5, "normal", 0.16)}


def _layout(markdown: str) -> list[tuple[str, str]]:
    """(style, text) lines: headings, wrapped paragraphs and list items, code as it is."""
    out: list[tuple[str, str]] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            text = " ".join(paragraph)
            indent = "   " if text[:2] in ("- ",) or text[:3].rstrip(". ").isdigit() else ""
            for line in textwrap.wrap(text, _WIDTH_CHARS, subsequent_indent=indent):
                out.append(("body", line.replace("`", "")))
            out.append(("gap", ""))
            paragraph.clear()

    for raw in markdown.splitlines():
        if raw.startswith("    "):
            flush()
            out.append(("code", raw))
        elif raw.startswith("#"):
            flush()
            level = len(raw) - len(raw.lstrip("#"))
            out.append((f"h{min(level, 3)}", raw.lstrip("#").strip().replace("`", "")))
        elif not raw.strip():
            flush()
        elif raw.startswith(("- ", "1. ", "2. ", "3. ")):
            flush()
            paragraph.append(raw)
        else:
            paragraph.append(raw.strip())
    flush()
    return out


def write_pdf(markdown: str, path) -> Path:
    """Draw ``markdown`` (headings, paragraphs, lists, indented code) as an A4 PDF at
    ``path``, written atomically. Returns the path."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure

    from minibert.io.fileio import atomic_open

    lines = _layout(markdown)
    target = Path(path)
    with atomic_open(target, "wb") as handle, PdfPages(handle) as pdf:
        figure, y = None, 0.0
        for style, text in lines:
            height = 0.12 if style == "gap" else _STYLES[style][2]
            if style.startswith("h") and style != "h1":
                height += 0.08
            if figure is None or y - height < _MARGIN:
                if figure is not None:
                    pdf.savefig(figure)
                figure = Figure(figsize=_PAGE)
                y = _PAGE[1] - _MARGIN
            y -= height
            if style == "gap":
                continue
            size, weight, _ = _STYLES[style]
            family = "monospace" if style == "code" else "sans-serif"
            figure.text(_MARGIN / _PAGE[0], y / _PAGE[1], text, fontsize=size,
                        fontweight=weight, family=family, va="baseline")
        if figure is not None:
            pdf.savefig(figure)
    return target
