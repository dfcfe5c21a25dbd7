"""doc/migration.md read as data: its launch, parameter and interface tables (each after an
``<!-- ...-table -->`` marker), for the tests that check them against the code."""

import re
from dataclasses import dataclass
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "doc" / "migration.md"
NONE = "—"


@dataclass(frozen=True)
class Interface:
    theirs: str
    their_type: str
    ours: str  # NONE when there is no equivalent
    our_type: str
    how: str  # the category word: same, renamed, fields, retyped, alias, none
    note: str


def table(marker: str) -> list[list[str]]:
    """The rows (cells stripped) of the table after ``<!-- marker -->``."""
    text = PAGE.read_text()
    start = text.index(f"<!-- {marker} -->")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not set("".join(cells)) <= set("- "):
            rows.append(cells)
    return rows[1:]  # without the header


def names(cell: str) -> list[str]:
    """The backticked names of a cell."""
    return re.findall(r"`([^`]+)`", cell)


def interfaces() -> list[Interface]:
    out = []
    for theirs, their_type, ours, our_type, how, note in table("interface-table"):
        ours_names = names(ours)
        out.append(Interface(names(theirs)[0], their_type, ours_names[0] if ours_names else NONE,
                             our_type, how.split()[0].rstrip(":"), note))
    return out
