"""Sphinx extension of the course site: notebook cells as link targets, cited cells and
slides as links.

- Every code cell of a notebook page gets the anchor ``cell-<cell id>``; a cell whose first
  line carries a label such as ``[03-036]`` also gets ``cell-03-036`` and a visible link
  ``[03-036]`` above it.
- In the other pages, a code span that is exactly a cell label (```[03-036]```) becomes a
  link to that cell; a label no notebook carries is a build error naming the page and line.
- In the lecture plan, "slide 7" and "slides 9–10" link to those pages of the deck page.
- A link to a folder goes to the page the build made for it (``solutions/index``).
- Every mention of another page is a link, made from the name, so it cannot rot: a code
  span or plain text naming ``docs/NAME.md`` or ``notebooks/NAME.ipynb``, "notebook 06",
  and a code span naming a documented API object (``minibert.functional.gelu_forward``,
  ``F.gelu_forward``, or a name that only one object has, ``layernorm_backward``). A named
  page the site does not have is a build error naming the page and line.
- A notebook's exercise section is a box, followed by its answer from
  ``notebooks/solutions/``, folded.
- An image without a real description (none, or a file name) gets one: a notebook output
  is described by its cell's label and first comment, another image by its file name.
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
SLIDE_DOCS = ("docs/lecture_50min", "docs/lecture_guide", "lecture/index")
PAGE_PATH = re.compile(r"^(?:\.\./)*(docs|notebooks)/([\w-]+)\.(md|ipynb)(?:#([\w-]+))?$")
PAGE_IN_TEXT = re.compile(r"(?<![\w/.])(docs|notebooks)/([\w-]+)\.(md|ipynb)\b|"
                          r"\b(notebooks?) (\d\d)\b")
API_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
API_ALIASES = {"F.": "minibert.functional.", "mb.": "minibert.", "viz.": "minibert.viz."}
EXERCISE = re.compile(r"\bExercise\b")
STUB = re.compile(r"^def (my_\w+)\(", re.M)
FILE_LIKE = re.compile(r"(^|/)[\w.-]+\.(png|jpe?g|svg|gif)$|^[0-9a-f]{20,}", re.I)


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
    """Give the code cells of a notebook page their anchors and visible labels; box its
    exercises; describe every image."""
    docname = app.env.docname
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb":
        _describe_images(app, doctree, docname)
        return
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    _describe_images(app, doctree, docname, cells)
    _exercises(app, doctree, docname)
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


def _solution_source(app, docname: str, function: str) -> str | None:
    """The source of ``function`` in the notebook's solutions file, or None."""
    import ast

    stem = docname.split("/", 1)[1]
    path = Path(app.srcdir, "notebooks", "solutions", f"{stem}_solutions.py")
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            return ast.get_source_segment(text, node)
    return None


def _exercises(app, doctree, docname: str) -> None:
    """Box each exercise section of a notebook page and fold its answer in after it."""
    for section in list(doctree.findall(nodes.section)):
        title = section.next_node(nodes.title)
        if title is None or not EXERCISE.search(title.astext()):
            continue
        section["classes"].append("mb-exercise")
        stubs = []
        for block in section.findall(nodes.literal_block):
            stubs += [name for name in STUB.findall(block.astext()) if name not in stubs]
        for name in stubs:
            source = _solution_source(app, docname, name)
            if source is None:
                continue
            stem = docname.split("/", 1)[1]
            summary = (f"Answer: <code>{name}</code>, from "
                       f"notebooks/solutions/{stem}_solutions.py (try first)")
            section += nodes.raw("", f'<details class="mb-answer"><summary>{summary}</summary>',
                                 format="html")
            section += nodes.literal_block(source, source, language="python")
            section += nodes.raw("", "</details>", format="html")


def _first_comment(source: str) -> str:
    for line in source.splitlines():
        line = line.strip()
        if line.startswith("#"):
            text = LABEL.sub("", line.lstrip("# ")).strip(" :")
            if text:
                return text
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    return lines[-1][:80] if lines else ""


def _describe_images(app, doctree, docname: str, cells=None) -> None:
    """Give every image without a real description one."""
    title = doctree.next_node(nodes.title)
    page = title.astext() if title is not None else docname
    for image in doctree.findall(nodes.image):
        alt = (image.get("alt") or "").strip()
        uri = image.get("uri", "")
        if alt and not FILE_LIKE.search(alt) and alt != posixpath.basename(uri):
            continue
        described = None
        if cells is not None:
            parent = image.parent
            while parent is not None and "cell_index" not in parent:
                parent = parent.parent
            if parent is not None:
                cell = cells[parent["cell_index"]]
                source = cell.get("source", "")
                source = "".join(source) if isinstance(source, list) else source
                label = _first_line_label(cell)
                what = _first_comment(source)
                described = (f"Output of cell {label or parent['cell_index']} of {page}"
                             + (f": {what}" if what else ""))
        if described is None:
            name = posixpath.splitext(posixpath.basename(uri))[0].replace("_", " ")
            described = f"Figure of {page}: {name}"
        image["alt"] = described


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


def _reference(uri: str, child) -> nodes.reference:
    reference = nodes.reference("", "", internal=True, refuri=uri, classes=["mb-auto-link"])
    reference.append(child)
    return reference


def _page_target(app, docname: str, folder: str, name: str, suffix: str, where):
    """The docname a mention of folder/name.suffix names; a warning when there is none."""
    target = f"{folder}/{name}"
    if target in app.env.all_docs:
        return target
    logger.warning("names the page %s/%s.%s, which the site does not have", folder, name,
                   suffix, location=where)
    return None


def _api_objects(app) -> tuple[dict, dict]:
    """The Python domain's objects (full name -> entry) and the names that only one object
    has as its last part (short name -> full name)."""
    cached = getattr(app.env, "minibert_api_objects", None)
    if cached is not None:
        return cached
    objects = dict(app.env.get_domain("py").objects)
    counts: dict[str, list[str]] = {}
    for full in objects:
        counts.setdefault(full.rsplit(".", 1)[-1], []).append(full)
    unique = {short: fulls[0] for short, fulls in counts.items() if len(fulls) == 1}
    app.env.minibert_api_objects = (objects, unique)
    return objects, unique


def _api_target(app, text: str):
    objects, unique = _api_objects(app)
    name = text[:-2] if text.endswith("()") else text
    if not API_NAME.match(name):
        return None
    for alias, full in API_ALIASES.items():
        if name.startswith(alias):
            name = full + name[len(alias):]
    for candidate in (name, f"minibert.{name}"):
        if candidate in objects:
            return candidate, objects[candidate]
    if "_" in name and "." not in name and name in unique:  # a distinctive bare name
        return unique[name], objects[unique[name]]
    return None


def _link_names(app, doctree, docname) -> None:
    """Code spans and plain text that name a page, a notebook or an API object: links."""
    for literal in list(doctree.findall(nodes.literal)):
        if literal.parent is None or isinstance(literal.parent, (nodes.reference, nodes.title,
                                                                 addnodes.desc_signature)):
            continue
        text = literal.astext().strip()
        page = PAGE_PATH.match(text)
        if page:
            target = _page_target(app, docname, page.group(1), page.group(2), page.group(3),
                                  literal)
            if target:
                uri = app.builder.get_relative_uri(docname, target)
                literal.replace_self(_reference(uri + (f"#{page.group(4)}" if page.group(4)
                                                       else ""), literal.deepcopy()))
            continue
        if docname.startswith(("api/", "_modules/")):
            continue
        found = _api_target(app, text)
        if found:
            full, entry = found
            uri = app.builder.get_relative_uri(docname, entry.docname) + "#" + entry.node_id
            literal.replace_self(_reference(uri, literal.deepcopy()))
    notebooks = {n.split("/", 1)[1][:2]: n for n in app.env.all_docs
                 if n.startswith("notebooks/") and n[10:12].isdigit()}
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if parent is None or isinstance(parent, (nodes.literal, nodes.reference, nodes.title,
                                                 nodes.FixedTextElement, nodes.raw)):
            continue
        if any(isinstance(a, (nodes.reference, addnodes.desc_signature, nodes.title))
               for a in _ancestors(parent)):
            continue
        source = str(text)
        if not PAGE_IN_TEXT.search(source):
            continue
        pieces, last = [], 0
        for match in PAGE_IN_TEXT.finditer(source):
            if match.group(1):
                target = _page_target(app, docname, match.group(1), match.group(2),
                                      match.group(3), parent)
                shown = match.group(0)
            else:
                target = notebooks.get(match.group(5))
                shown = match.group(0)
                if target is None:
                    logger.warning("names notebook %s, which the site does not have",
                                   match.group(5), location=parent)
            if not target or target == docname:
                continue
            pieces.append(nodes.Text(source[last:match.start()]))
            pieces.append(_reference(app.builder.get_relative_uri(docname, target),
                                     nodes.Text(shown)))
            last = match.end()
        if not pieces:
            continue
        pieces.append(nodes.Text(source[last:]))
        index = parent.index(text)
        parent.remove(text)
        for offset, piece in enumerate(pieces):
            parent.insert(index + offset, piece)


def _ancestors(node):
    while node is not None:
        yield node
        node = node.parent


def _resolved(app, doctree, docname) -> None:
    _link_names(app, doctree, docname)
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


# Modules whose code gets no [source] page: the graded assignment's machinery (students
# write it themselves) and the command line's plumbing; the site stays under 40 MB.
NO_SOURCE_PAGES = ("minibert.assignment", "minibert.cli")


class _SourcePages(dict):
    """sphinx.ext.viewcode's record of modules, which reports NO_SOURCE_PAGES as having
    no source, so that they get no [source] link and no page."""

    def get(self, key, default=None):
        if key in NO_SOURCE_PAGES or str(key).startswith(tuple(f"{m}." for m in
                                                                  NO_SOURCE_PAGES)):
            return False
        return super().get(key, default)


def _limit_source_pages(app, env, docnames) -> None:
    if not isinstance(getattr(env, "_viewcode_modules", None), _SourcePages):
        env._viewcode_modules = _SourcePages(getattr(env, "_viewcode_modules", {}))


def setup(app):
    app.connect("env-before-read-docs", _limit_source_pages)
    app.add_post_transform(FolderLinks)
    app.connect("autodoc-process-docstring", _docstring, priority=600)
    app.connect("builder-inited", _scan_notebooks)
    app.connect("doctree-read", _anchor_cells)
    app.connect("doctree-resolved", _resolved)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
