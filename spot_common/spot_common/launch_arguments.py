"""Launch arguments that cannot be mistyped.

``ros2 launch`` accepts any ``name:=value`` and a launch file silently ignores the names it
does not declare, so a misspelt switch (``enable_low_level:=true`` for ``low_level:=true``)
did nothing. Each of our launch files passes its description through ``strict``: launched by
``ros2 launch``, it refuses an argument it does not declare, naming the closest one, before
anything starts. (Included from another launch file, it is not the file ``ros2 launch`` was
given, and its includer's arguments are not its own: it checks nothing.)
"""

import difflib
import os
import sys
from collections.abc import Sequence

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument


class UnknownLaunchArgumentError(ValueError):
    """A ``name:=value`` the launch file does not declare."""


def given(argv: Sequence[str], launch_file: str) -> list[str] | None:
    """The argument names ``ros2 launch`` was given for ``launch_file`` (its file name or a
    path to it in ``argv``), or None when ``argv`` launches another file."""
    name = os.path.basename(launch_file)
    for index, token in enumerate(argv):
        if os.path.basename(token) == name and not token.startswith("-"):
            return [arg.split(":=", 1)[0] for arg in argv[index + 1:]
                    if ":=" in arg and not arg.startswith("-")]
    return None


def refusal(name: str, declared: Sequence[str]) -> str:
    """The sentence for an undeclared ``name``: the closest declared one, or the list."""
    close = difflib.get_close_matches(name, declared, n=1, cutoff=0.5)
    if close:
        return f"unknown launch argument '{name}'; did you mean '{close[0]}'?"
    return f"unknown launch argument '{name}'; this launch file takes: {', '.join(declared)}"


def strict(description: LaunchDescription, launch_file: str,
           argv: Sequence[str] | None = None) -> LaunchDescription:
    """``description``, once every argument ``ros2 launch`` gave ``launch_file`` is one it
    declares; UnknownLaunchArgumentError otherwise (``ros2 launch`` prints it and exits 1)."""
    names = given(sys.argv if argv is None else argv, launch_file)
    declared = sorted(entity.name for entity in description.entities
                      if isinstance(entity, DeclareLaunchArgument))
    for name in names or []:
        if name not in declared:
            raise UnknownLaunchArgumentError(refusal(name, declared))
    return description
