"""viz.style: exports are valid files of each format, the lecture style does not leak, the
colour map is monotonic in lightness. Headless: the Agg backend, no window opens.
"""


import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import colormaps  # noqa: E402
from small_models import (  # noqa: E402
    TOKENS,
    heatmaps,
)

from minibert import viz  # noqa: E402

# ----- export and style -----------------------------------------------------------------


@pytest.fixture
def small_figure(attention_batch):
    attentions, mask = attention_batch
    return viz.attention_figure(attentions, TOKENS, "head", layer=0, head=0, attention_mask=mask)


@pytest.mark.parametrize("extension", ["png", "svg", "pdf", "PNG"])
def test_save_figure_writes_a_valid_file_of_each_format(small_figure, tmp_path, extension):
    path = viz.save_figure(small_figure, tmp_path / f"head.{extension}")
    data = path.read_bytes()
    assert len(data) > 1000
    if extension.lower() == "png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    elif extension == "pdf":
        assert data.startswith(b"%PDF")
        assert b"/FontFile2" in data  # TrueType text, editable once pasted into slides
    else:
        assert b"<svg" in data[:2000]
    assert [p.name for p in tmp_path.iterdir()] == [f"head.{extension}"]  # no temp file left


def test_png_resolution_follows_dpi(small_figure, tmp_path):
    low = viz.save_figure(small_figure, tmp_path / "low.png", dpi=50).read_bytes()
    high = viz.save_figure(small_figure, tmp_path / "high.png").read_bytes()
    low_width = int.from_bytes(low[16:20], "big")  # IHDR width
    high_width = int.from_bytes(high[16:20], "big")
    assert high_width / low_width == pytest.approx(viz.DEFAULT_DPI / 50, rel=0.05)


def test_save_figure_refuses_unknown_formats_and_non_figures(small_figure, tmp_path):
    with pytest.raises(ValueError, match=r"\.png, \.svg, \.pdf.*'\.jpg'"):
        viz.save_figure(small_figure, tmp_path / "head.jpg")
    with pytest.raises(ValueError, match="extension ''"):
        viz.save_figure(small_figure, tmp_path / "head")
    with pytest.raises(TypeError, match="Figure"):
        viz.save_figure("not a figure", tmp_path / "head.png")
    with pytest.raises(ValueError, match="dpi"):
        viz.save_figure(small_figure, tmp_path / "head.png", dpi=0)
    assert list(tmp_path.iterdir()) == []


def test_lecture_style_does_not_leak_into_global_settings():
    before = dict(matplotlib.rcParams)
    with viz.lecture_style():
        assert matplotlib.rcParams["font.size"] >= 14
        assert matplotlib.rcParams["image.cmap"] == viz.ATTENTION_CMAP
    assert dict(matplotlib.rcParams) == before


def test_figures_keep_large_fonts_after_the_style_block(small_figure):
    (ax,) = heatmaps(small_figure)
    assert small_figure.get_suptitle()
    assert small_figure._suptitle.get_fontsize() >= 16
    assert ax.xaxis.label.get_fontsize() >= 14


def lightness(rgb):
    """CIELAB L* of sRGB colours (n, 3) in [0, 1], D65 white."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    luminance = linear @ np.array([0.2126, 0.7152, 0.0722])
    delta = 6 / 29
    f = np.where(luminance > delta**3, np.cbrt(luminance), luminance / (3 * delta**2) + 4 / 29)
    return 116 * f - 16


def test_the_default_colour_map_is_monotonic_in_lightness():
    colors = colormaps[viz.ATTENTION_CMAP](np.linspace(0, 1, 256))[:, :3]
    values = lightness(colors)
    assert np.all(np.diff(values) > 0)  # grayscale keeps the order of the values
    assert values[-1] - values[0] > 70  # and spans most of the lightness range
    assert not np.all(np.diff(lightness(colormaps["jet"](np.linspace(0, 1, 256))[:, :3])) > 0)
