"""How one ROS interface differs from another, read from their definition files (``.msg``,
``.srv``, ``.action``): fields and constants compared by name, nested types of the two
``spot_msgs`` packages followed. Used to compute doc/migration.md's "how" column from
spot_ros2's definitions and ours (scripts/render_migration.py)."""

import re
from dataclasses import dataclass
from pathlib import Path

SECTIONS = {"msg": ("",), "srv": ("request.", "response."),
            "action": ("goal.", "result.", "feedback.")}
PRIMITIVES = {"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16",
              "int32", "uint32", "int64", "uint64", "string", "wstring"}
_TYPE = re.compile(r"^([\w/]+)((?:<=\d+)?)(\[[^\]]*\])?$")
SHOWN = 3  # differences named in a row; the rest counted


@dataclass(frozen=True)
class Definitions:
    """Where one side's own packages' definitions are: package -> its folder."""
    packages: dict[str, Path]

    def text(self, ros_type: str) -> str | None:
        package, kind, name = ros_type.split("/")
        folder = self.packages.get(package)
        path = folder / kind / f"{name}.{kind}" if folder else None
        return path.read_text() if path and path.exists() else None


def kind(ros_type: str) -> str:
    """``msg``, ``srv`` or ``action``."""
    return ros_type.split("/")[1]


def _full(base: str, package: str) -> str:
    if base in PRIMITIVES or base.count("/") == 2:
        return base
    if "/" in base:
        pkg, name = base.split("/")
        return f"{pkg}/msg/{name}"
    return "std_msgs/msg/Header" if base == "Header" else f"{package}/msg/{base}"


def entries(text: str, package: str) -> list[dict[str, str]]:
    """Each section's entries: name -> type (``spot_msgs/msg/X[]``, ``uint8``) for a field,
    ``= value`` appended for a constant."""
    sections = [{}]
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line == "---":
            sections.append({})
            continue
        if not line:
            continue
        if "=" in line:  # a constant: TYPE NAME=VALUE
            left, value = line.split("=", 1)
            type_, name = left.split()
            sections[-1][name] = f"{type_} = {value.strip()}"
            continue
        type_, name = line.split()[:2]
        base, bound, array = _TYPE.match(type_).groups()
        sections[-1][name] = _full(base, package) + bound + (array or "")
    return sections


def _short(ros_type: str) -> str:
    return ros_type.replace("/msg/", "/").removeprefix("spot_msgs/")


def _split(ros_type: str) -> tuple[str, str]:
    match = _TYPE.match(ros_type.split(" =")[0])
    return (match.group(1), (match.group(2) or "") + (match.group(3) or "")) if match \
        else (ros_type, "")


class Comparison:
    """Differences of their interface from ours, as short phrases."""

    def __init__(self, theirs: Definitions, ours: Definitions) -> None:
        self.theirs, self.ours = theirs, ours

    def differences(self, their_type: str, our_type: str) -> list[str] | None:
        """What differs, [] for nothing; None when a side's definition is unknown."""
        if their_type == our_type and their_type.split("/")[0] not in self.ours.packages:
            return []  # one upstream definition both use
        if kind(their_type) != kind(our_type):
            return None
        texts = self.theirs.text(their_type), self.ours.text(our_type)
        if None in texts:
            return None
        out: list[str] = []
        pairs = zip(entries(texts[0], their_type.split("/")[0]),
                    entries(texts[1], our_type.split("/")[0]), strict=True)
        for prefix, (theirs, ours) in zip(SECTIONS[kind(their_type)], pairs, strict=True):
            self._compare(theirs, ours, prefix, out, set())
        return out

    def _compare(self, theirs: dict, ours: dict, prefix: str, out: list[str],
                 seen: set) -> None:
        for name in theirs.keys() - ours.keys():
            out.append(f"-{_short(theirs[name])} {prefix}{name}".replace(" = ", "="))
        for name in ours.keys() - theirs.keys():
            out.append(f"+{_short(ours[name])} {prefix}{name}".replace(" = ", "="))
        for name in sorted(theirs.keys() & ours.keys()):
            if theirs[name] == ours[name] and not theirs[name].startswith("spot_msgs/"):
                continue
            (their_base, their_shape), (our_base, our_shape) = \
                _split(theirs[name]), _split(ours[name])
            nested = their_base == our_base and their_shape == our_shape and \
                their_base.startswith("spot_msgs/") and (their_base, name) not in seen
            if nested:
                texts = self.theirs.text(their_base), self.ours.text(our_base)
                if None not in texts:
                    seen.add((their_base, name))
                    inner = f"{prefix}{name}{'[]' if their_shape else ''}."
                    self._compare(entries(texts[0], "spot_msgs")[0],
                                  entries(texts[1], "spot_msgs")[0], inner, out, seen)
                    continue
            if theirs[name] != ours[name]:
                out.append(f"{prefix}{name}: {_short(theirs[name])} → {_short(ours[name])}"
                           .replace(" = ", "="))


def summary(differences: list[str]) -> str:
    """The first few differences, sorted, and how many more."""
    shown = sorted(differences)[:SHOWN]
    more = len(differences) - len(shown)
    return "; ".join(f"`{d}`" for d in shown) + (f" (+{more} more)" if more else "")


def how(theirs: str, their_type: str, ours: str | None, our_type: str | None, aliased: bool,
        comparison: Comparison) -> str:
    """A migration row's category: ``same`` (name, type and fields), ``renamed`` (our name;
    same type and fields), ``fields differ`` (same kind and type name), ``retyped`` (another
    kind or type), ``alias`` (also offered under their name, with our type), ``none``; then
    what differs."""
    if ours is None:
        return "none"
    differences = comparison.differences(their_type, our_type)
    same_type = their_type.rsplit("/", 1)[1] == our_type.rsplit("/", 1)[1]
    if aliased:
        word = "alias"
    elif kind(their_type) != kind(our_type):
        kinds = {"msg": "topic", "srv": "service", "action": "action"}
        return f"retyped: {kinds[kind(their_type)]} → {kinds[kind(our_type)]}"
    elif differences is None:  # their type is another package's (bosdyn_msgs): not ours
        word = "retyped"
    elif differences == [] and same_type:
        word = "same" if theirs == ours else "renamed"
    elif same_type:
        word = "fields differ" + ("" if theirs == ours else " (renamed)")
    else:
        word = "retyped"
    if differences:
        return f"{word}: {summary(differences)}"
    if differences is None and word == "alias":
        return "alias: our type"
    return word
