"""Compute doc/migration.md's "how" column and its "Field differences" section from
spot_ros2's definitions (``../shared/vendor/spot_ros2``, see spot_ros2_anchor.py) and ours
(``spot_msgs/``). Rows (names, types, notes) are written by hand; the categories are not.
Run it after editing a row: test/test_migration_units.py fails while the page is stale.

    python scripts/render_migration.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from interface_diff import SHOWN, Comparison, Definitions, how
from spot_ros2_anchor import REPO, anchor_dir

PAGE = REPO / "doc" / "migration.md"
TABLE = "<!-- interface-table -->"
DIFFERENCES = ("<!-- differences -->", "<!-- /differences -->")
NONE = "—"
CAMERA = "frontleft"  # the camera a "<c>" row is checked with


def comparison(anchor: Path | None = None) -> Comparison:
    anchor = anchor or anchor_dir()
    return Comparison(Definitions({"spot_msgs": anchor / "spot_msgs"}),
                      Definitions({"spot_msgs": REPO / "spot_msgs"}))


def aliased() -> set[str]:
    """spot_ros2 names the aliases offer (``<c>`` for a per-camera one)."""
    from spot_driver.spot_ros2_aliases.table import POSTURES, SERVICES, TOPICS, camera_aliases
    per_camera = {a.theirs.replace(f"/{CAMERA}/", "/<c>/") for a in camera_aliases([CAMERA])}
    return {a.theirs for a in (*TOPICS, *SERVICES)} | set(POSTURES) | per_camera


def _name(cell: str) -> str | None:
    parts = cell.split("`")
    return parts[1] if len(parts) > 2 else None


def render(text: str, compare: Comparison, aliases: set[str]) -> str:
    """The page with every interface row's "how" cell and the differences section computed."""
    lines = text.splitlines()
    start = lines.index(TABLE)
    details = []
    for i in range(start + 3, len(lines)):
        if not lines[i].startswith("|"):
            break
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        theirs, their_type, ours, our_type = _name(cells[0]), cells[1], _name(cells[2]), cells[3]
        ours_here = ours.replace(f"/{CAMERA}/", "/<c>/") if ours and "<c>" in theirs else ours
        cells[4] = how(theirs, their_type, ours_here, our_type if ours else None,
                       theirs in aliases, compare)
        lines[i] = "| " + " | ".join(cells) + " |"
        found = compare.differences(their_type, our_type) if ours else None
        if found and len(found) > SHOWN:  # more than the row names
            details.append(f"- {cells[0]} (`{their_type}` → `{our_type}`): "
                           + "; ".join(f"`{d}`" for d in sorted(found)))
    begin, end = (lines.index(marker) for marker in DIFFERENCES)
    lines[begin + 1:end] = ["", *details, ""]
    return "\n".join(lines) + "\n"


def main() -> None:
    PAGE.write_text(render(PAGE.read_text(), comparison(), aliased()))


if __name__ == "__main__":
    main()
