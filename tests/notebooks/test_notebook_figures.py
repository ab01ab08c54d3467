"""Every figure committed in a notebook or in docs/images is an image a room can read: a PNG
of at least 100 dpi (read from its pHYs chunk, which matplotlib writes; a PNG without one,
a screenshot, must be at least 600 pixels wide), and notebooks 11 and 12 commit
their figures as images, not as "<Figure size ...>" text alone."""

import base64
import json
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MIN_DPI = 100


def png_dpi_and_size(data: bytes) -> tuple[float | None, tuple[int, int]]:
    """(dots per inch from the pHYs chunk or None without one, (width, height) in pixels)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    offset = 8
    while offset + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if kind == b"pHYs":
            x_per_unit, _, unit = struct.unpack(">IIB", data[offset + 8:offset + 17])
            return (x_per_unit * 0.0254 if unit == 1 else None), (width, height)
        if kind == b"IDAT":  # pHYs must come before the image data
            break
        offset += 12 + length
    return None, (width, height)


def _images(notebook: Path):
    for index, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                yield index, base64.b64decode(data["image/png"])


def test_png_reader_on_a_figure_saved_by_matplotlib(tmp_path):
    import io

    from matplotlib.figure import Figure

    buffer = io.BytesIO()
    Figure(figsize=(4, 2)).savefig(buffer, format="png", dpi=120)
    dpi, size = png_dpi_and_size(buffer.getvalue())
    assert dpi == pytest.approx(120, abs=0.1) and size == (480, 240)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.stem[:2])
def test_committed_notebook_figures_are_at_least_100_dpi(notebook):
    low = []
    for index, data in _images(notebook):
        dpi, (width, _) = png_dpi_and_size(data)
        # Without a pHYs chunk, a PNG narrower than 6 inches at 100 dpi is too coarse.
        if (dpi is not None and dpi < MIN_DPI - 0.5) or (dpi is None and width < 6 * MIN_DPI):
            low.append((index, dpi, width))
    assert low == [], f"{notebook.name}: (cell, dpi, width) below {MIN_DPI} dpi: {low}"


@pytest.mark.parametrize("number", ["11", "12"])
def test_notebooks_11_and_12_commit_their_figures_as_images(number):
    (notebook,) = [path for path in NOTEBOOKS if path.name.startswith(number)]
    assert len(list(_images(notebook))) >= 1


def test_figures_in_the_docs_are_at_least_100_dpi():
    low = []
    for path in sorted((ROOT / "docs" / "images").glob("*.png")):
        dpi, (width, _) = png_dpi_and_size(path.read_bytes())
        if (dpi is not None and dpi < MIN_DPI - 0.5) or (dpi is None and width < 6 * MIN_DPI):
            low.append((path.name, dpi, width))
    assert low == []
