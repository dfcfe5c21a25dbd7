"""The joint kind (the joint-control API's JointCommand): the base halts and the legs enter
joint mode for this command; the joint streams drive them from there
(``spot_sim.low_level``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bosdyn.api import basic_command_pb2 as basic

from spot_sim.body.base import Base
from spot_sim.body.kinds.kind import Kind
from spot_sim.body.legs import Legs

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot


def _begin(robot: SimRobot, command, now: int) -> None:
    with robot.parts(Base, Legs) as (base, legs):
        base.halt()
        legs.joint_mode.arm(command.id, now)


def _feedback(robot: SimRobot, command, now: int, fb) -> None:
    Joint = basic.JointCommand.Feedback
    with robot.parts(Legs) as (legs,):
        fb.joint_feedback.status = Joint.STATUS_ACTIVE \
            if legs.joint_mode.command_id == command.id else Joint.STATUS_UNKNOWN


KINDS = (Kind("joint", "joint_request", full_body=True, license="joint_control", begin=_begin,
              feedback=_feedback),)
