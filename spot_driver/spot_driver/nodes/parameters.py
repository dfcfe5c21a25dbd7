"""Parameters with descriptions, ranges and read-only flags (what ``ros2 param describe``
shows), and live changes through ``ros2 param set``.

rclpy itself refuses, with a reason, a value outside a declared range (NaN included) and any
change of a read-only parameter; ``on_change`` adds the node's own checks and applies accepted
values.
"""

import math
from collections.abc import Callable

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.node import Node

from spot_driver import registry

Check = Callable[[object], str]  # value -> "" when acceptable, else why not
Apply = Callable[[object], None]


def declare(node: Node, name: str, default, description: str = "", read_only: bool = True,
            bounds: tuple[float, float] | None = None, step: float = 0.0):
    """Declare ``name`` with a descriptor and return its value. Read-only unless the node
    applies changes (``on_change``); numbers get their range; the description defaults to the
    one declared with the parameter (``registry.PARAMETERS``)."""
    declared = registry.PARAMETERS.get(name) or registry.PARAMETERS.get(name.split(".")[0])
    text = description or (declared.description if declared is not None else "")
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
    value = node.declare_parameter(name, default, descriptor).value
    if value is None and isinstance(default, list | tuple):
        return []  # an empty list from a file or the command line carries no type: NOT_SET
    return value


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
