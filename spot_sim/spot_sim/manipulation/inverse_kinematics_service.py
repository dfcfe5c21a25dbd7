"""inverse-kinematics: arm IK requests answered from the same kinematics the simulated arm
uses (``spot_sim.body.arm.kinematics``), for tool pose and tool gaze tasks. The body
stays where it is (or at ``scene_tform_body_nominal``): stance optimisation is not simulated."""

import numpy as np
from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot import inverse_kinematics_pb2 as pb
from bosdyn.api.spot import inverse_kinematics_service_pb2_grpc
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import SE3Pose

from spot_sim.body import kinematics
from spot_sim.body.arm import kinematics as ak
from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec

ROOT_FRAMES = ("odom", "vision")


def _matrix(pose) -> np.ndarray:
    return SE3Pose.from_proto(pose).to_matrix()


def _look_at(position: np.ndarray, target: np.ndarray) -> np.ndarray:
    """A pose at ``position`` whose x axis points at ``target`` (z kept up where possible)."""
    x = target - position
    norm = np.linalg.norm(x)
    if norm < 1e-6:
        raise ValueError("gaze target coincides with the tool")
    x /= norm
    up = np.array([0.0, 0.0, 1.0]) if abs(x[2]) < 0.99 else np.array([1.0, 0.0, 0.0])
    y = np.cross(up, x)
    y /= np.linalg.norm(y)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([x, y, np.cross(x, y)], axis=1)
    pose[:3, 3] = position
    return pose


class InverseKinematicsServicer(
        inverse_kinematics_service_pb2_grpc.InverseKinematicsServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot, self.clock = robot, robot.clock

    @unary(pb.InverseKinematicsResponse)
    def InverseKinematics(self, request, response, context):
        robot = self.robot
        root = request.root_frame_name or "odom"
        if root not in ROOT_FRAMES:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      f"root_frame_name must be one of {ROOT_FRAMES}, not {root!r}")
            return
        task = request.WhichOneof("task_specification")
        if task is None:
            set_error(response, CommonError.CODE_INVALID_REQUEST, "no task given")
            return
        snapshot = robot.transforms_snapshot()
        seed = robot.joint_positions()[0][12:]  # the arm's joints now
        if request.nominal_arm_configuration == pb.InverseKinematicsRequest.ARM_CONFIG_READY:
            seed[:6] = ak.READY
        root_t_scene = _matrix(request.root_tform_scene) if \
            request.HasField("root_tform_scene") else np.eye(4)
        root_t_task = root_t_scene @ (_matrix(request.scene_tform_task) if
                                      request.HasField("scene_tform_task") else np.eye(4))
        if request.HasField("scene_tform_body_nominal"):
            root_t_body = root_t_scene @ _matrix(request.scene_tform_body_nominal)
        else:
            root_t_body = get_a_tform_b(snapshot, root, "body").to_matrix()
        wrist_t_tool = _matrix(request.wrist_mounted_tool.wrist_tform_tool) if \
            request.HasField("wrist_mounted_tool") else ak.translation(ak.WRIST_TO_HAND)
        hand_t_tool = np.linalg.inv(ak.translation(ak.WRIST_TO_HAND)) @ wrist_t_tool
        try:
            if task == "tool_pose_task":
                root_t_tool = root_t_task @ _matrix(request.tool_pose_task.task_tform_desired_tool)
            else:
                gaze = request.tool_gaze_task
                body_t_tool_now = ak.hand_pose(seed) @ hand_t_tool
                position = (root_t_body @ body_t_tool_now)[:3, 3]
                if gaze.HasField("task_tform_desired_tool"):
                    position = (root_t_task @ _matrix(gaze.task_tform_desired_tool))[:3, 3]
                target = (root_t_task @ np.array([gaze.target_in_task.x, gaze.target_in_task.y,
                                                  gaze.target_in_task.z, 1.0]))[:3]
                root_t_tool = _look_at(position, target)
        except ValueError as exc:
            set_error(response, CommonError.CODE_INVALID_REQUEST, str(exc))
            return
        body_t_hand = np.linalg.inv(root_t_body) @ root_t_tool @ np.linalg.inv(hand_t_tool)
        q, reachable = ak.solve_ik(body_t_hand, seed)
        response.status = response.STATUS_OK if reachable else response.STATUS_NO_SOLUTION_FOUND
        self._configuration(response.robot_configuration, root, root_t_body, q, seed)

    @staticmethod
    def _configuration(out, root: str, root_t_body: np.ndarray, q: np.ndarray,
                       seed: np.ndarray) -> None:
        """KinematicState of the solution: arm joint angles and the root/body/hand frames."""
        for name, angle in zip(kinematics.ARM_JOINTS, [*q[:6], seed[6]], strict=True):
            joint = out.joint_states.add(name=name)
            joint.position.value = float(angle)
        edges = out.transforms_snapshot.child_to_parent_edge_map
        edges[root].SetInParent()
        edges["body"].parent_frame_name = root
        edges["body"].parent_tform_child.CopyFrom(SE3Pose.from_matrix(root_t_body).to_proto())
        edges["hand"].parent_frame_name = "body"
        edges["hand"].parent_tform_child.CopyFrom(
            SE3Pose.from_matrix(ak.hand_pose(q)).to_proto())


def spec() -> ServiceSpec:
    return ServiceSpec(
        "inverse-kinematics", "bosdyn.api.spot.InverseKinematicsService", "api.spot.robot",
        inverse_kinematics_service_pb2_grpc.add_InverseKinematicsServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: InverseKinematicsServicer(parts.robot),
                   hardware="arm"),)
