"""What the body reports, read at one instant: frozen values (arrays read-only), so a reader
such as robot-state builds its answer outside the robot's lock and can change nothing."""

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from bosdyn.api import geometry_pb2, robot_state_pb2

from spot_sim.body.arm import kinematics as ak
from spot_sim.body.mobility import Se2


def frozen(values: np.ndarray) -> np.ndarray:
    """A read-only copy of ``values``."""
    out = np.array(values, dtype=float)
    out.flags.writeable = False
    return out


def copied(messages: Iterable) -> tuple:
    """Copies of protobuf ``messages`` (a reader's own, to change as it likes)."""
    out = []
    for message in messages:
        copy = type(message)()
        copy.CopyFrom(message)
        out.append(copy)
    return tuple(out)


@dataclass(frozen=True)
class Motion:
    """Where the body is and how it moves, at one instant."""

    odom_body: Se2
    vision_body: Se2
    velocity: Se2  # vx, vy in the body frame, yaw rate
    blocked: bool  # an obstacle or a no-go region stopped it


@dataclass(frozen=True)
class ArmReading:
    """The arm and gripper at one instant: what a planner starts from and what the robot's
    state reports (hand velocity and contact force in the body frame)."""

    q: np.ndarray  # the six arm joints
    gripper: float  # rad
    open_percentage: float
    holding: bool
    stowed: bool
    carry_state: int
    hand_velocity: np.ndarray  # linear then angular, in the body frame
    contact_force: np.ndarray  # N, in the body frame

    def hand(self) -> np.ndarray:
        """body_T_hand (4x4)."""
        return ak.hand_pose(self.q)


@dataclass(frozen=True)
class BodyReading:
    """The body at ``now_ns`` (robot time): where it is and how it moves, its joints (legs,
    then the arm's), feet, frame tree, power, battery and faults."""

    now_ns: int
    odom_body: Se2
    vision_body: Se2
    velocity: Se2  # vx, vy in the body frame, yaw rate
    joint_positions: np.ndarray
    joint_velocities: np.ndarray
    joint_loads: np.ndarray
    feet: np.ndarray  # 4x3, in the body frame
    frames: geometry_pb2.FrameTreeSnapshot  # built for this reading: the tree, rooted at body
    motor_power_state: int
    powered: bool
    battery_percent: float
    battery_runtime_sec: float
    shore_power: bool
    behavior_faults: tuple[robot_state_pb2.BehaviorFault, ...]
    system_faults: tuple[robot_state_pb2.SystemFault, ...]
    arm: ArmReading | None
