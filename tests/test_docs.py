"""Every relative link and image in the README, docs/ and notebooks/README.md names a file
that exists, so a page never points a student at nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", ROOT / "notebooks" / "README.md",
                *(ROOT / "docs").glob("*.md")])
# [text](target) and ![alt](target); the target ends at whitespace or ")".
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def relative_targets(page: Path) -> list[str]:
    """The link targets of ``page`` that are files of this repository (no URL, no anchor)."""
    targets = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        targets.append(target.split("#", 1)[0])
    return targets


def test_pages_are_found():
    assert len(PAGES) > 10
    assert all(page.is_file() for page in PAGES)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_name_existing_files(page):
    missing = [target for target in relative_targets(page)
               if not (page.parent / target).exists()]
    assert not missing, f"{page.relative_to(ROOT)} links to missing files: {missing}"


# -- docs/api.md: every name it documents can be imported as written ---------------------

API_PAGE = ROOT / "docs" / "api.md"
DOTTED = re.compile(r"`(minibert(?:\.[A-Za-z_]\w*)+)")
ROW = re.compile(r"^\| (`minibert[^|]*) \| ([^|]*) \|", re.M)
NAME = re.compile(r"`(?:mb\.)?([A-Za-z_]\w*)(?:[(`]|\b)")


def _resolve(dotted: str):
    """The module or attribute that ``dotted`` names, importing modules as needed."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute)
        return obj
    raise ModuleNotFoundError(dotted)


def test_every_dotted_name_in_the_api_page_imports():
    text = API_PAGE.read_text(encoding="utf-8")
    names = sorted(set(DOTTED.findall(text)))
    assert len(names) > 15
    for dotted in names:
        _resolve(dotted)  # raises if it does not import


def test_every_name_of_the_module_table_lives_in_its_modules():
    import minibert

    text = API_PAGE.read_text(encoding="utf-8")
    rows = ROW.findall(text)
    assert len(rows) >= 6
    for modules_cell, names_cell in rows:
        modules = [_resolve(m) for m in DOTTED.findall(modules_cell)] + [minibert]
        for name in NAME.findall(names_cell):
            assert any(hasattr(module, name) for module in modules), (name, modules_cell)


def test_every_functional_pair_and_cache_in_the_api_page_exists():
    from minibert import functional as F

    text = API_PAGE.read_text(encoding="utf-8")
    section = text.split("## `minibert.functional`", 1)[1].split("\n## ", 1)[0]
    for name in set(re.findall(r"`(\w+_forward)\(", section)):
        assert hasattr(F, name) and hasattr(F, name.replace("_forward", "_backward")), name
    caches = set(re.findall(r"`(\w+Cache)\(", section))
    assert len(caches) == 8
    for name in caches:
        assert hasattr(F, name), name
