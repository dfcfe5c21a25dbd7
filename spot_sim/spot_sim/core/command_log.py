"""A record of every command the simulated robot receives, and checks for invalid values.

Tests use it to prove the driver never sends a command built from invalid input: after a fuzz
run, ``CommandLog.problems()`` must be empty.
"""

import math
import time
from dataclasses import dataclass

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from spot_sim.core.fault_injection import wrap_handler
from spot_sim.core.lock_order import LEAF, OrderedLock

COMMAND_METHODS = frozenset({
    "RobotCommand", "PowerCommand", "ManipulationApi", "DockingCommand", "LoadMission",
    "LoadMissionAsChunks", "LoadMissionAsChunks2", "PlayMission", "RestartMission",
    "AnswerQuestion", "ApplyGraspOverride",
})
_FLOATS = (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE)
MAX_END_TIME_AHEAD_NS = 24 * 3600 * 10**9


@dataclass
class ReceivedCommand:
    method: str  # e.g. "RobotCommand"
    request: Message | None  # None for streamed requests
    received: float  # time.monotonic()


class CommandLog(grpc.ServerInterceptor):
    """Records requests to command RPCs (authenticated calls only: install it innermost)."""

    def __init__(self, robot_limits: tuple[float, float, float] | None = None) -> None:
        self._lock = OrderedLock("command log", LEAF)
        self._commands: list[ReceivedCommand] = []
        self.robot_limits = robot_limits  # (vx, vy, wz) maxima the robot itself accepts

    def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method.rsplit("/", 1)[-1]
        handler = continuation(handler_call_details)
        if method not in COMMAND_METHODS:
            return handler

        def around(behaviour, request, context):
            recorded = request if isinstance(request, Message) else None
            with self._lock:
                self._commands.append(ReceivedCommand(method, recorded, time.monotonic()))
            return behaviour(request, context)

        return wrap_handler(handler, around)

    def commands(self, method: str | None = None) -> list[ReceivedCommand]:
        with self._lock:
            return [c for c in self._commands if method is None or c.method == method]

    def count(self, method: str | None = None) -> int:
        return len(self.commands(method))

    def problems(self, now_ns: int | None = None) -> list[str]:
        """Every invalid value in every recorded command, as 'Method: field: reason'."""
        out = []
        for command in self.commands():
            if command.request is not None:
                out += [f"{command.method}: {p}" for p in
                        invalid_values(command.request, now_ns, self.robot_limits)]
        return out


def invalid_values(message: Message, now_ns: int | None = None,
                   velocity_limits: tuple[float, float, float] | None = None,
                   path: str = "") -> list[str]:
    """Non-finite numbers, negative durations, non-unit quaternions, end times more than a day
    ahead of ``now_ns`` and body velocities beyond ``velocity_limits``, anywhere in
    ``message``."""
    problems = _value_problems(message, path, now_ns, velocity_limits)
    for field, value in message.ListFields():
        child = f"{path}.{field.name}" if path else field.name
        items = value if field.is_repeated else [value]
        for index, item in enumerate(items):
            item_path = f"{child}[{index}]" if field.is_repeated \
                else child
            if field.type in _FLOATS:
                if not math.isfinite(item):
                    problems.append(f"{item_path}: {item}")
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                if field.message_type.GetOptions().map_entry:
                    continue
                problems += invalid_values(item, now_ns, velocity_limits, item_path)
    return problems


def _value_problems(message: Message, path: str, now_ns: int | None,
                    velocity_limits: tuple[float, float, float] | None) -> list[str]:
    """What is wrong with ``message`` itself (not its fields) for its type."""
    name = message.DESCRIPTOR.full_name
    here = path or name
    if name == "google.protobuf.Duration" and (message.seconds < 0 or message.nanos < 0):
        return [f"{here}: negative duration"]
    if name == "bosdyn.api.Quaternion":
        norm = math.sqrt(message.w ** 2 + message.x ** 2 + message.y ** 2 + message.z ** 2)
        if norm and abs(norm - 1.0) > 1e-3:
            return [f"{here}: quaternion norm {norm:.4g}"]
    if (name == "google.protobuf.Timestamp" and now_ns is not None and path.endswith("end_time")
            and message.seconds * 10**9 + message.nanos - now_ns > MAX_END_TIME_AHEAD_NS):
        return [f"{here}: end time more than a day ahead"]
    if name == "bosdyn.api.SE2Velocity" and velocity_limits is not None and \
            path.endswith("se2_velocity_request.velocity"):
        values = (message.linear.x, message.linear.y, message.angular)
        if any(abs(v) > limit * 1.0001 for v, limit in zip(values, velocity_limits, strict=True)):
            return [f"{here}: velocity {values} beyond {velocity_limits}"]
    return []
