"""Reading arm requests the way the robot does: frames, poses, times and finite values, with
a refusal (CommandRejectedError) for anything it would not accept."""

import math

import numpy as np
from bosdyn.api import geometry_pb2, robot_command_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim.body.commands import reject
from spot_sim.core.clock import timestamp_to_nsec

Response = robot_command_pb2.RobotCommandResponse


def seconds(duration) -> float:
    return duration.seconds + duration.nanos * 1e-9


def check_finite(values, what: str) -> None:
    if not all(math.isfinite(v) for v in values):
        reject(f"{what} is not finite")


def frame(snapshot, name: str) -> np.ndarray:
    """body_T_frame for a frame on the robot's tree (the command is refused otherwise)."""
    if name not in snapshot.child_to_parent_edge_map:
        reject(f"unknown frame {name!r}", Response.STATUS_UNKNOWN_FRAME)
    return get_a_tform_b(snapshot, "body", name).to_matrix()


def world_fixed(snapshot, name: str) -> bool:
    """Whether a frame of the tree stays put in the world as the body walks: ``odom``,
    ``vision`` and what hangs from them (the tree is rooted at the body)."""
    edges = snapshot.child_to_parent_edge_map
    while name not in ("odom", "vision"):
        if name not in edges or not edges[name].parent_frame_name:
            return False
        name = edges[name].parent_frame_name
    return True


def pose_matrix(pose: geometry_pb2.SE3Pose, what: str) -> np.ndarray:
    p, r = pose.position, pose.rotation
    check_finite((p.x, p.y, p.z, r.w, r.x, r.y, r.z), what)
    rotation = Quat(r.w, r.x, r.y, r.z) if abs(r.w) + abs(r.x) + abs(r.y) + abs(r.z) > 1e-9 \
        else Quat(1.0, 0.0, 0.0, 0.0)  # Quat() holds ints, which normalize() cannot divide
    rotation.normalize()
    return SE3Pose(p.x, p.y, p.z, rotation).to_matrix()


def reference_ns(now_ns: int, trajectory) -> int:
    """The trajectory's reference time, or now when it has none."""
    if trajectory.HasField("reference_time"):
        return timestamp_to_nsec(trajectory.reference_time)
    return now_ns


def vec3(v, what: str) -> np.ndarray:
    values = np.array([v.x, v.y, v.z], dtype=float)
    check_finite(values, what)
    return values
