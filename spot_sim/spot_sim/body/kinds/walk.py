"""Kinds that walk the body: an SE2 velocity until its end time, and an SE2 trajectory to
its last point's pose."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from bosdyn.api import basic_command_pb2 as basic

from spot_sim.body import mobility
from spot_sim.body.base import Base
from spot_sim.body.commands import reject
from spot_sim.body.kinds.kind import (
    TIMED_OUT,
    Acceptance,
    Kind,
    Response,
    end_time,
    expired,
    finite,
    frame_pose,
    present,
    stand_up,
)
from spot_sim.body.legs import Legs
from spot_sim.body.mobility import Se2

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot


def _velocity(ctx: Acceptance, request) -> dict:
    """The velocity in the body frame."""
    v = request.velocity
    values = (v.linear.x, v.linear.y, v.angular)
    finite(values, "velocity")
    frame_yaw = frame_pose(ctx.robot, request.se2_frame_name or "body").yaw
    relative_yaw = frame_yaw - ctx.robot.odom_body().yaw
    c, s = math.cos(relative_yaw), math.sin(relative_yaw)
    return {"velocity": Se2(c * values[0] - s * values[1], s * values[0] + c * values[1],
                            values[2])}


def _begin_velocity(robot: SimRobot, command, now: int) -> None:
    stand_up(robot, now)
    with robot.parts(Base) as (base,):
        base.drive(command.velocity)


def _step_velocity(robot: SimRobot, command, now: int) -> None:
    expired(robot, command, now, TIMED_OUT)  # "the command expired"


def _goal(ctx: Acceptance, request) -> dict:
    """The trajectory's last pose, in odom."""
    points = request.trajectory.points
    if not points:
        reject("trajectory has no points", Response.STATUS_INVALID_REQUEST)
    pose = points[-1].pose
    values = (pose.position.x, pose.position.y, pose.angle)
    finite(values, "goal")
    return {"goal": mobility.compose(frame_pose(ctx.robot, request.se2_frame_name),
                                     Se2(*values))}


def _begin_trajectory(robot: SimRobot, command, now: int) -> None:
    stand_up(robot, now)


def _step_trajectory(robot: SimRobot, command, now: int) -> None:
    """Walk to the goal while standing; at the end time a goal not reached has TIMED_OUT
    (a reached one stays as it was)."""
    reached = mobility.goal_reached(robot.odom_body(), command.goal)
    if expired(robot, command, now, None if reached else TIMED_OUT):
        return
    with robot.parts(Base, Legs) as (base, legs):
        if reached:
            base.halt()
        elif legs.standing(now):
            config = robot.config
            base.target_velocity = mobility.goal_velocity(
                base.odom_body, command.goal, base.velocity, base.velocity_limit,
                config.max_linear_accel, config.max_angular_accel)


def _trajectory_feedback(robot: SimRobot, command, now: int, fb) -> None:
    Traj = basic.SE2TrajectoryCommand.Feedback
    traj = fb.se2_trajectory_feedback
    with robot.parts(Base) as (base,):
        body, moving, blocked = base.odom_body, base.velocity != Se2(), base.blocked
    distance, _ = mobility.distance_to(body, command.goal)
    if mobility.goal_reached(body, command.goal):
        traj.status = Traj.STATUS_AT_GOAL
    elif distance < mobility.NEAR_GOAL_DIST:
        traj.status = Traj.STATUS_NEAR_GOAL
    else:
        traj.status = Traj.STATUS_GOING_TO_GOAL
    traj.body_movement_status = Traj.BODY_STATUS_MOVING if moving else Traj.BODY_STATUS_SETTLED
    traj.final_goal_status = Traj.FINAL_GOAL_STATUS_BLOCKED if blocked \
        else Traj.FINAL_GOAL_STATUS_ACHIEVABLE  # a no-go region stopped the walk


KINDS = (
    Kind("velocity", "se2_velocity_request",
         end=lambda ctx, request: end_time(ctx, request, horizon=True), accept=_velocity,
         begin=_begin_velocity, step=_step_velocity,
         feedback=present("se2_velocity_feedback")),
    Kind("trajectory", "se2_trajectory_request", end=end_time, accept=_goal,
         begin=_begin_trajectory, step=_step_trajectory, feedback=_trajectory_feedback),
)
