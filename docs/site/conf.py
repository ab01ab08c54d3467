"""Sphinx configuration of the course site (`make site`; docs/site/build.py stages the sources).

The source folder is the staged tree that build.py lays out (links to the repository's
README, docs/ and notebooks/, beside the generated pages); this file stays here, passed to
sphinx-build with -c. Everything a page loads is bundled: the theme's scripts and icon font,
MathJax 3 (SVG output, so no font is fetched) from the sphinx-mathjax-offline package.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
STAGE = Path(os.environ.get("MINIBERT_SITE_STAGE", HERE.parents[1] / "build" / "site-src"))
sys.path.insert(0, str(HERE))

project = "minibert"
author = "the minibert authors"
copyright = "the minibert authors, MIT licence"
html_title = "minibert: BERT from the inside"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "minibert_site",
]

root_doc = "index"
# Only these files are pages; everything else in the tree is there to be linked to
# (a test file, a benchmark script: MyST turns a link to an existing file into a download).
include_patterns = [
    "index.md",
    "glossary.md",
    "README.md",
    "tests/README.md",
    "docs/*.md",
    "notebooks/README.md",
    "notebooks/*.ipynb",
    "notebooks/*/index.md",
    "api/*.md",
    "explorer/*.md",
    "lecture/*.md",
    "assignment/*.md",
    "assignment/workspace/README.md",
]
exclude_patterns = ["_extra/**", "_mathjax/**"]

# -- MyST and notebooks -----------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "html_image"]
myst_heading_anchors = 6          # docs link to sections as code hosts do: page.md#layernorm
myst_dmath_double_inline = True   # $$...$$ inside a paragraph, as the docs write it
nb_execution_mode = "off"         # committed outputs only; `make notebooks` refreshes them
nb_merge_streams = True
# Heading levels that skip one (a notebook's first heading at ##) are style, not errors.
suppress_warnings = ["myst.header"]

# -- API reference from the docstrings ----------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = True
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_custom_sections = [("Inputs", "params_style"), ("Outputs", "returns_style"),
                            ("Output", "returns_style")]
add_module_names = False
python_display_short_literal_types = True

# -- HTML ---------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    # Only the open branch of the navigation in each page (not all 250 pages' links): the
    # site stays small and every page loads less.
    "collapse_navbar": True,
    "show_toc_level": 2,
    "use_download_button": True,
    "use_fullscreen_button": False,
    "navigation_with_keys": False,
    "use_sidenotes": False,
    "extra_footer": (f"<p class=\"mb-version\">"
                     f"{os.environ.get('MINIBERT_SITE_VERSION', 'minibert')}"
                     " · the code: the <code>minibert/</code> package of the repository; each "
                     "API entry links to its <code>[source]</code>.</p>"),
}
# The menu and contents buttons (a local fix for pydata-sphinx-theme #2451) and copy buttons.
html_js_files = ["minibert_site.js"]
# Search: pages and their headings rank above the API's names that share a word.
html_search_scorer = str(HERE / "static" / "search_scorer.js")
html_static_path = [str(HERE / "static")]
html_css_files = ["minibert_site.css"]
html_favicon = str(HERE / "static" / "favicon.svg")  # else a browser asks the server for one
html_extra_path = [str(STAGE / "_extra")]
# The download button offers each page's source: a notebook as its .ipynb.
html_copy_source = True
html_sourcelink_suffix = ""
html_show_sourcelink = False
# A first visit (no stored choice) starts light, instead of the theme's console complaint.
html_context = {"default_mode": "light"}
html_last_updated_fmt = None
html_permalinks = True

# MathJax 3 from a package, not a CDN: its combined TeX-to-SVG script needs no web font.
# build.py copies only that script and its TeX extensions into the stage's _mathjax/.
_mathjax = importlib.util.find_spec("sphinx-mathjax-offline")
if _mathjax is None or _mathjax.origin is None:
    raise RuntimeError("the docs extra is missing sphinx-mathjax-offline "
                       "(pip install -e '.[docs]')")
_staged = STAGE / "_mathjax"
html_static_path.insert(0, str(_staged) if _staged.is_dir()
                        else str(Path(_mathjax.origin).parent / "static"))
mathjax_path = "mathjax/tex-svg.js"
mathjax3_config = {
    "tex": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]]},
    "options": {"enableMenu": False},
}
