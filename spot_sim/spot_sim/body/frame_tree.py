"""The robot's kinematic frame tree (FrameTreeSnapshot), rooted at ``body`` as on Spot."""

import numpy as np
from bosdyn.api import geometry_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim.body import kinematics
from spot_sim.body.arm import kinematics as arm_kinematics
from spot_sim.body.mobility import Se2


def _add(snapshot: geometry_pb2.FrameTreeSnapshot, child: str, parent: str,
         parent_tform_child: SE3Pose | None) -> None:
    edge = snapshot.child_to_parent_edge_map[child]
    edge.parent_frame_name = parent
    if parent_tform_child is not None:
        edge.parent_tform_child.CopyFrom(parent_tform_child.to_proto())


def feet_center(feet: np.ndarray, odom_rotation_body: Quat) -> SE3Pose:
    """body_T_feet_center as the API defines it: at the geometric centre of the feet,
    gravity-aligned, x from the centre of the rear feet to the centre of the front feet."""
    centre = feet.mean(axis=0)
    forward = feet[:2].mean(axis=0) - feet[2:].mean(axis=0)
    in_odom = odom_rotation_body.transform_point(*forward)
    yaw = Quat.from_yaw(float(np.arctan2(in_odom[1], in_odom[0])))
    return SE3Pose(*centre, odom_rotation_body.inverse() * yaw)


def body_pose(planar: Se2, height: float, rotation: Quat) -> SE3Pose:
    """The 3-D body pose from its planar pose, height and orientation offset."""
    yaw = Quat.from_yaw(planar.yaw)
    return SE3Pose(planar.x, planar.y, height, yaw * rotation)


def build_snapshot(odom_tform_body: SE3Pose, vision_tform_body: SE3Pose, has_arm: bool,
                   arm_frames: list[np.ndarray] | None = None,
                   has_lidar: bool = False,
                   feet: np.ndarray | None = None) -> geometry_pb2.FrameTreeSnapshot:
    """The frame tree the robot reports: body, odom, vision, flat_body, gpe, feet_center (with
    ``feet``), head, cameras, the lidar ``sensor`` frame and, with an arm, its links, the hand
    and the hand cameras.

    ``arm_frames`` are body_T_link for the arm links then the hand (stowed when omitted);
    ``feet`` the (4, 3) foot positions in body, legs in ``kinematics.LEGS`` order.
    """
    snapshot = geometry_pb2.FrameTreeSnapshot()
    _add(snapshot, "body", "", None)
    _add(snapshot, "odom", "body", odom_tform_body.inverse())
    _add(snapshot, "vision", "body", vision_tform_body.inverse())
    # flat_body: at the body origin, yaw of the body, roll and pitch removed.
    body_rotation = odom_tform_body.rotation
    flat = SE3Pose(0, 0, 0, body_rotation.inverse() * Quat.from_yaw(body_rotation.to_yaw()))
    _add(snapshot, "flat_body", "body", flat)
    odom_tform_gpe = SE3Pose(odom_tform_body.x, odom_tform_body.y, 0.0, Quat())
    _add(snapshot, "gpe", "odom", odom_tform_gpe)
    if feet is not None:
        _add(snapshot, "feet_center", "body", feet_center(feet, body_rotation))
    _add(snapshot, "head", "body", kinematics.HEAD_IN_BODY)
    for name, (parent, parent_tform_depth, depth_tform_visual) in kinematics.CAMERA_MOUNTS.items():
        _add(snapshot, name, parent, parent_tform_depth)
        _add(snapshot, f"{name}_fisheye", name, depth_tform_visual)
    if has_lidar:
        _add(snapshot, "sensor", "body", kinematics.LIDAR_IN_BODY)
    if has_arm:
        if arm_frames is None:
            arm_frames = arm_kinematics.link_poses(arm_kinematics.STOW)
        parent, parent_pose = "body", np.eye(4)
        for name, pose in zip((*arm_kinematics.LINKS, "hand"), arm_frames, strict=True):
            _add(snapshot, name, parent, SE3Pose.from_matrix(np.linalg.solve(parent_pose, pose)))
            parent, parent_pose = name, pose
        for name, hand_tform_sensor in kinematics.HAND_CAMERAS.items():
            _add(snapshot, name, "hand", hand_tform_sensor)
    return snapshot


# What a real Spot reports in its robot state's kinematic tree (Spot API 5.x, RobotState's
# transforms_snapshot): the world frames around the body, feet_center and, with an arm, the
# hand and the wrist, both children of ``body``; no arm links between them, no camera frames
# (those come with each image response). The wrist is ``arm0.link_wr1`` (5.x; 4.x robots
# called it ``link_wr1``, which 5.x documents as deprecated).
REPORTED = ("body", "odom", "vision", "flat_body", "gpe")
WRIST = "arm0.link_wr1"
WRIST_NAMES_4 = ("link_wr1",)
WRIST_NAMES_5 = (WRIST,)


def robot_state_view(full: geometry_pb2.FrameTreeSnapshot,
                     wrist_names: tuple[str, ...] = WRIST_NAMES_5
                     ) -> geometry_pb2.FrameTreeSnapshot:
    """The robot-state tree of a real Spot, from the simulator's full tree; the wrist under
    each of ``wrist_names``."""
    out = geometry_pb2.FrameTreeSnapshot()
    edges = full.child_to_parent_edge_map
    for name in REPORTED + (("feet_center",) if "feet_center" in edges else ()):
        out.child_to_parent_edge_map[name].CopyFrom(edges[name])
    if "hand" in edges:
        _add(out, "hand", "body", get_a_tform_b(full, "body", "hand"))
        for name in wrist_names:
            _add(out, name, "body", get_a_tform_b(full, "body", WRIST))
    return out


def sensor_view(full: geometry_pb2.FrameTreeSnapshot,
                sensor: str) -> geometry_pb2.FrameTreeSnapshot:
    """The tree an image or point-cloud response carries: the world frames and the chain from
    ``body`` to ``sensor`` (a hand camera hangs from ``arm0.link_wr1``, itself a child of
    ``body``, as on a real Spot)."""
    out = geometry_pb2.FrameTreeSnapshot()
    edges = full.child_to_parent_edge_map
    for name in REPORTED:
        out.child_to_parent_edge_map[name].CopyFrom(edges[name])
    frame = sensor
    while frame not in REPORTED:
        parent = edges[frame].parent_frame_name
        if parent == "hand":  # cameras on the gripper: expressed on the wrist
            _add(out, frame, WRIST, get_a_tform_b(full, WRIST, frame))
            _add(out, WRIST, "body", get_a_tform_b(full, "body", WRIST))
            break
        out.child_to_parent_edge_map[frame].CopyFrom(edges[frame])
        frame = parent
    return out
