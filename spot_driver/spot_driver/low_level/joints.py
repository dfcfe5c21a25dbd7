"""The joint-control API's joints: their order (``JointIndex``), URDF names and limits."""

import numpy as np
from bosdyn.api.spot import spot_constants_pb2

from spot_driver.description.robot_model import geometry
from spot_driver.state.joint_states import urdf_joint_name

LEG_COUNT = 12
# "fl.hx" ... "arm0.f1x" in JointIndex order: the order of every repeated joint field.
API_NAMES = tuple(
    ("arm0." if name.startswith("A0_") else name[:2].lower() + ".") + name.split("_")[-1].lower()
    for name, _ in sorted(((n[len("JOINT_INDEX_"):], v) for n, v in
                           spot_constants_pb2.JointIndex.items()), key=lambda item: item[1]))
_LEGS = {"fl": "front_left", "fr": "front_right", "hl": "rear_left", "hr": "rear_right"}
_KIND = {"hx": "hip_x", "hy": "hip_y", "kn": "knee"}


def names(count: int, prefix: str = "") -> list[str]:
    """URDF names (with ``prefix``) of the first ``count`` joints (12: legs, 19: with arm)."""
    return [prefix + urdf_joint_name(name) for name in API_NAMES[:count]]


def limits(count: int) -> np.ndarray:
    """(count, 2) lower/upper position limits (rad), from the robot model's source."""
    model = geometry()
    out = []
    for name in API_NAMES[:count]:
        group, joint = name.split(".")
        if group == "arm0":
            arm = model["arm"]
            if joint == "f1x":
                out.append(sorted(arm["gripper_limits"]))
            else:
                out.append(arm["limits"][arm["joints"].index(joint)])
        else:
            entry = model["legs"]["limits"][_KIND[joint]]
            out.append(entry if joint == "hx" else entry[_LEGS[group]])
    return np.array(out, dtype=float)
