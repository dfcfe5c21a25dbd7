"""Parameters with descriptions, ranges and read-only flags (what ``ros2 param describe``
shows), and live changes through ``ros2 param set``.

rclpy itself refuses, with a reason, a value outside a declared range (NaN included) and any
change of a read-only parameter; ``on_change`` adds the node's own checks and applies accepted
values.
"""

import math
import re
from collections.abc import Callable
from functools import cache

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.node import Node

from spot_driver.description.robot_model import urdf_dir

Check = Callable[[object], str]  # value -> "" when acceptable, else why not
Apply = Callable[[object], None]


@cache
def descriptions() -> dict[str, str]:
    """Each parameter's comment in config/spot_driver.yaml (where every parameter is
    documented), continuation lines included."""
    config = urdf_dir().parent / "config" / "spot_driver.yaml"
    found, last = {}, None
    for line in config.read_text().splitlines() if config.is_file() else ():
        match = re.match(r"\s{4}(#\s*)?([a-z_.]+):[^#]*#\s*(.*)$", line)
        if match and not match.group(1):
            last = match.group(2)
            found[last] = match.group(3).strip()
        elif last and re.match(r"\s{20,}#\s*(.*)$", line):
            found[last] += " " + line.split("#", 1)[1].strip()
        else:
            last = None
    return found


def declare(node: Node, name: str, default, description: str = "", read_only: bool = True,
            bounds: tuple[float, float] | None = None, step: float = 0.0):
    """Declare ``name`` with a descriptor and return its value. Read-only unless the node
    applies changes (``on_change``); numbers get their range; the description defaults to the
    parameter's comment in config/spot_driver.yaml."""
    text = description or descriptions().get(name, "")
    if read_only:
        text = f"{text} (read-only: restart the driver to change it)".strip()
    descriptor = ParameterDescriptor(description=text, read_only=read_only)
    if bounds is not None:
        if isinstance(default, int) and not isinstance(default, bool):
            descriptor.integer_range = [IntegerRange(from_value=int(bounds[0]),
                                                     to_value=int(bounds[1]), step=int(step))]
        else:
            descriptor.floating_point_range = [FloatingPointRange(
                from_value=float(bounds[0]), to_value=float(bounds[1]), step=step)]
    return node.declare_parameter(name, default, descriptor).value


def on_change(node: Node, handlers: dict[str, tuple[Check | None, Apply]]) -> None:
    """For the parameters in ``handlers``: ``check(value)`` may refuse a change (with the
    sentence it returns), ``apply(value)`` puts an accepted one into effect. A change to
    several parameters at once is refused as a whole when one is refused."""

    def validate(parameters) -> SetParametersResult:
        for parameter in parameters:
            check = handlers.get(parameter.name, (None, None))[0]
            value = parameter.value
            if isinstance(value, float) and not math.isfinite(value):
                return SetParametersResult(successful=False,
                                           reason=f"{parameter.name} must be finite")
            problem = check(value) if check is not None else ""
            if problem:
                return SetParametersResult(successful=False,
                                           reason=f"{parameter.name}: {problem}")
        return SetParametersResult(successful=True)

    def apply(parameters) -> None:
        for parameter in parameters:
            if parameter.name in handlers:
                handlers[parameter.name][1](parameter.value)

    node.add_on_set_parameters_callback(validate)
    node.add_post_set_parameters_callback(apply)
