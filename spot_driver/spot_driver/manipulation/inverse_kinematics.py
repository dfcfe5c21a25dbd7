"""The arm's inverse kinematics over the SDK's ``InverseKinematicsClient``: a tool pose in
any frame of the robot's tree, checked (known frame, finite numbers, a rotation) before it
is sent; the robot's answer as plain values."""

import math
from dataclasses import dataclass

from bosdyn.api.spot import inverse_kinematics_pb2 as ik
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.inverse_kinematics import InverseKinematicsClient
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_driver.core.errors import CommandError

Request = ik.InverseKinematicsRequest
ROOT = "odom"


def checked_pose(values: tuple[float, ...], what: str) -> SE3Pose:
    """``(x, y, z, qw, qx, qy, qz)`` as an SE3Pose; CommandError for a non-finite value or a
    quaternion far from unit length (it is normalized otherwise)."""
    if not all(math.isfinite(v) for v in values):
        raise CommandError(f"{what} must be finite numbers")
    x, y, z, w, qx, qy, qz = values
    norm = math.sqrt(w * w + qx * qx + qy * qy + qz * qz)
    if abs(norm - 1.0) > 0.01:
        raise CommandError(f"{what} orientation is not a unit quaternion (norm {norm:.3f})")
    return SE3Pose(x, y, z, Quat(w / norm, qx / norm, qy / norm, qz / norm))


def build_request(snapshot, frame: str, target: SE3Pose, wrist_tform_tool: SE3Pose | None,
                  from_ready: bool) -> Request:
    """The IK request for ``target`` in ``frame`` (CommandError for a frame not on the
    robot's tree)."""
    frames = snapshot.child_to_parent_edge_map
    if frame not in frames:
        raise CommandError(f"unknown frame {frame!r} (frame_id); the robot knows "
                           f"{', '.join(sorted(frames))}")
    request = Request(root_frame_name=ROOT)
    request.scene_tform_task.CopyFrom(get_a_tform_b(snapshot, ROOT, frame).to_proto())
    request.tool_pose_task.task_tform_desired_tool.CopyFrom(target.to_proto())
    if wrist_tform_tool is not None:
        request.wrist_mounted_tool.wrist_tform_tool.CopyFrom(wrist_tform_tool.to_proto())
    if from_ready:
        request.nominal_arm_configuration = Request.ARM_CONFIG_READY
    return request


@dataclass(frozen=True)
class Solution:
    reachable: bool
    status: str
    joints: dict[str, float]
    odom_tform_body: SE3Pose | None
    body_tform_hand: SE3Pose | None


def solution(response: ik.InverseKinematicsResponse) -> Solution:
    """The robot's answer: whether it reaches, its joint angles and frames."""
    configuration = response.robot_configuration
    joints = {j.name: j.position.value for j in configuration.joint_states}
    edges = configuration.transforms_snapshot.child_to_parent_edge_map

    def pose(child: str, parent: str) -> SE3Pose | None:
        edge = edges.get(child)
        if edge is None or edge.parent_frame_name != parent:
            return None
        return SE3Pose.from_proto(edge.parent_tform_child)

    return Solution(response.status == response.STATUS_OK,
                    response.Status.Name(response.status), joints, pose("body", ROOT),
                    pose("hand", "body"))


class InverseKinematics:
    def __init__(self, connection) -> None:
        self._connection = connection

    def solve(self, request: Request) -> Solution:
        client = self._connection.client(InverseKinematicsClient)
        return solution(client.inverse_kinematics(request))
