"""The project's documentation as tests read it: the README (the landing page) and the pages
of doc/ (one per former README chapter), each page starting with its own level-1 heading."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "doc").glob("*.md"))]


def page(name: str) -> str:
    """doc/<name>.md."""
    return (REPO / "doc" / f"{name}.md").read_text()


def all_text() -> str:
    """Every page, one after another (a section ends where the next page begins)."""
    return "\n".join(path.read_text() for path in PAGES)


def code_names(name: str) -> set[str]:
    """Every `code` span of doc/<name>.md outside fenced blocks."""
    names, fenced = set(), False
    for line in page(name).splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            names |= set(re.findall(r"`([^`]+)`", line))
    return names
