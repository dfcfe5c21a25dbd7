"""Joint trajectories for Spot's arm: validation, splitting into robot-sized pieces, tolerances.

Plain numpy, no ROS and no robot: the FollowJointTrajectory and joint-move actions use these
to refuse bad goals before anything is sent, and to judge progress from measured joints.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from spot_driver.core.errors import CommandError
from spot_driver.description import robot_model

ARM_JOINTS = ("arm0.sh0", "arm0.sh1", "arm0.el0", "arm0.el1", "arm0.wr0", "arm0.wr1")
GRIPPER_JOINT = "arm0.f1x"
# The same joints as named in joint_states and the URDF (before the driver's frame prefix).
URDF_ARM_JOINTS = tuple(name.replace("arm0.", "arm_") for name in ARM_JOINTS)
URDF_GRIPPER_JOINT = "arm_f1x"
# Joint limits (rad) of Spot's arm, in ARM_JOINTS order, and the open gripper: from the robot
# model (urdf/spot_kinematics.yaml), as the URDF's.
LIMITS = robot_model.arm_limits()
GRIPPER_OPEN = robot_model.gripper_open()  # rad, arm0.f1x fully open (0 is closed)
MAX_POINTS = 250  # the most points the robot accepts in one arm joint trajectory

# control_msgs/FollowJointTrajectory result codes.
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5


class TrajectoryError(CommandError, ValueError):
    """A trajectory goal the driver refuses; ``code`` is the FollowJointTrajectory error code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.result_values = {"error_code": code}


@dataclass(frozen=True)
class ArmTrajectory:
    """Arm joint points in ARM_JOINTS order: times (N,) s from the start, positions (N, 6),
    velocities (N, 6) or None."""

    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    def desired(self, t: float) -> np.ndarray:
        """Positions at ``t`` s from the start (linear between points, held outside)."""
        return np.array([np.interp(t, self.times, self.positions[:, j]) for j in range(6)])


def joint_index(name: str, prefix: str = "") -> int | None:
    """Position in ARM_JOINTS of a joint named as in joint_states (``prefix`` + URDF name)
    or as the robot names it; None for other names."""
    bare = name[len(prefix):] if prefix and name.startswith(prefix) else name
    for table in (URDF_ARM_JOINTS, ARM_JOINTS):
        if bare in table:
            return table.index(bare)
    return None


def joint_order(names: Sequence[str], prefix: str = "") -> list[int]:
    """Index into ``names`` of each arm joint, in ARM_JOINTS order (TrajectoryError otherwise).

    Joints may be named as in joint_states (``prefix`` + ``arm_sh0`` ...) or as the robot
    names them (``arm0.sh0`` ...).
    """
    names = list(names)
    indices = [joint_index(n, prefix) for n in names]
    expected = [prefix + n for n in URDF_ARM_JOINTS]
    gripper = [n for n in names if n.removeprefix(prefix) in (URDF_GRIPPER_JOINT, GRIPPER_JOINT)]
    if gripper:
        raise TrajectoryError(INVALID_JOINTS, f"{gripper[0]} is the gripper; command it "
                              "with the gripper action")
    unknown = [n for n, i in zip(names, indices, strict=True) if i is None]
    known = [i for i in indices if i is not None]
    if len(set(known)) != len(known):
        raise TrajectoryError(INVALID_JOINTS, f"joint names repeat: {names}")
    missing = [expected[j] for j in range(6) if j not in known]
    if unknown or missing:
        parts = []
        if unknown:
            parts.append(f"unknown joint_names {unknown}")
        if missing:
            parts.append(f"missing joints {missing}")
        raise TrajectoryError(INVALID_JOINTS, "; ".join(parts) +
                              f"; the arm's joints are {expected}")
    return [indices.index(j) for j in range(6)]


def check_positions(positions: np.ndarray, where: str = "") -> None:
    """Finite and within the joint limits (TrajectoryError INVALID_GOAL otherwise)."""
    if not np.all(np.isfinite(positions)):
        raise TrajectoryError(INVALID_GOAL, f"joint positions{where} are not finite")
    low, high = LIMITS[:, 0], LIMITS[:, 1]
    for j in range(6):
        value = float(positions[j])
        if not low[j] - 1e-9 <= value <= high[j] + 1e-9:
            raise TrajectoryError(
                INVALID_GOAL, f"{URDF_ARM_JOINTS[j]} = {value:.3f} rad{where} is outside its "
                f"limits [{low[j]:.3f}, {high[j]:.3f}]")


def arm_trajectory(names: Sequence[str], times: Sequence[float],
                   positions: Sequence[Sequence[float]],
                   velocities: Sequence[Sequence[float]], prefix: str = "") -> ArmTrajectory:
    """Validate a joint trajectory and reorder it to ARM_JOINTS.

    ``velocities`` per point may be empty (unconstrained); when some points give them, all must.
    """
    order = joint_order(names, prefix)
    if not times:
        raise TrajectoryError(INVALID_GOAL, "the trajectory has no points")
    t = np.asarray(times, dtype=float)
    if not np.all(np.isfinite(t)) or t[0] < 0:
        raise TrajectoryError(INVALID_GOAL, "point times must be finite and not negative")
    if np.any(np.diff(t) <= 0):
        index = int(np.argmax(np.diff(t) <= 0)) + 1
        raise TrajectoryError(INVALID_GOAL, f"point {index} is not later than the point before "
                              "it (time_from_start must increase)")
    rows = []
    for index, point in enumerate(positions):
        if len(point) != len(names):
            raise TrajectoryError(INVALID_GOAL, f"point {index} has {len(point)} positions for "
                                  f"{len(names)} joints")
        row = np.asarray(point, dtype=float)[order]
        check_positions(row, f" at point {index}")
        rows.append(row)
    given = [len(v) > 0 for v in velocities]
    vel = None
    if any(given):
        if not all(given) or any(len(v) != len(names) for v in velocities):
            raise TrajectoryError(INVALID_GOAL, "velocities must be given for every joint of "
                                  "every point, or for none")
        vel = np.asarray(velocities, dtype=float)[:, order]
        if not np.all(np.isfinite(vel)):
            raise TrajectoryError(INVALID_GOAL, "joint velocities are not finite")
    return ArmTrajectory(t, np.array(rows), vel)


def segments(count: int, max_points: int = MAX_POINTS) -> list[tuple[int, int]]:
    """[start, end) index ranges of at most ``max_points`` points covering ``count`` points;
    each piece starts at the last point of the one before, so the arm passes through it."""
    if count <= max_points:
        return [(0, count)]
    pieces, start = [], 0
    while start < count - 1:
        end = min(start + max_points, count)
        pieces.append((start, end))
        start = end - 1
    return pieces


@dataclass(frozen=True)
class Tolerances:
    """Per-joint position tolerances (rad) in ARM_JOINTS order; inf where unchecked."""

    path: np.ndarray
    goal: np.ndarray
    goal_time: float

    @classmethod
    def from_goal(cls, path: Sequence[tuple[str, float]], goal: Sequence[tuple[str, float]],
                  goal_time: float, default_goal: float,
                  default_goal_time: float, prefix: str = "") -> "Tolerances":
        """From (joint name, position tolerance) pairs: 0 keeps the default, -1 removes it."""
        def table(entries, default: float) -> np.ndarray:
            values = np.full(6, default)
            for name, tolerance in entries:
                index = joint_index(name, prefix)
                if index is None:
                    raise TrajectoryError(INVALID_JOINTS, f"tolerance for unknown joint {name!r}")
                if not math.isfinite(tolerance):
                    raise TrajectoryError(INVALID_GOAL, f"tolerance of {name} is not finite")
                if tolerance < 0:
                    values[index] = math.inf
                elif tolerance > 0:
                    values[index] = tolerance
            return values

        if not math.isfinite(goal_time) or goal_time < 0:
            raise TrajectoryError(INVALID_GOAL, "goal_time_tolerance must not be negative")
        return cls(table(path, math.inf), table(goal, default_goal),
                   goal_time if goal_time > 0 else default_goal_time)


def violation(error: np.ndarray, tolerance: np.ndarray) -> str | None:
    """Which joint is beyond its tolerance and by how much, or None."""
    excess = np.abs(error) - tolerance
    if not np.any(excess > 0):
        return None
    j = int(np.argmax(excess))
    return (f"{URDF_ARM_JOINTS[j]} is {abs(float(error[j])):.4f} rad from its setpoint "
            f"(tolerance {float(tolerance[j]):.4f})")
