"""Joint mode's rules on the whole robot: engaging takes the legs (and arm) from the other
controllers, a joint over the stream's speed limit is a behaviour fault, and a stream that
stops hands the legs back to the stand controller.

Functions of the robot's parts, called by ``SimRobot`` under its lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from bosdyn.api import robot_state_pb2
from bosdyn.client.math_helpers import SE3Pose

from spot_sim.body.arm.model import Arm
from spot_sim.body.base import Base
from spot_sim.body.commands import CommandBook, Feedback, finish
from spot_sim.body.faults import Faults
from spot_sim.body.legs import Legs
from spot_sim.body.mobility import Se2

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot

FALL_LIE_DOWN_S = 0.3  # a fall or a joint fault puts the body down this fast


@dataclass(frozen=True)
class JointSample:
    """What one message of the state stream reports, read at one instant."""

    now_ns: int
    q: np.ndarray
    qd: np.ndarray
    load: np.ndarray
    odom_tform_body: SE3Pose
    vision_tform_body: SE3Pose
    velocity: Se2  # in the body frame
    acceleration: tuple[float, float]
    odom_yaw: float
    vision_yaw: float
    imu_packets: list[int]
    last_key: int
    last_key_ns: int


def step(robot: SimRobot, now: int) -> None:
    """Run the servo law up to ``now`` (the physics loop, and every state-stream sample)."""
    with robot.parts(Legs, Arm, CommandBook) as (legs, arm, book):
        _step(robot, legs, arm, book, now)


def _step(robot: SimRobot, legs: Legs, arm: Arm | None, book: CommandBook, now: int) -> None:
    mode = legs.joint_mode
    if not mode.armed:
        return
    if not mode.engaged:
        q, qd = robot.joint_positions()
        if not mode.engage(q, qd, now):
            return
        legs.swing = np.zeros_like(legs.swing)
        if mode.drives_arm:
            robot.halt_arm()
    servo = mode.servo
    setpoint = servo.setpoint
    expired = now > setpoint.end_ns
    fastest = servo.advance(min(now, setpoint.end_ns), legs.supported)
    legs.posture.joints = servo.q[:12].copy()
    legs.velocity = servo.qd[:12].copy()
    if mode.drives_arm:
        arm.q, arm.qd = servo.q[12:18].copy(), servo.qd[12:18].copy()
        arm.gripper, arm.gripper_velocity = float(servo.q[18]), float(servo.qd[18])
    command = book.commands.get(mode.command_id)
    if setpoint.velocity_limit is not None and fastest > setpoint.velocity_limit:
        _fault(robot, now)
    elif expired:  # commands stopped: the stand controller takes the robot back
        if command is not None and not command.done:
            finish(command, Feedback.STATUS_COMMAND_TIMED_OUT, now)
        leave(legs, now)


def leave(legs, now: int) -> None:
    """Joint mode ends: the legs go back to standing from where they are."""
    mode = legs.joint_mode
    if not mode.armed:
        return
    was_engaged = mode.engaged
    mode.disarm()
    if was_engaged:
        legs.return_to_stand(now)


def _fault(robot: SimRobot, now: int) -> None:
    """A joint passed the stream's velocity_safety_limit: a behaviour fault, and the robot
    lies down with its motors on until the fault is cleared or power is cut."""
    with robot.parts(Faults, CommandBook, Legs) as (faults, book, legs):
        faults.add(book.next_id(), robot_state_pb2.BehaviorFault.CAUSE_COMMAND_FAILURE,
                   robot.clock.timestamp(now))
        mode = legs.joint_mode
        command = book.commands.get(mode.command_id)
        if command is not None and not command.done:
            finish(command, Feedback.STATUS_COMMAND_OVERRIDDEN, now)
        mode.disarm()
        legs.start_posture(False, now, FALL_LIE_DOWN_S)


def receive(robot: SimRobot, update, gains_known: bool, now_ns: int) -> bool:
    """One JointControlStream update: checked against the robot as it is (raises
    ``StreamRefusedError``), then offered to the servo, as one step of the robot. Whether
    joint mode is engaged."""
    with robot.parts(Legs) as (legs,):
        mode = legs.joint_mode
        mode.last_key, mode.last_key_ns = update.user_command_key, now_ns
        q, _ = robot.joint_positions()
        mode.offer(mode.receive(update, gains_known, now_ns, np.asarray(q)))
        step(robot, robot.clock.now_nsec())
        return mode.engaged


def sample(robot: SimRobot, imu_after_ns: int | None) -> JointSample:
    """The state stream's view of the robot now, after stepping the servo to it (one step of
    the robot)."""
    with robot.parts(Legs, Base) as (legs, base):
        now = robot.clock.now_nsec()
        step(robot, now)
        q, qd = robot.joint_positions()
        odom_tform_body, vision_tform_body = robot.body_poses()
        mode = legs.joint_mode
        return JointSample(now, q, qd, robot.joint_loads(), odom_tform_body, vision_tform_body,
                           base.velocity, base.acceleration, base.odom_body.yaw,
                           base.vision_body().yaw, mode.imu.samples(imu_after_ns, now),
                           mode.last_key, mode.last_key_ns)
