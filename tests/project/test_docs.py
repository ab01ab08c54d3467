"""Every relative link and image in the README, docs/ and notebooks/README.md names a file
that exists, so a page never points a student at nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
