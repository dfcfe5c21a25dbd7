"""Kinds that change the body's posture: stand, sit, self-right, and the two that lower the
body before something else (safe power off cuts power once down; battery change pose is done
once down)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bosdyn.api import basic_command_pb2 as basic

from spot_sim.body.base import Base
from spot_sim.body.commands import finish
from spot_sim.body.kinds.kind import Kind, completed_once_done, halt, settled_in_place, stand_up
from spot_sim.body.legs import Legs
from spot_sim.body.power import MotorPower, Power

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot


def _begin_stand(robot: SimRobot, command, now: int) -> None:
    stand_up(robot, now)
    halt(robot, command, now)


def _begin_lowering(robot: SimRobot, command, now: int) -> None:
    """Sit, safe power off, battery change pose: halt, and lower the body once still."""
    with robot.parts(Base, Legs) as (base, legs):
        base.halt()
        if base.still:
            legs.start_posture(False, now)


def _step_lowering(robot: SimRobot, command, now: int) -> None:
    """Once still, lower the body; safe power off then cuts power, battery change pose is
    done once down."""
    with robot.parts(Base, Legs, Power) as (base, legs, power):
        posture = legs.posture
        if base.still and posture.standing:
            legs.start_posture(False, now)
        down = not posture.moving(now)
        if (command.kind == "safe_power_off" and not posture.standing and down
                and power.on):
            finish(command, None, now)  # completed: cutting power is its last step
            robot.cut_motors(now)
        if command.kind == "battery_change_pose" and down:
            command.done = True


def _begin_selfright(robot: SimRobot, command, now: int) -> None:
    with robot.parts(Base, Legs) as (base, legs):
        base.halt()
        legs.start_posture(False, now, robot.config.self_right_sec)


def _step_selfright(robot: SimRobot, command, now: int) -> None:
    with robot.parts(Legs) as (legs,):
        if not legs.posture.moving(now):
            command.done = True


def _stand_feedback(robot: SimRobot, command, now: int, fb) -> None:
    Stand = basic.StandCommand.Feedback
    fb.stand_feedback.status = Stand.STATUS_IS_STANDING \
        if settled_in_place(robot, command, now) else Stand.STATUS_IN_PROGRESS
    fb.stand_feedback.standing_state = Stand.STANDING_CONTROLLED


def _sit_feedback(robot: SimRobot, command, now: int, fb) -> None:
    Sit = basic.SitCommand.Feedback
    with robot.parts(Legs) as (legs,):
        posture = legs.posture
    fb.sit_feedback.status = Sit.STATUS_IS_SITTING \
        if not posture.standing and not posture.moving(now) else Sit.STATUS_IN_PROGRESS


def _safe_power_off_feedback(robot: SimRobot, command, now: int, fb) -> None:
    Off = basic.SafePowerOffCommand.Feedback
    with robot.parts(Power) as (power,):
        fb.safe_power_off_feedback.status = Off.STATUS_POWERED_OFF \
            if power.state == MotorPower.STATE_OFF else Off.STATUS_IN_PROGRESS


KINDS = (
    Kind("stand", "stand_request", begin=_begin_stand, feedback=_stand_feedback),
    Kind("sit", "sit_request", begin=_begin_lowering, step=_step_lowering,
         feedback=_sit_feedback),
    Kind("safe_power_off", "safe_power_off_request", full_body=True, needs_power=False,
         allowed_in_fault=True, begin=_begin_lowering, step=_step_lowering,
         feedback=_safe_power_off_feedback),
    Kind("battery_change_pose", "battery_change_pose_request", full_body=True,
         begin=_begin_lowering, step=_step_lowering,
         feedback=completed_once_done("battery_change_pose_feedback",
                                      basic.BatteryChangePoseCommand.Feedback)),
    Kind("selfright", "selfright_request", full_body=True, allowed_in_fault=True,
         begin=_begin_selfright, step=_step_selfright,
         feedback=completed_once_done("selfright_feedback", basic.SelfRightCommand.Feedback)),
)
