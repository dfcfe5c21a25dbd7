"""Kinematics of the simulated Spot arm: joint limits, forward kinematics and inverse kinematics.

The arm is a chain of six revolute joints (``arm0.sh0`` .. ``arm0.wr1``) from the body to the
``hand`` frame, plus the gripper joint ``arm0.f1x``. Link offsets (approximating the published
Spot arm geometry) and limits come from ``urdf/spot_kinematics.yaml``, as the URDF's do; poses
are 4x4 homogeneous matrices in the body frame.
"""

import math

import numpy as np
from transforms3d.axangles import mat2axangle

from spot_sim.body.model import GEOMETRY

_ARM = GEOMETRY["arm"]
# Joint limits (rad) as documented for the Spot arm, in ARM_JOINTS order without f1x.
JOINT_LIMITS = np.array(_ARM["limits"], dtype=float)
GRIPPER_LIMITS = tuple(_ARM["gripper_limits"])  # f1x (rad): fully open .. closed
MAX_JOINT_SPEED = 2.5  # rad/s the planner allows for joint moves
STOW = np.array([0.0, -3.1, 3.1, 0.0, 0.0, 0.0])
READY = np.array([0.0, -0.9, 1.8, 0.0, -0.9, 0.0])
CARRY = np.array([0.0, -2.4, 2.6, 0.0, 0.9, 0.0])

LINKS = tuple(_ARM["links"])
# Joint origin in the parent link (m) and rotation axis, for each joint in chain order.
_ORIGINS = np.array(_ARM["origins"], dtype=float)
_AXES = "".join(_ARM["axes"])
WRIST_TO_HAND = np.array(_ARM["wrist_to_hand"], dtype=float)  # hand frame in arm0.link_wr1


def _rotation(axis: str, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    if axis == "x":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def translation(xyz) -> np.ndarray:
    out = np.eye(4)
    out[:3, 3] = xyz
    return out


def link_poses(q: np.ndarray) -> list[np.ndarray]:
    """body_T_link for the six arm links, then body_T_hand (seven 4x4 matrices)."""
    poses = []
    current = np.eye(4)
    for origin, axis, angle in zip(_ORIGINS, _AXES, q[:6], strict=True):
        step = np.eye(4)
        step[:3, :3] = _rotation(axis, float(angle))
        step[:3, 3] = origin
        current = current @ step
        poses.append(current)
    poses.append(current @ translation(WRIST_TO_HAND))
    return poses


def hand_pose(q: np.ndarray) -> np.ndarray:
    """body_T_hand for joint angles ``q``."""
    return link_poses(q)[-1]


def jacobian(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(6, 6) geometric Jacobian of the hand (linear; angular) in the body frame, and the hand
    pose."""
    poses = link_poses(q)
    hand = poses[-1][:3, 3]
    columns = []
    for pose, axis in zip(poses[:6], _AXES, strict=True):
        a = pose[:3, "xyz".index(axis)]
        columns.append(np.concatenate([np.cross(a, hand - pose[:3, 3]), a]))
    return np.stack(columns, axis=1), poses[-1]


def pose_error(current: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(6,) position error and rotation vector taking ``current`` to ``target`` (body frame)."""
    axis, angle = mat2axangle(target[:3, :3] @ current[:3, :3].T, unit_thresh=1e-5)
    return np.concatenate([target[:3, 3] - current[:3, 3], np.asarray(axis) * angle])


MAX_REACH_CHECK = 100.0  # m: targets farther than this are unreachable without solving


def within_limits(q: np.ndarray, margin: float = 1e-6) -> bool:
    q = np.asarray(q)[:6]
    return bool(np.all(q >= JOINT_LIMITS[:, 0] - margin) and
                np.all(q <= JOINT_LIMITS[:, 1] + margin))


def solve_ik(target: np.ndarray, seed: np.ndarray, position_tol: float = 1e-3,
             angle_tol: float = 0.5 * math.pi / 180,
             iterations: int = 150) -> tuple[np.ndarray, bool]:
    """Joint angles putting the hand at ``target`` (body_T_hand), within joint limits.

    Damped least squares from ``seed`` and a few standard postures; returns the best solution
    found and whether it is within the tolerances (False: the pose is unreachable).
    """
    best, best_cost = np.array(seed[:6], dtype=float), math.inf
    if not np.all(np.isfinite(target)) or np.abs(target[:3, 3]).max() > MAX_REACH_CHECK:
        return best, False  # far beyond any reach (and numerically unsafe)
    for start in (seed[:6], READY, CARRY, np.array([0.0, -0.3, 1.2, 0.0, 0.6, 0.0])):
        q = np.clip(np.array(start, dtype=float), JOINT_LIMITS[:, 0], JOINT_LIMITS[:, 1])
        for _ in range(iterations):
            jac, pose = jacobian(q)
            error = pose_error(pose, target)
            if np.linalg.norm(error[:3]) < position_tol and np.linalg.norm(error[3:]) < angle_tol:
                return q, True
            step = jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(6), error)
            q = np.clip(q + np.clip(step, -0.3, 0.3), JOINT_LIMITS[:, 0], JOINT_LIMITS[:, 1])
        error = pose_error(hand_pose(q), target)
        cost = np.linalg.norm(error[:3]) + 0.2 * np.linalg.norm(error[3:])
        if cost < best_cost:
            best, best_cost = q, cost
    return best, False


def track(target: np.ndarray, q: np.ndarray, max_step: float, iterations: int = 3,
          position_tol: float = 1e-4) -> np.ndarray:
    """Joint angles a little nearer ``target`` (body_T_hand) from ``q``: a few damped
    least-squares steps, each joint moving at most ``max_step`` in all, within limits."""
    start = np.array(q[:6], dtype=float)
    out = start.copy()
    for _ in range(iterations):
        jac, pose = jacobian(out)
        error = pose_error(pose, target)
        if np.linalg.norm(error[:3]) < position_tol and np.linalg.norm(error[3:]) < 1e-3:
            break
        step = jac.T @ np.linalg.solve(jac @ jac.T + 1e-3 * np.eye(6), error)
        out = np.clip(start + np.clip(out + step - start, -max_step, max_step),
                      JOINT_LIMITS[:, 0], JOINT_LIMITS[:, 1])
    return out
