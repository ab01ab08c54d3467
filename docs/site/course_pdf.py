"""The whole course as one PDF, ``site/minibert_course.pdf``, made from the built site's pages.

``docs/site/build.py`` calls :func:`write_course_pdf` after Sphinx; by hand:
``python docs/site/course_pdf.py site`` (the folder of a built site).

Pure Python, so it builds wherever ``make site`` does, with no LaTeX and no browser:
xhtml2pdf lays the pages out (over ReportLab), matplotlib's mathtext draws each formula
(MathJax runs only in a browser), and the text is set in the DejaVu fonts that come with
matplotlib, which have every character the pages use (−, ×, ≤, √, Greek) but the Chinese
and Japanese of notebook 01's tokenizer examples, which print as empty boxes. Each formula
that mathtext cannot draw, even after the rewrites below, is printed as its TeX source.

The chapters, in the site's order: the syllabus, the notebooks, the docs pages, the
teaching material (the lecture, its plan and guide, the assignments and the student
handout) and the glossary. Left out, and said so on the title page: the API reference
(generated from the docstrings; the site and ``help()`` have it), the explorer's live pages
and the folded answers of the exercises (the solutions are files of their own). Code is
printed without colours and wrapped at the page's width; pictures are scaled to at most
760 pixels wide and reduced to a palette of 128 colours, and each keeps PNG's own
compression in the PDF, which keeps the file near 3.5 MB.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import sys
import tempfile
import textwrap
import time
from pathlib import Path

FILE_NAME = "minibert_course.pdf"
CODE_COLUMNS = 96        # characters of code on a line of the page (DejaVu Sans Mono, 7.6 pt)
IMAGE_WIDTH = 760        # pixels: the widest picture kept (113 dpi across the text)
IMAGE_COLOURS = 128      # octree: a colour bar keeps its gradient (median cut at 48 lost it)
FORMULA_DPI = 150
INLINE_DEPTH = 0.2 * 9.5  # points: the body text's descent, where an inline formula sits
WRAP_MARK = "↪ "


class CoursePdfError(Exception):
    """A problem that stops the PDF: one line naming the page."""


def chapters(site: Path, notebooks: list[str], docs: list[str], teaching: list[str]
             ) -> list[tuple[str, str, Path]]:
    """(part, page title placeholder, HTML file) for each chapter, in the course's order."""
    parts: list[tuple[str, Path]] = [("Course", site / "notebooks" / "README.html")]
    parts += [("Course", site / "notebooks" / f"{n}.html") for n in notebooks]
    parts += [("Docs", site / "docs" / f"{n}.html") for n in docs]
    parts += [("Teaching", site / "lecture" / "index.html")]
    parts += [("Teaching", site / "docs" / f"{n}.html") for n in teaching]
    parts += [("Teaching", site / "assignment" / "index.html"),
              ("Teaching", site / "assignment" / "workspace" / "README.html"),
              ("Reference", site / "glossary.html")]
    missing = [str(path.relative_to(site)) for _, path in parts if not path.is_file()]
    if missing:
        raise CoursePdfError(f"the built site has no {', '.join(missing)}")
    return [(part, "", path) for part, path in parts]


# -- formulas -----------------------------------------------------------------------------

# TeX that MathJax reads and mathtext does not, rewritten to what mathtext draws the same.
TEX_REWRITES = [
    (re.compile(r"\\[td]frac(?![a-zA-Z])"), r"\\frac"),
    (re.compile(r"\\(textstyle|displaystyle)(?![a-zA-Z])\s*"), ""),
    (re.compile(r"\\[lr]Vert(?![a-zA-Z])"), r"\\Vert"),
    (re.compile(r"\\[lr]vert(?![a-zA-Z])"), "|"),
    (re.compile(r"\\(le|ge)(?![a-zA-Z])"), r"\\\1q"),
    (re.compile(r"\\(big|Big|bigg|Bigg)[lr]?(?![a-zA-Z])"), ""),
    (re.compile(r"\\sqrt\s*([0-9A-Za-z]|\\[A-Za-z]+)"), r"\\sqrt{\1}"),
    (re.compile(r"\\frac\s*([0-9A-Za-z])\s*([0-9A-Za-z])"), r"\\frac{\1}{\2}"),
    (re.compile(r"\\mathbb\s*([A-Za-z])"), r"\\mathbb{\1}"),
    (re.compile(r"\\(begin|end)\{(aligned|align\*?|split|equation\*?)\}"), ""),
    (re.compile(r"&|\\\\"), " "),
]


def mathtext_source(tex: str) -> str:
    tex = " ".join(tex.split())
    for pattern, replacement in TEX_REWRITES:
        tex = pattern.sub(replacement, tex)
    return tex


class Formulas:
    """Each formula drawn once, as a greyscale PNG in ``folder``."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.drawn: dict[str, tuple[Path, float, float] | None] = {}
        self.failed = 0

    def draw(self, tex: str, display: bool):
        key = f"{int(display)}{tex}"
        if key in self.drawn:
            return self.drawn[key]
        from matplotlib import mathtext
        from matplotlib.font_manager import FontProperties
        from PIL import Image

        size = 11 if display else 10
        path = self.folder / f"f{hashlib.sha1(key.encode()).hexdigest()[:16]}.png"
        buffer = io.BytesIO()
        try:
            depth = mathtext.math_to_image(f"${mathtext_source(tex)}$", buffer,
                                           prop=FontProperties(size=size),
                                           dpi=FORMULA_DPI, format="png")  # depth in points
        except (ValueError, RuntimeError):
            self.failed += 1
            self.drawn[key] = None
            return None
        image = Image.open(io.BytesIO(buffer.getvalue())).convert("LA")
        # An inline formula is set with its bottom at the text's descent (vertical-align:
        # bottom, a fifth of the font size below the baseline): white rows below a formula
        # that reaches less deep put its baseline on the text's.
        pad = 0 if display else max(0, round((INLINE_DEPTH - depth) * FORMULA_DPI / 72))
        flat = Image.new("L", (image.width, image.height + pad), 255)
        flat.paste(image.getchannel("L"), (0, 0), mask=image.getchannel("A"))
        flat.save(path, optimize=True)
        width, height = (v * 72 / FORMULA_DPI for v in flat.size)  # points
        self.drawn[key] = (path, width, height)
        return self.drawn[key]


# -- one page of the site, made printable ----------------------------------------------------

def _text(node) -> str:
    return "".join(node.itertext())


def _replace(node, new) -> None:
    new.tail = node.tail
    node.getparent().replace(node, new)


def _pictures(article, page: Path, folder: Path, seen: dict) -> None:
    from lxml import html
    from PIL import Image

    for img in list(article.iter("img")):
        src = img.get("src", "")
        if img.get("class") == "formula":
            continue
        if src.startswith("data:") or not src:
            img.drop_tree()
            continue
        source = (page.parent / src.split("#")[0]).resolve()
        if not source.is_file() or source.suffix.lower() not in {".png", ".jpg", ".jpeg"}:
            alt = img.get("alt") or source.name
            _replace(img, html.fromstring(f"<em>[picture: {alt}]</em>"))
            continue
        if source not in seen:
            picture = Image.open(source)
            picture = picture.convert("RGBA")
            white = Image.new("RGBA", picture.size, (255, 255, 255, 255))
            picture = Image.alpha_composite(white, picture).convert("RGB")
            if picture.width > IMAGE_WIDTH:
                picture = picture.resize((IMAGE_WIDTH, round(picture.height * IMAGE_WIDTH
                                                             / picture.width)), Image.LANCZOS)
            target = folder / f"p{len(seen):04d}.png"
            picture.quantize(IMAGE_COLOURS, method=Image.Quantize.FASTOCTREE).save(
                target, optimize=True)
            seen[source] = (target, picture.width)
        target, width = seen[source]
        img.attrib.clear()
        img.set("src", target.name)
        # IMAGE_WIDTH pixels are the text's full width (170 mm); smaller pictures in proportion
        img.set("width", f"{min(1.0, width / IMAGE_WIDTH) * 170:.0f}mm")


def _formulas(article, formulas: Formulas) -> None:
    from lxml import html

    for node in list(article.iter("span", "div")):
        classes = node.get("class", "").split()
        if "math" not in classes:
            continue
        raw = _text(node).strip()
        display = node.tag == "div"
        tex = re.sub(r"^\\[(\[]|\\[)\]]$", "", raw).strip()
        tex = re.sub(r"^\$\$?|\$\$?$", "", tex).strip()
        drawn = formulas.draw(tex, display)
        if drawn is None:
            new = html.Element("code")
            new.text = tex
        else:
            path, width, height = drawn
            new = html.Element("img", {"class": "formula", "src": path.name,
                                       "width": f"{width:.1f}pt", "height": f"{height:.1f}pt",
                                       "style": "vertical-align: bottom"})
        if display:
            paragraph = html.Element("p", {"class": "display-math"})
            paragraph.append(new)
            new = paragraph
        _replace(node, new)


def _wrap_code(text: str) -> str:
    lines = []
    for line in text.rstrip("\n").split("\n"):
        line = line.replace("\t", "    ")
        if len(line) <= CODE_COLUMNS:
            lines.append(line)
            continue
        indent = len(line) - len(line.lstrip(" "))
        pieces = textwrap.wrap(line, CODE_COLUMNS, subsequent_indent=" " * indent + WRAP_MARK,
                               drop_whitespace=False, break_on_hyphens=False)
        lines.extend(piece.rstrip() for piece in pieces)
    return "\n".join(lines)


def _code(article) -> None:
    from lxml import html

    for pre in list(article.iter("pre")):
        text = _text(pre)
        new = html.Element("pre")
        new.text = _wrap_code(text)
        highlight = pre.getparent()
        while highlight is not None and "highlight" in highlight.get("class", ""):
            pre, highlight = highlight, highlight.getparent()
        output = "output" in " ".join(a.get("class", "") for a in pre.iterancestors())
        if output:
            new.set("class", "output")
        _replace(pre, new)


DROP = ("script", "style", "button", "iframe", "form", "input", "noscript", "svg")
DROP_CLASSES = {"headerlink", "toggle-details__summary", "mb-cell-label-hidden",
                "copybtn", "mb-explorer-open", "sd-summary-up", "sd-summary-down"}


def printable(page: Path, folder: Path, formulas: Formulas, pictures: dict, chapter: int):
    """The page's article, made printable: returns (title, HTML)."""
    from lxml import html

    tree = html.fromstring(page.read_bytes())
    found = tree.xpath("//article[contains(@class, 'bd-article')]")
    if not found:
        raise CoursePdfError(f"{page}: no article element (the theme changed?)")
    article = found[0]
    for node in list(article.iter(*DROP)):
        if node.tag == "iframe":
            _replace(node, html.fromstring(
                f"<p><em>[An interactive explorer here: open {page.name} on the site.]</em></p>"))
        else:
            node.drop_tree()
    for node in list(article.iter()):
        if not isinstance(node.tag, str):
            continue
        if DROP_CLASSES & set(node.get("class", "").split()):
            node.drop_tree()
    # the folded answers of the exercises: in notebooks/solutions/, not printed
    for details in list(article.iter("details")):
        summary = details.find("summary")
        label = _text(summary).strip() if summary is not None else "answer"
        _replace(details, html.fromstring(
            f"<p><em>[{label}: folded on the site; the file is in notebooks/solutions/.]</em></p>"))
    _formulas(article, formulas)
    _code(article)
    _pictures(article, page, folder, pictures)
    for anchor in list(article.iter("a")):
        href = anchor.get("href", "")
        anchor.attrib.clear()
        if href.startswith(("http://", "https://")):
            anchor.set("href", href)
        else:  # a link between the site's pages: plain text here, the chapters are in order
            anchor.tag = "span"
    title_node = article.find(".//h1")
    title = _text(title_node).strip() if title_node is not None else page.stem
    for heading in article.iter("h1"):
        heading.text, children = f"{chapter}. {_text(heading).strip()}", list(heading)
        for child in children:
            heading.remove(child)
        break
    body = html.tostring(article, encoding="unicode")
    return title, body


# -- the pictures' own compression --------------------------------------------------------------

def _png_parts(path: Path) -> dict:
    """A non-interlaced PNG's header, palette and compressed pixel data (its IDAT chunks)."""
    import struct
    import zlib

    data = path.read_bytes()
    position, parts, idat = 8, {}, []
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            parts.update(width=width, height=height, depth=depth, colour=colour,
                         interlace=interlace)
        elif kind == b"PLTE":
            parts["palette"] = body
        elif kind == b"tRNS":
            parts["transparency"] = body
        elif kind == b"IDAT":
            idat.append(body)
        position += 12 + length
    parts["idat"] = b"".join(idat)
    parts["pixels"] = zlib.decompressobj().decompress(parts["idat"])  # checks it unpacks
    return parts


def keep_png_compression(pdf: Path, pngs: list[Path]) -> int:
    """Put each PNG's own compressed data in the PDF in place of the copy ReportLab made.

    ReportLab stores a picture as its pixels, expanded to RGB and deflated without PNG's
    row filters: a 64-colour plot takes 4 to 8 times its PNG's bytes. A PDF reads PNG's
    data as it is (Flate with the PNG predictors; an indexed colour space for a palette), as
    img2pdf does: each image stream whose pixels equal one of ``pngs``' is replaced by that
    file's data. Returns how many were replaced."""
    from PIL import Image
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import (
        ArrayObject,
        ByteStringObject,
        DictionaryObject,
        NameObject,
        NumberObject,
    )

    wanted = {}
    for path in pngs:
        parts = _png_parts(path)
        if parts["interlace"] or "transparency" in parts or parts["colour"] not in (0, 3):
            continue
        with Image.open(path) as image:
            mode = "L" if parts["colour"] == 0 else "RGB"
            pixels = image.convert(mode).tobytes()
        wanted[(parts["width"], parts["height"], hashlib.sha1(pixels).hexdigest())] = parts
    writer = PdfWriter(clone_from=PdfReader(pdf))
    replaced = 0
    done = set()
    for page in writer.pages:
        resources = page.get("/Resources")
        objects = resources.get_object().get("/XObject") if resources else None
        for reference in (objects or {}).values():
            stream = reference.get_object()
            key_id = id(stream)
            if key_id in done or stream.get("/Subtype") != "/Image":
                continue
            done.add(key_id)
            size = (int(stream["/Width"]), int(stream["/Height"]))
            parts = wanted.get((*size, hashlib.sha1(stream.get_data()).hexdigest()))
            if parts is None:
                continue
            if parts["colour"] == 3:
                colours = len(parts["palette"]) // 3
                space = ArrayObject([NameObject("/Indexed"), NameObject("/DeviceRGB"),
                                     NumberObject(colours - 1),
                                     ByteStringObject(parts["palette"])])
            else:
                space = NameObject("/DeviceGray")
            stream[NameObject("/ColorSpace")] = space
            stream[NameObject("/BitsPerComponent")] = NumberObject(parts["depth"])
            stream[NameObject("/Filter")] = NameObject("/FlateDecode")
            stream[NameObject("/DecodeParms")] = DictionaryObject({
                NameObject("/Predictor"): NumberObject(15),
                NameObject("/Colors"): NumberObject(1),
                NameObject("/BitsPerComponent"): NumberObject(parts["depth"]),
                NameObject("/Columns"): NumberObject(parts["width"])})
            stream._data = parts["idat"]
            if hasattr(stream, "decoded_self"):
                stream.decoded_self = None
            replaced += 1
    partial = pdf.with_name(f".{pdf.name}.packed")
    with open(partial, "wb") as out:
        writer.write(out)
    partial.replace(pdf)
    return replaced


# -- the book -------------------------------------------------------------------------------

def _fonts() -> dict[str, Path]:
    import matplotlib

    ttf = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    fonts = {"sans": ttf / "DejaVuSans.ttf", "sans-bold": ttf / "DejaVuSans-Bold.ttf",
             "sans-italic": ttf / "DejaVuSans-Oblique.ttf", "mono": ttf / "DejaVuSansMono.ttf"}
    missing = [str(p) for p in fonts.values() if not p.is_file()]
    if missing:
        raise CoursePdfError(f"matplotlib's fonts are missing: {', '.join(missing)}")
    return fonts


def stylesheet(folder: Path) -> str:
    """The print style; the fonts are copied into ``folder``, the only folder the document
    reads from."""
    import shutil

    fonts = {}
    for name, source in _fonts().items():
        fonts[name] = source.name
        shutil.copy2(source, folder / source.name)
    return f"""
@font-face {{ font-family: Body; src: url("{fonts['sans']}"); }}
@font-face {{ font-family: Body; src: url("{fonts['sans-bold']}"); font-weight: bold; }}
@font-face {{ font-family: Body; src: url("{fonts['sans-italic']}"); font-style: italic; }}
@font-face {{ font-family: Code; src: url("{fonts['mono']}"); }}
@page {{ size: a4 portrait; margin: 18mm 20mm 18mm 20mm;
        @frame footer {{ -pdf-frame-content: footer; bottom: 8mm; margin-left: 20mm;
                         margin-right: 20mm; height: 8mm; }} }}
body {{ font-family: Body; font-size: 9.5pt; line-height: 1.35; }}
h1 {{ font-size: 17pt; color: #2b5b84; margin-top: 0; -pdf-outline-level: 0; }}
h2 {{ font-size: 13pt; color: #2b5b84; margin-top: 10pt; -pdf-outline-level: 1; }}
h3 {{ font-size: 11pt; margin-top: 8pt; -pdf-outline-level: 2; }}
h4, h5, h6 {{ font-size: 10pt; -pdf-outline: false; }}
p, li {{ margin-top: 2pt; margin-bottom: 3pt; }}
code, tt, pre {{ font-family: Code; font-size: 8pt; }}
pre {{ font-size: 7.6pt; background-color: #f3f4f6; padding: 4pt; margin: 3pt 0 5pt 0;
      border-left: 2pt solid #c7ccd4; }}
pre.output {{ background-color: #ffffff; border-left: 2pt solid #e1e4e8; }}
table {{ font-size: 8pt; border-collapse: collapse; margin: 4pt 0; }}
th, td {{ border: 0.4pt solid #c0c0c0; padding: 2pt; vertical-align: top; }}
th {{ background-color: #eef1f5; }}
blockquote {{ margin-left: 10pt; color: #333333; }}
.admonition {{ border: 0.5pt solid #c7ccd4; padding: 4pt; margin: 4pt 0; }}
.display-math {{ text-align: center; margin: 4pt 0; }}
.part {{ font-size: 22pt; color: #2b5b84; text-align: center; margin-top: 80mm; }}
.title {{ font-size: 26pt; color: #2b5b84; margin-top: 40mm; }}
#footer {{ font-size: 7.5pt; color: #777777; text-align: center; }}
"""


def title_page(stamp: str, contents: list[tuple[str, str]]) -> str:
    from html import escape

    rows = []
    part = None
    for number, (chapter_part, title) in enumerate(contents, start=1):
        if chapter_part != part:
            part = chapter_part
            rows.append(f"<h3>{escape(part)}</h3>")
        rows.append(f"<p>{number}. {escape(title)}</p>")
    return f"""
<h1 class="title">minibert: BERT from the inside</h1>
<p>The whole course in one file: the syllabus, the notebooks in order with their outputs,
the docs pages, the teaching material and the glossary, as on the course site. Left out:
the API reference (generated from the docstrings: the site has it, and so has Python's
<code>help()</code>), the explorer's live pages and the exercises' folded answers (in
<code>notebooks/solutions/</code>). Code is printed without colours and wrapped at the
page's width (a wrapped line goes on after {escape(WRAP_MARK.strip())}). {escape(stamp)}.</p>
<h2>Contents</h2>
{''.join(rows)}
"""


def write_course_pdf(site: Path, notebooks: list[str], docs: list[str], teaching: list[str],
                     stamp: str, target: Path | None = None) -> dict:
    """Write the course PDF into the built site; returns its figures (pages, bytes, ...)."""
    try:
        from xhtml2pdf import pisa
    except ImportError as error:
        raise CoursePdfError(f"the docs extra is missing xhtml2pdf ({error}): "
                             "pip install -e '.[docs]'") from None
    from reportlab import rl_config

    rl_config.useA85 = 0  # binary streams: ASCII85 would add a quarter to every one
    logging.getLogger("xhtml2pdf").setLevel(logging.ERROR)  # a line per unknown CSS rule
    started = time.monotonic()
    target = target or site / FILE_NAME
    listed = chapters(site, notebooks, docs, teaching)
    with tempfile.TemporaryDirectory(prefix="minibert-course-pdf-") as temporary:
        folder = Path(temporary)
        formulas = Formulas(folder)
        pictures: dict = {}
        bodies, contents = [], []
        for number, (part, _, page) in enumerate(listed, start=1):
            title, body = printable(page, folder, formulas, pictures, number)
            contents.append((part, title))
            bodies.append(f'<div style="-pdf-keep-with-next: false"><pdf:nextpage />{body}</div>')
        document = f"""<html><head><meta charset="utf-8"/><style>{stylesheet(folder)}</style></head>
<body><div id="footer">minibert course · page <pdf:pagenumber/> of <pdf:pagecount/></div>
{title_page(stamp, contents)}
{''.join(bodies)}
</body></html>"""
        partial = target.with_name(f".{target.name}.partial")
        with open(partial, "wb") as out:
            # relative names, read from the temporary folder alone
            status = pisa.CreatePDF(document, dest=out, encoding="utf-8",
                                    path=str(folder / "course.html"))
        if status.err:
            partial.unlink(missing_ok=True)
            raise CoursePdfError(f"xhtml2pdf reported {status.err} errors")
        partial.replace(target)
        packed = keep_png_compression(target, sorted(folder.glob("*.png")))
    from pypdf import PdfReader

    reader = PdfReader(target)
    return {"path": target, "pages": len(reader.pages), "bytes": target.stat().st_size,
            "chapters": [title for _, title in contents], "formulas": len(formulas.drawn),
            "formulas_as_tex": formulas.failed, "pictures": len(pictures), "packed": packed,
            "seconds": time.monotonic() - started}


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import build

    site = Path((argv or sys.argv[1:] or ["site"])[0]).resolve()
    try:
        figures = write_course_pdf(site, build.notebook_pages(), build.docs_pages(),
                                   build.TEACHING_DOCS, build.version_stamp())
    except CoursePdfError as error:
        print(f"course PDF failed: {error}", file=sys.stderr)
        return 1
    print(f"{figures['path']}: {figures['pages']} pages, {figures['bytes'] / 1e6:.1f} MB, "
          f"{len(figures['chapters'])} chapters, {figures['formulas']} formulas "
          f"({figures['formulas_as_tex']} as TeX source), {figures['pictures']} pictures "
          f"({figures['packed']} images kept as PNG data), "
          f"{figures['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
