"""Recording the robot's state for an animation: what a request may ask, checked before the
robot is asked. Pure."""

import math
import re
from pathlib import Path

from spot_driver.core.errors import CommandError

MAX_RECORDING_S = 300.0  # the robot records at most five minutes a session
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# .cha options that are a bare keyword (those with values, like bpm, need the file's syntax).
FLAG_OPTIONS = ("extendable", "truncatable", "neutral_start", "precise_steps", "no_looping",
                "arm_required", "arm_prohibited", "starts_sitting", "track_swing_trajectories",
                "assume_zero_roll_and_pitch", "retime_to_integer_slices", "custom_gait_cycle")


def check_duration(seconds: float) -> float:
    if not math.isfinite(seconds) or not 0.0 < seconds <= MAX_RECORDING_S:
        raise CommandError(f"duration must be within (0, {MAX_RECORDING_S:g}] s (the robot "
                           f"records at most five minutes), not {seconds}")
    return seconds


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise CommandError(f"animation name {name!r} must be 1-64 letters, digits, '_' or '-'")
    return name


def check_options(options: list[str]) -> list[str]:
    """The .cha options, each a known keyword without a value."""
    for option in options:
        if option not in FLAG_OPTIONS:
            raise CommandError(f"unknown animation option {option!r}; use any of "
                               f"{', '.join(FLAG_OPTIONS)}")
    return list(options)


def target_file(directory: str, name: str) -> Path | None:
    """Where the animation is written (None: nowhere); CommandError for a directory that does
    not exist or a file that does (it is not overwritten)."""
    if not directory:
        return None
    folder = Path(directory).expanduser()
    if not folder.is_dir():
        raise CommandError(f"directory {directory!r} does not exist")
    target = folder / f"{name}.cha"
    if target.exists():
        raise CommandError(f"{str(target)!r} exists; choose another name")
    return target
