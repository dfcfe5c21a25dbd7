"""What a command kind is: one declaration with what the robot needs to run it, how a
RobotCommand of it is accepted, what it does when it starts and on every physics tick while
it is in charge, and the feedback the robot gives for it. ``spot_sim.body.kinds`` lists them.

The functions act on the robot's parts and run under the robot's lock (``SimRobot`` calls
``begin`` and ``step``; robot-command accepts and reads feedback as one step of the robot).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bosdyn.api import robot_command_pb2

from spot_sim.body import mobility
from spot_sim.body.base import Base
from spot_sim.body.commands import Command, Feedback, finish, reject
from spot_sim.body.legs import Legs
from spot_sim.body.mobility import Se2
from spot_sim.core.clock import timestamp_to_nsec

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot

Response = robot_command_pb2.RobotCommandResponse
MAX_VELOCITY_HORIZON_NS = 30 * 1_000_000_000  # end times further ahead are TOO_DISTANT


@dataclass(frozen=True)
class Acceptance:
    """What accepting a request reads besides the request: the robot (a ``SimRobot``, under
    its lock), whether the caller's clock is time-synced, and the robot's time now."""

    robot: Any
    clock_synced: bool
    now_ns: int


def no_end(ctx: Acceptance, request) -> None:
    """A command that runs until it is replaced (or finishes by itself)."""
    return None


def no_fields(ctx: Acceptance, request) -> dict:
    return {}


def halt(robot: SimRobot, command: Command, now_ns: int) -> None:
    with robot.parts(Base) as (base,):
        base.halt()


@dataclass(frozen=True)
class Kind:
    """One command kind. ``request``: its field in ``MobilityCommand.Request`` or (with
    ``full_body``) ``FullBodyCommand.Request``; None for a kind no RobotCommand names (a
    dance's). ``end`` and ``accept`` read the request into the command's end time and fields
    (they raise ``CommandRejectedError``); ``arm_task`` builds the arm task of a kind that
    moves the arm; ``begin`` and ``step`` drive the legs and base; ``feedback`` fills the
    command's part of RobotCommandFeedback (full body or mobility)."""

    name: str
    request: str | None = None
    full_body: bool = False
    needs_power: bool = True
    needs_arm: bool = False
    allowed_in_fault: bool = False
    license: str | None = None
    end: Callable[[Acceptance, Any], int | None] = no_end
    accept: Callable[[Acceptance, Any], dict] = no_fields
    arm_task: Callable[[Any, Any], Any] | None = None
    begin: Callable[[Any, Command, int], None] = halt
    step: Callable[[Any, Command, int], None] | None = None
    feedback: Callable[[Any, Command, int, Any], None] | None = None


# --- what several kinds share --------------------------------------------------------------
def stand_up(robot: SimRobot, now_ns: int) -> None:
    robot.start_posture(True, now_ns)


def end_time(ctx: Acceptance, request, *, horizon: bool = False) -> int:
    """A walking command's end time (client time turned robot time by the SDK): required,
    from a time-synced clock, not past, and (``horizon``) at most 30 s ahead."""
    if not request.HasField("end_time"):
        reject("end_time is required", Response.STATUS_INVALID_REQUEST)
    if not ctx.clock_synced:
        reject("no time sync for this clock identifier", Response.STATUS_NO_TIMESYNC)
    end_ns = timestamp_to_nsec(request.end_time)
    if end_ns < ctx.now_ns:
        reject("end_time is in the past", Response.STATUS_EXPIRED)
    if horizon and end_ns - ctx.now_ns > MAX_VELOCITY_HORIZON_NS:
        reject("end_time is too far ahead", Response.STATUS_TOO_DISTANT)
    return end_ns


def frame_pose(robot: SimRobot, frame: str) -> Se2:
    """odom_T_frame for the gravity-aligned frames commands may be expressed in."""
    if frame == "odom":
        return Se2()
    if frame == "vision":
        with robot.parts(Base) as (base,):
            return mobility.inverse(base.vision_odom)
    if frame in ("body", "flat_body"):
        return robot.odom_body()
    reject(f"unknown frame {frame!r}", Response.STATUS_UNKNOWN_FRAME)


def finite(values, what: str) -> None:
    if not all(math.isfinite(v) for v in values):
        reject(f"{what} is not finite", Response.STATUS_INVALID_REQUEST)


def expired(robot: SimRobot, command: Command, now_ns: int, status: int | None) -> bool:
    """Past its end time: the base halts and ``command`` ends with ``status``."""
    if command.end_ns is None or now_ns <= command.end_ns:
        return False
    halt(robot, command, now_ns)
    finish(command, status, now_ns)
    return True


def settled_in_place(robot: SimRobot, command: Command, now_ns: int) -> bool:
    """Whether ``command`` still drives the robot and the legs stand still, standing."""
    with robot.parts(Legs) as (legs,):
        posture = legs.posture
        return robot.in_charge(command.id) and posture.standing and not posture.moving(now_ns)


def present(name: str):
    """Feedback that only says which command it is (an empty message named ``name``)."""
    return lambda robot, command, now, fb: getattr(fb, name).SetInParent()


def completed_once_done(name: str, feedback):
    """Feedback ``name`` that says COMPLETED once the command is done, IN_PROGRESS before."""
    def fill(robot: SimRobot, command, now, fb) -> None:
        getattr(fb, name).status = feedback.STATUS_COMPLETED if command.done \
            else feedback.STATUS_IN_PROGRESS
    return fill


TIMED_OUT = Feedback.STATUS_COMMAND_TIMED_OUT
