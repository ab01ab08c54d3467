"""Sphinx extension of the course site: notebook cells as link targets, cited cells and
slides as links.

- Every code cell of a notebook page gets the anchor ``cell-<cell id>``; a cell whose first
  line carries a label such as ``[03-036]`` also gets ``cell-03-036`` and a visible link
  ``[03-036]`` above it.
- In the other pages, a code span that is exactly a cell label (```[03-036]```) becomes a
  link to that cell; a label no notebook carries is a build error naming the page and line.
- In the lecture plan, "slide 7" and "slides 9–10" link to those pages of the deck page.
- A link to a folder goes to the page the build made for it (``solutions/index``).
- Docstrings are read as reStructuredText with two plain-text habits of this code base
  accepted: a norm written ``|x|`` and a continuation line indented under a paragraph.
  Anything else that does not parse (an unclosed ````literal``, a broken table or
  directive) is a build error naming the module, the object and the line.
"""

from __future__ import annotations

import inspect
import json
import os
import posixpath
import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

LABEL = re.compile(r"\[(\d\d-[a-z0-9][a-z0-9-]*)\]")
LABEL_SPAN = re.compile(r"^\[(\d\d-[a-z0-9][a-z0-9-]*)\]$")
SLIDES = re.compile(r"\b(slides?) (\d+)(?:(\s*[–-]\s*)(\d+))?")
DECK_DOC = "lecture/deck"
SLIDE_DOCS = ("docs/lecture_50min",)


def _first_line_label(cell) -> str | None:
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else source
    match = LABEL.search(text.split("\n", 1)[0])
    return match.group(1) if match else None


def _scan_notebooks(app) -> None:
    """Label -> (docname, anchor) for every labelled cell of every notebook page."""
    labels = {}
    for path in sorted(Path(app.srcdir, "notebooks").glob("*.ipynb")):
        docname = f"notebooks/{path.stem}"
        try:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        except (ValueError, KeyError, TypeError) as error:
            logger.warning("%s: not a notebook: %s", Path(path).relative_to(app.srcdir), error)
            continue
        for cell in cells:
            label = _first_line_label(cell)
            if label is not None:
                labels[label] = (docname, f"cell-{label}")
    app.env.minibert_cell_labels = labels


def _anchor_cells(app, doctree) -> None:
    """Give the code cells of a notebook page their anchors and visible labels."""
    docname = app.env.docname
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb":
        return
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for container in doctree.findall(nodes.container):
        if container.get("nb_element") != "cell_code":
            continue
        cell = cells[container["cell_index"]]
        anchors = []
        if cell.get("id"):
            anchors.append(f"cell-{cell['id']}")
        label = _first_line_label(cell)
        if label is not None and f"cell-{label}" not in anchors:
            anchors.append(f"cell-{label}")
        container["ids"].extend(a for a in anchors if a not in container["ids"])
        if label is not None:
            link = nodes.reference("", f"[{label}]", refid=f"cell-{label}",
                                   classes=["mb-cell-label-link"])
            container.insert(0, nodes.paragraph("", "", link, classes=["mb-cell-label"]))


def _link_labels(app, doctree, docname) -> None:
    labels = getattr(app.env, "minibert_cell_labels", {})
    for literal in list(doctree.findall(nodes.literal)):
        match = LABEL_SPAN.match(literal.astext())
        if not match or isinstance(literal.parent, nodes.reference):
            continue
        label = match.group(1)
        if label not in labels:
            logger.warning("cell label [%s] is carried by no notebook cell", label,
                           location=literal)
            continue
        target, anchor = labels[label]
        uri = app.builder.get_relative_uri(docname, target) + "#" + anchor
        reference = nodes.reference("", "", internal=True, refuri=uri,
                                    classes=["mb-cell-ref"])
        literal.replace_self(reference)
        reference.append(literal)


def _link_slides(app, doctree, docname) -> None:
    if docname not in SLIDE_DOCS or DECK_DOC not in app.env.all_docs:
        return
    count = int(os.environ.get("MINIBERT_SITE_SLIDES", "0"))
    deck = app.builder.get_relative_uri(docname, DECK_DOC)
    for text in list(doctree.findall(nodes.Text)):
        if isinstance(text.parent, (nodes.literal, nodes.reference, nodes.FixedTextElement)):
            continue
        source = str(text)
        if not SLIDES.search(source):
            continue
        pieces, last = [], 0
        for match in SLIDES.finditer(source):
            numbers = [int(match.group(2))] + ([int(match.group(4))] if match.group(4) else [])
            for number in numbers:
                if count and not 1 <= number <= count:
                    logger.warning("slide %d: the deck has %d pages", number, count,
                                   location=text.parent)
            pieces.append(nodes.Text(source[last:match.start()] + match.group(1) + " "))
            pieces.append(nodes.reference("", str(numbers[0]), internal=True,
                                          refuri=f"{deck}#slide-{numbers[0]}"))
            if len(numbers) == 2:
                pieces.append(nodes.Text(match.group(3)))
                pieces.append(nodes.reference("", str(numbers[1]), internal=True,
                                              refuri=f"{deck}#slide-{numbers[1]}"))
            last = match.end()
        pieces.append(nodes.Text(source[last:]))
        parent = text.parent
        index = parent.index(text)
        parent.remove(text)
        for offset, piece in enumerate(pieces):
            parent.insert(index + offset, piece)


def _resolved(app, doctree, docname) -> None:
    if docname.startswith("notebooks/") and Path(app.env.doc2path(docname)).suffix == ".ipynb":
        return
    _link_labels(app, doctree, docname)
    _link_slides(app, doctree, docname)


class FolderLinks(SphinxPostTransform):
    """A MyST link to a folder that has a generated index page points at that page."""

    default_priority = 8  # before MyST's own resolver (9)

    def run(self, **kwargs) -> None:
        for node in self.document.findall(addnodes.pending_xref):
            if node.get("reftype") != "myst" or node.get("refdomain"):
                continue
            target = node.get("reftarget", "")
            if not target.endswith("/"):
                continue
            index = posixpath.normpath(posixpath.join(
                posixpath.dirname(node["refdoc"]), target, "index"))
            if index in self.env.all_docs:
                node["refdomain"] = "doc"
                node["reftarget"] = index
                node["reftargetid"] = None


INLINE_LITERAL = re.compile(r"(``.+?``|`[^`]+`_?)", re.S)
FIELD = re.compile(r"^\s*:[^:]+:")
LIST_ITEM = re.compile(r"^\s*(:[^:]+:|[-*+] |\d+[.)] |#\. )")
TRAILING_UNDERSCORE = re.compile(r"(?<=[\w)])_(?!\w)")
STARS = re.compile(r"\*+")
OPENING = " \t\n([{<'\"/-:"
CLOSING = " \t\n)]}>'\".,;:!?/-"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _escape_stars(text: str) -> str:
    """Escape a run of ``*`` that opens emphasis never closed (``*args``, ``2 * H``)."""
    out, last, position = [], 0, 0
    while True:
        match = STARS.search(text, position)
        if match is None:
            break
        start, end, run = match.start(), match.end(), match.group()
        opens = ((start == 0 or text[start - 1] in OPENING)
                 and end < len(text) and not text[end].isspace())
        if not opens:
            position = end
            continue
        closer = re.compile(r"(?<=\S)" + re.escape(run) + r"(?!\*)(?=[" + re.escape(CLOSING)
                            + r"]|$)")
        found = closer.search(text, end)
        if found:
            position = found.end()
            continue
        out.append(text[last:start] + "\\*" * len(run))
        last = position = end
    return "".join(out) + text[last:]


def _escape(text: str) -> str:
    text = text.replace("|", "\\|")
    text = TRAILING_UNDERSCORE.sub(r"\\_", text)
    return _escape_stars(text)


def _escape_paragraph(lines: list[str]) -> list[str]:
    text = "\n".join(lines)
    parts = INLINE_LITERAL.split(text)
    return "".join(part if index % 2 else _escape(part)
                   for index, part in enumerate(parts)).split("\n")


def plain_text_habits(lines: list[str]) -> list[str]:
    """A docstring's lines as reST reads what the plain text means: ``|x|``, ``name_``,
    ``*args`` escaped outside literals; an indented continuation under a paragraph of two
    or more lines set off by blank lines."""
    escaped: list[str] = []
    paragraph: list[str] = []
    for line in [*lines, ""]:
        stripped = line.lstrip()
        markup = stripped.startswith(("| ", "..")) or stripped == "|"
        if stripped and not markup:
            paragraph.append(line)
            continue
        escaped += _escape_paragraph(paragraph) if paragraph else []
        paragraph = []
        escaped.append(line)  # a blank line, a line block or explicit markup: reST proper
    escaped.pop()
    out: list[str] = []
    for index, line in enumerate(escaped):
        if line.strip() and out and out[-1].strip():
            if _indent(line) < _indent(out[-1]) and not LIST_ITEM.match(line):
                out.append("")  # back from an indented block: reST wants a blank line
            elif (index >= 2 and out[-2].strip()
                    and _indent(line) > _indent(out[-1]) == _indent(out[-2])
                    and not out[-1].rstrip().endswith("::") and not FIELD.match(out[-1])
                    and not FIELD.match(out[-2]) and not LIST_ITEM.match(out[-1])):
                out.append("")  # an indented continuation under a paragraph
        out.append(line)
    return out


def _docstring(app, what, name, obj, options, lines) -> None:
    if what in ("data", "attribute") and lines:
        inherited = inspect.getdoc(type(obj)) or ""
        if inherited and lines[0].strip() == inherited.strip().split("\n", 1)[0].strip():
            lines[:] = []  # the docstring of the value's type (dict, int), not of the name
            return
    lines[:] = plain_text_habits(lines)


def setup(app):
    app.add_post_transform(FolderLinks)
    app.connect("autodoc-process-docstring", _docstring, priority=600)
    app.connect("builder-inited", _scan_notebooks)
    app.connect("doctree-read", _anchor_cells)
    app.connect("doctree-resolved", _resolved)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
