"""Kinds the arm leads: follow-arm (the body walks to stand at its offset behind the hand's
goal) and constrained manipulation (the hand moves a grasped object along its constraint,
``spot_sim.body.arm.modes``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from spot_sim.body import mobility
from spot_sim.body.arm import kinematics as arm_kinematics
from spot_sim.body.arm import modes as arm_modes
from spot_sim.body.arm.model import Arm
from spot_sim.body.base import Base
from spot_sim.body.commands import reject
from spot_sim.body.kinds.kind import (
    TIMED_OUT,
    Acceptance,
    Kind,
    Response,
    expired,
    finite,
    halt,
    present,
    stand_up,
)
from spot_sim.body.legs import Legs
from spot_sim.core.clock import timestamp_to_nsec

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot


def _begin(robot: SimRobot, command, now: int) -> None:
    stand_up(robot, now)
    halt(robot, command, now)


def _offset(ctx: Acceptance, request) -> dict:
    """The body's offset from the hand (x, y in the body frame, m): the request's, or by
    default where the hand is at the arm's ready pose."""
    offset = request.body_offset_from_hand
    finite((offset.x, offset.y, offset.z), "body_offset_from_hand")
    if request.HasField("body_offset_from_hand"):
        return {"details": {"offset": (offset.x, offset.y)}}
    hand = arm_kinematics.hand_pose(arm_kinematics.READY)
    return {"details": {"offset": (float(hand[0, 3]), float(hand[1, 3]))}}


def _step_follow_arm(robot: SimRobot, command, now: int) -> None:
    """The body walks to stand at its offset behind a hand goal held in the world (a
    Cartesian arm command in odom or vision), facing it; otherwise it stands."""
    with robot.parts(Arm, Base, Legs) as (arm, base, legs):
        _follow(robot, command, arm, base, legs, now)


def _follow(robot: SimRobot, command, arm: Arm | None, base: Base, legs: Legs, now: int) -> None:
    task = arm.task if arm is not None else None
    if task is None or task.world_anchor is None or task.overridden or not legs.standing(now):
        base.halt()
        return
    hand = mobility.compose(task.world_anchor, mobility.Se2(
        float(task.world_goal_hand[0, 3]), float(task.world_goal_hand[1, 3]), 0.0))
    body = base.odom_body
    distance = math.hypot(hand.x - body.x, hand.y - body.y)
    yaw = math.atan2(hand.y - body.y, hand.x - body.x) if distance > 0.1 else body.yaw
    off_x, off_y = command.details["offset"]
    c, s = math.cos(yaw), math.sin(yaw)
    goal = mobility.Se2(hand.x - c * off_x + s * off_y, hand.y - s * off_x - c * off_y, yaw)
    if mobility.goal_reached(body, goal):
        base.halt()
        return
    config = robot.config
    base.target_velocity = mobility.goal_velocity(body, goal, base.velocity,
                                                  base.velocity_limit, config.max_linear_accel,
                                                  config.max_angular_accel)


def _constrained_end(ctx: Acceptance, request) -> int:
    end_ns = timestamp_to_nsec(request.end_time)  # robot time, set by the caller
    if end_ns < ctx.now_ns:
        reject("end_time is in the past", Response.STATUS_EXPIRED)
    return end_ns


def _step_constrained(robot: SimRobot, command, now: int) -> None:
    expired(robot, command, now, TIMED_OUT)


def _constrained_feedback(robot: SimRobot, command, now: int, fb) -> None:
    with robot.parts(Arm) as (arm,):
        task = arm.tasks.get(command.id) if arm is not None else None
    if task is not None:
        arm_modes.fill_constrained_feedback(robot, task, fb)


KINDS = (
    Kind("follow_arm", "follow_arm_request", needs_arm=True, accept=_offset, begin=_begin,
         step=_step_follow_arm, feedback=present("follow_arm_feedback")),
    Kind("constrained_manipulation", "constrained_manipulation_request", full_body=True,
         needs_arm=True, end=_constrained_end,
         arm_task=lambda robot, request: arm_modes.constrained_task(robot, 0, request),
         begin=_begin, step=_step_constrained, feedback=_constrained_feedback),
)
