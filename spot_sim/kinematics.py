"""Fixed geometry of the simulated Spot: leg kinematics, joint names and sensor mounts."""

import math

import numpy as np
from bosdyn.client.math_helpers import Quat, SE3Pose

LEGS = ("fl", "fr", "hl", "hr")
LEG_JOINTS = tuple(f"{leg}.{j}" for leg in LEGS for j in ("hx", "hy", "kn"))
ARM_JOINTS = ("arm0.sh0", "arm0.sh1", "arm0.el0", "arm0.el1", "arm0.wr0", "arm0.wr1", "arm0.f1x")

UPPER_LEG = 0.3205  # m, hip to knee
LOWER_LEG = 0.37  # m, knee to foot
HIP_X = 0.29785  # m, hips ahead of / behind the body origin
HIP_Y = 0.055  # m
FOOT_Y = 0.11  # m, lateral foot offset from the body centre line

STAND_HEIGHT = 0.52  # m, body origin above the ground when standing at zero offset
SIT_HEIGHT = 0.18  # m
MIN_HEIGHT_OFFSET = -0.15  # m, body height offset range the robot accepts
MAX_HEIGHT_OFFSET = 0.15



def leg_angles_for_height(height: float) -> tuple[float, float]:
    """Hip pitch and knee angle (rad) that put the foot ``height`` below the hip."""
    reach = min(max(height, 0.05), UPPER_LEG + LOWER_LEG - 1e-3)
    cos_knee = (reach**2 - UPPER_LEG**2 - LOWER_LEG**2) / (2 * UPPER_LEG * LOWER_LEG)
    knee = -math.acos(max(-1.0, min(1.0, cos_knee)))
    hip = math.atan2(-LOWER_LEG * math.sin(knee), UPPER_LEG + LOWER_LEG * math.cos(knee))
    return hip, knee


def leg_joint_positions(height: float) -> np.ndarray:
    """The 12 leg joint angles (LEG_JOINTS order) for a body ``height`` above flat ground."""
    hy, kn = leg_angles_for_height(height)
    return np.array([0.0, hy, kn] * len(LEGS))


def foot_positions_in_body(joints: np.ndarray) -> np.ndarray:
    """(4, 3) foot positions in the body frame from leg joint angles (planar legs)."""
    q = np.asarray(joints[: 3 * len(LEGS)]).reshape(len(LEGS), 3)
    hy, kn = q[:, 1], q[:, 2]
    x = -UPPER_LEG * np.sin(hy) - LOWER_LEG * np.sin(hy + kn)
    z = -UPPER_LEG * np.cos(hy) - LOWER_LEG * np.cos(hy + kn)
    hips_x = np.array([HIP_X, HIP_X, -HIP_X, -HIP_X])
    feet_y = np.array([FOOT_Y, -FOOT_Y, FOOT_Y, -FOOT_Y])
    return np.stack([hips_x + x, feet_y, z], axis=1)


def body_height_from_joints(joints: np.ndarray) -> float:
    return float(-foot_positions_in_body(joints)[:, 2].mean())


def _optical(x: float, y: float, z: float, yaw: float, pitch: float) -> SE3Pose:
    """A camera pose (optical axes: z forward, x right, y down) looking along yaw/pitch."""
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    forward = np.array([cy * cp, sy * cp, -sp])
    right = np.array([sy, -cy, 0.0])
    down = np.cross(forward, right)
    rotation = np.stack([right, down, forward], axis=1)
    return SE3Pose(x, y, z, Quat.from_matrix(rotation))


# Body cameras, as on the robot: each stereo camera's depth sensor frame has the camera's plain
# name and its greyscale fisheye imager ``<name>_fisheye`` sits beside it. Both are optical frames
# (z forward, x right, y down). Entries: (parent frame, parent_T_depth, depth_T_fisheye).
BODY_CAMERAS = ("frontleft", "frontright", "left", "right", "back")
HEAD_IN_BODY = SE3Pose(0.415, 0.0, 0.035, Quat())
_BESIDE = SE3Pose(0.02, 0.0, 0.0, Quat())  # visual imager 2 cm to the right of the depth origin
CAMERA_MOUNTS = {
    "frontleft": ("head", _optical(0.0, 0.04, 0.0, -0.35, 0.35), _BESIDE),
    "frontright": ("head", _optical(0.0, -0.04, 0.0, 0.35, 0.35), _BESIDE),
    "left": ("body", _optical(-0.16, 0.11, 0.03, math.pi / 2, 0.2), _BESIDE),
    "right": ("body", _optical(-0.16, -0.11, 0.03, -math.pi / 2, 0.2), _BESIDE),
    "back": ("body", _optical(-0.42, 0.0, 0.04, math.pi, 0.3), _BESIDE),
}
# Gripper camera (robots with an arm): colour imager and depth sensor, optical frames on ``hand``.
HAND_CAMERAS = {
    "hand_color_image_sensor": _optical(0.03, 0.0, 0.02, 0.0, 0.0),
    "hand_depth_sensor": _optical(0.03, 0.02, 0.02, 0.0, 0.0),
}
# The lidar payload (EAP) sensor frame on top of the body, x forward as mounted.
LIDAR_IN_BODY = SE3Pose(-0.1, 0.0, 0.2, Quat())
