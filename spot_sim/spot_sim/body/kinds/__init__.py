"""Every kind of command the simulated robot runs, each declared once (``kind.Kind``) in the
module of its family, with what the robot needs to run it, how a RobotCommand of it is
accepted, what it does when it starts and on each physics tick, and its feedback.
robot-command (``spot_sim.body.robot_command_service``) adapts the protobuf to these."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spot_sim.body import joint_rules
from spot_sim.body.arm.model import Arm
from spot_sim.body.commands import Command, CommandBook, CommandRejectedError
from spot_sim.body.kinds import arm_led, holding, joint, posture, stance, walk
from spot_sim.body.kinds.kind import Kind, Response
from spot_sim.body.legs import Legs

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot

KINDS: dict[str, Kind] = {k.name: k for module in (posture, holding, walk, stance, joint,
                                                   arm_led) for k in module.KINDS}
_BY_REQUEST = {(k.full_body, k.request): k for k in KINDS.values() if k.request}


def classify(command) -> tuple[Kind | None, object]:
    """(kind, its request message) of a RobotCommand, or (None, why it is unsupported)."""
    which = command.WhichOneof("command")
    if which == "full_body_command":
        field = command.full_body_command.WhichOneof("command")
        kind = _BY_REQUEST.get((True, field))
        if kind is not None:
            return kind, getattr(command.full_body_command, field)
        return None, f"full body command {field!r} is not supported"
    if which == "synchronized_command":
        mobility = command.synchronized_command.mobility_command
        field = mobility.WhichOneof("command")
        kind = _BY_REQUEST.get((False, field))
        if kind is not None:
            return kind, getattr(mobility, field)
        return None, f"mobility command {field!r} is not supported"
    return None, "empty command"


def check_allowed(robot: SimRobot, kind: Kind | None, manipulator: bool) -> None:
    """Raise CommandRejectedError unless the robot can run a command of ``kind`` (None: no
    mobility part) with or without an arm/gripper part: hardware, license, faults, power."""
    license = robot.license
    manipulator = manipulator or (kind is not None and kind.needs_arm)
    with robot.parts(Arm) as (arm,):
        armless = arm is None
    if manipulator and armless:
        raise CommandRejectedError(Response.STATUS_UNSUPPORTED, "this robot has no arm")
    if manipulator and not license.allows("arm"):
        raise CommandRejectedError(Response.STATUS_UNSUPPORTED, license.refusal("arm"))
    if kind is not None and kind.license and not license.allows(kind.license):
        raise CommandRejectedError(Response.STATUS_UNSUPPORTED, license.refusal(kind.license))
    if robot.active_fault() and (manipulator or kind is None or not kind.allowed_in_fault):
        raise CommandRejectedError(Response.STATUS_BEHAVIOR_FAULT,
                                   "the robot has an active behavior fault")
    if (manipulator or kind.needs_power) and not robot.powered:
        raise CommandRejectedError(Response.STATUS_NOT_POWERED_ON, "motor power is off")


def begin(robot: SimRobot, command: Command, now_ns: int) -> None:
    """A mobility command starts: joint mode and a constrained manipulation in progress end,
    then its kind aims the legs and base."""
    with robot.parts(Legs, Arm) as (legs, arm):
        joint_rules.leave(legs, now_ns)
        if arm is not None and arm.task is not None and arm.task.kind == "constrained" and \
                not arm.task.done:
            arm.task.overridden = arm.task.done = True
    KINDS[command.kind].begin(robot, command, now_ns)


def step(robot: SimRobot, now_ns: int) -> None:
    """One physics tick of the mobility command in charge, if it is still running."""
    with robot.parts(CommandBook) as (book,):
        command = book.mobility
    if command is None or command.done:
        return
    kind = KINDS[command.kind]
    if kind.step is not None:
        kind.step(robot, command, now_ns)
