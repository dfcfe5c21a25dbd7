"""GraphNav maps and localization as ROS messages (pure functions).

The map frame is GraphNav's seed frame. ``map -> odom`` comes from one localization answer:
``seed_tform_body`` and the kinematic ``odom_tform_body`` of the same instant, so that
``map -> odom -> body`` composes back to the localization.
"""

from dataclasses import dataclass

import numpy as np
from bosdyn.api import robot_state_pb2
from bosdyn.api.graph_nav import graph_nav_pb2, map_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose
from geometry_msgs.msg import Point, Pose, PoseWithCovarianceStamped, Quaternion, TransformStamped
from google.protobuf import timestamp_pb2
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from spot_driver.conversions.point_cloud import decode_xyz

# Diagonal of the localization covariance (x, y, z, roll, pitch, yaw): GraphNav reports none;
# these are the sizes of a good scan-match fix.
LOCALIZATION_VARIANCE = (0.05 ** 2, 0.05 ** 2, 0.05 ** 2, 0.02 ** 2, 0.02 ** 2, 0.03 ** 2)
WAYPOINT_COLOR = ColorRGBA(r=0.1, g=0.6, b=1.0, a=1.0)
EDGE_COLOR = ColorRGBA(r=0.9, g=0.9, b=0.9, a=0.8)
TEXT_COLOR = ColorRGBA(r=1.0, g=1.0, b=1.0, a=1.0)


def pose_msg(pose: SE3Pose) -> Pose:
    return Pose(position=Point(x=pose.x, y=pose.y, z=pose.z),
                orientation=Quaternion(w=pose.rot.w, x=pose.rot.x, y=pose.rot.y, z=pose.rot.z))


def pose_from_msg(pose: Pose) -> SE3Pose:
    q = pose.orientation
    return SE3Pose(pose.position.x, pose.position.y, pose.position.z, Quat(q.w, q.x, q.y, q.z))


def map_tform_odom(state: graph_nav_pb2.GetLocalizationStateResponse,
                   root: str = "odom") -> SE3Pose | None:
    """seed_tform_<root> from one localization answer (None when not localized); ``root`` is
    the driver's tf_root (odom, vision or body), the frame map is the parent of in TF (REP-105:
    map -> odom -> body, one parent per frame)."""
    localization = state.localization
    if not localization.waypoint_id:
        return None
    root_tform_body = get_a_tform_b(state.robot_kinematics.transforms_snapshot, root, "body")
    if root_tform_body is None:
        return None
    return SE3Pose.from_proto(localization.seed_tform_body) * root_tform_body.inverse()


def map_to_odom_transform(seed_tform_odom: SE3Pose, stamp, map_frame: str,
                          odom_frame: str) -> TransformStamped:
    msg = TransformStamped()
    msg.header.stamp, msg.header.frame_id, msg.child_frame_id = stamp, map_frame, odom_frame
    t = msg.transform
    t.translation.x, t.translation.y, t.translation.z = (seed_tform_odom.x, seed_tform_odom.y,
                                                         seed_tform_odom.z)
    r = seed_tform_odom.rot
    t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z = r.w, r.x, r.y, r.z
    return msg


@dataclass(frozen=True)
class Fix:
    """A localization put at the instant of a robot state the driver has published: tf2 can
    look ``map -> body`` up at ``timestamp`` without extrapolating past /tf."""

    map_tform_root: SE3Pose
    map_tform_body: SE3Pose
    timestamp: timestamp_pb2.Timestamp  # robot clock: the robot state's acquisition


def localization_at(state: graph_nav_pb2.GetLocalizationStateResponse,
                    kinematics: robot_state_pb2.KinematicState | None,
                    root: str = "odom") -> Fix | None:
    """The localization ``state`` at the robot state ``kinematics`` (the newest the driver
    published): map -> root from the localization answer, the body where that robot state
    has it, stamped with its acquisition (a localization answer is stamped when the robot
    served it, newer than the newest state on /tf). None when not localized or no state."""
    map_tform_root = map_tform_odom(state, root)
    if map_tform_root is None or kinematics is None:
        return None
    root_tform_body = get_a_tform_b(kinematics.transforms_snapshot, root, "body")
    if root_tform_body is None:
        return None
    return Fix(map_tform_root, map_tform_root * root_tform_body,
               kinematics.acquisition_timestamp)


def localization_pose(map_tform_body: SE3Pose, stamp,
                      map_frame: str) -> PoseWithCovarianceStamped:
    """The body's pose in the map frame with a nominal covariance."""
    msg = PoseWithCovarianceStamped()
    msg.header.stamp, msg.header.frame_id = stamp, map_frame
    msg.pose.pose = pose_msg(map_tform_body)
    covariance = np.zeros((6, 6))
    covariance[np.diag_indices(6)] = LOCALIZATION_VARIANCE
    msg.pose.covariance = covariance.ravel().tolist()
    return msg


def seed_poses(graph: map_pb2.Graph) -> dict[str, SE3Pose]:
    """seed_tform_waypoint of every anchored waypoint."""
    return {a.id: SE3Pose.from_proto(a.seed_tform_waypoint) for a in graph.anchoring.anchors}


def graph_markers(graph: map_pb2.Graph, stamp, map_frame: str) -> MarkerArray:
    """Waypoints (spheres), edges (one line list) and waypoint names (text), in the map frame;
    a DELETEALL first so a smaller map replaces a bigger one."""
    poses = seed_poses(graph)
    out = MarkerArray(markers=[Marker(action=Marker.DELETEALL)])

    def marker(namespace: str, kind: int, marker_id: int = 0) -> Marker:
        m = Marker(ns=namespace, id=marker_id, type=kind, action=Marker.ADD)
        m.header.stamp, m.header.frame_id = stamp, map_frame
        m.pose.orientation.w = 1.0
        return m

    waypoints = marker("waypoints", Marker.SPHERE_LIST)
    waypoints.scale.x = waypoints.scale.y = waypoints.scale.z = 0.25
    waypoints.color = WAYPOINT_COLOR
    edges = marker("edges", Marker.LINE_LIST)
    edges.scale.x = 0.04
    edges.color = EDGE_COLOR
    for index, waypoint in enumerate(graph.waypoints):
        pose = poses.get(waypoint.id)
        if pose is None:
            continue
        waypoints.points.append(Point(x=pose.x, y=pose.y, z=pose.z))
        label = marker("names", Marker.TEXT_VIEW_FACING, index)
        label.pose.position = Point(x=pose.x, y=pose.y, z=pose.z + 0.35)
        label.scale.z = 0.2
        label.color = TEXT_COLOR
        label.text = waypoint.annotations.name or waypoint.id
        out.markers.append(label)
    for edge in graph.edges:
        ends = [poses.get(edge.id.from_waypoint), poses.get(edge.id.to_waypoint)]
        if None not in ends:
            edges.points.extend(Point(x=p.x, y=p.y, z=p.z) for p in ends)
    out.markers[1:1] = [m for m in (waypoints, edges) if m.points]
    return out


def snapshot_points(graph: map_pb2.Graph,
                    snapshots: dict[str, map_pb2.WaypointSnapshot]) -> np.ndarray:
    """Every waypoint snapshot's point cloud in the map frame, as one (N, 3) float32 array."""
    poses = seed_poses(graph)
    parts = []
    for waypoint in graph.waypoints:
        snapshot = snapshots.get(waypoint.snapshot_id)
        if snapshot is None or waypoint.id not in poses or not snapshot.point_cloud.num_points:
            continue
        cloud = snapshot.point_cloud
        odom_tform_sensor = get_a_tform_b(cloud.source.transforms_snapshot, "odom",
                                          cloud.source.frame_name_sensor)
        if odom_tform_sensor is None:
            continue
        seed_tform_sensor = (poses[waypoint.id] * SE3Pose.from_proto(waypoint.waypoint_tform_ko)
                             * odom_tform_sensor).to_matrix()
        xyz = decode_xyz(cloud)
        parts.append(xyz @ seed_tform_sensor[:3, :3].T.astype(np.float32)
                     + seed_tform_sensor[:3, 3].astype(np.float32))
    if not parts:
        return np.zeros((0, 3), np.float32)
    return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)
