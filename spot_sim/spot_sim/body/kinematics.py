"""Fixed geometry of the simulated Spot: leg kinematics, joint names and sensor mounts, from
``urdf/spot_kinematics.yaml`` (the URDF's source too)."""

import math

import numpy as np

from spot_sim.body.model import GEOMETRY, pose

LEGS = ("fl", "fr", "hl", "hr")
LEG_JOINTS = tuple(f"{leg}.{j}" for leg in LEGS for j in ("hx", "hy", "kn"))
ARM_JOINTS = ("arm0.sh0", "arm0.sh1", "arm0.el0", "arm0.el1", "arm0.wr0", "arm0.wr1", "arm0.f1x")

_LEGS = GEOMETRY["legs"]
HIP_X = _LEGS["hip_x"]  # m, hips ahead of / behind the body origin
HIP_Y = _LEGS["hip_y"]  # m, hip_x joints beside the centre line
UPPER_LEG_Y = _LEGS["upper_leg_y"]  # m, hip_x joint -> hip_y joint, sideways
KNEE = np.array(_LEGS["knee"], dtype=float)  # hip_y joint -> knee, in the upper leg
LOWER_LEG = _LEGS["foot"]  # m, knee -> foot centre
UPPER_LEG = float(math.hypot(KNEE[0], KNEE[2]))  # m, hip_y joint -> knee
_KNEE_LEAN = math.atan2(KNEE[0], -KNEE[2])  # the knee sits this far ahead of straight down

STAND_HEIGHT = 0.52  # m, body origin above the ground when standing at zero offset
SIT_HEIGHT = 0.18  # m
MIN_HEIGHT_OFFSET = -0.15  # m, body height offset range the robot accepts
MAX_HEIGHT_OFFSET = 0.15


def leg_angles_for_height(height: float) -> tuple[float, float]:
    """Hip pitch and knee angle (rad) that put the foot ``height`` straight below the hip_y
    joint (the knee sits ``KNEE[0]`` ahead of the upper leg's axis)."""
    reach = min(max(height, 0.05), UPPER_LEG + LOWER_LEG - 1e-3)
    cos_knee = (reach**2 - UPPER_LEG**2 - LOWER_LEG**2) / (2 * UPPER_LEG * LOWER_LEG)
    knee = -math.acos(max(-1.0, min(1.0, cos_knee)))
    hip = math.atan2(-LOWER_LEG * math.sin(knee), UPPER_LEG + LOWER_LEG * math.cos(knee))
    return hip + _KNEE_LEAN, knee - _KNEE_LEAN


def leg_joint_positions(height: float) -> np.ndarray:
    """The 12 leg joint angles (LEG_JOINTS order) for a body ``height`` above flat ground."""
    hy, kn = leg_angles_for_height(height)
    return np.array([0.0, hy, kn] * len(LEGS))


def foot_positions_in_body(joints: np.ndarray) -> np.ndarray:
    """(4, 3) foot positions in the body frame from leg joint angles: hip_x about x at the hip,
    then hip_y and knee about y (the URDF's chain)."""
    q = np.asarray(joints[: 3 * len(LEGS)]).reshape(len(LEGS), 3)
    hx, hy, kn = q[:, 0], q[:, 1], q[:, 2]
    side = np.array([1.0, -1.0, 1.0, -1.0])
    # in the hip link, before the hip_x rotation; a rotation by a about y maps (x, z) to
    # (x cos a + z sin a, -x sin a + z cos a)
    x = KNEE[0] * np.cos(hy) + KNEE[2] * np.sin(hy) - LOWER_LEG * np.sin(hy + kn)
    z = -KNEE[0] * np.sin(hy) + KNEE[2] * np.cos(hy) - LOWER_LEG * np.cos(hy + kn)
    y = side * UPPER_LEG_Y
    hips_x = np.array([HIP_X, HIP_X, -HIP_X, -HIP_X])
    c, s = np.cos(hx), np.sin(hx)
    return np.stack([hips_x + x, side * HIP_Y + c * y - s * z, s * y + c * z], axis=1)


def body_height_from_joints(joints: np.ndarray) -> float:
    return float(-foot_positions_in_body(joints)[:, 2].mean())


# Body cameras, as on the robot: each stereo camera's depth sensor frame has the camera's plain
# name and its greyscale fisheye imager ``<name>_fisheye`` sits beside it. Both are optical frames
# (z forward, x right, y down). Entries: (parent frame, parent_T_depth, depth_T_fisheye).
BODY_CAMERAS = tuple(GEOMETRY["cameras"])
HEAD_IN_BODY = pose(GEOMETRY["head"])
CAMERA_MOUNTS = {name: (mount["parent"], pose(mount), pose(mount["fisheye"]))
                 for name, mount in GEOMETRY["cameras"].items()}
# Gripper camera (robots with an arm): colour imager and depth sensor, optical frames on ``hand``.
HAND_CAMERAS = {name: pose(mount) for name, mount in GEOMETRY["hand_cameras"].items()}
# The lidar payload (EAP) sensor frame on top of the body, x forward as mounted.
LIDAR_IN_BODY = pose(GEOMETRY["lidar"])
