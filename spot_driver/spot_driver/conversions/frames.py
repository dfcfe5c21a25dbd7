"""The robot's FrameTreeSnapshot as ROS TF: re-rooted at odom or vision (or kept at body), split
static/dynamic.

The robot roots its tree at ``body`` with ``odom`` and ``vision`` as children. ROS (REP-105)
wants the world frame as root: the edges on the path from the chosen root to ``body`` are
inverted, everything else keeps its parent, so every frame still has exactly one parent.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from bosdyn.api import geometry_pb2
from bosdyn.client.math_helpers import SE3Pose
from geometry_msgs.msg import Transform, TransformStamped

WORLD_FRAMES = ("odom", "vision")
# tf_root choices: a world frame (REP-105), or ``body`` as spot_ros2 allows (the robot's own
# tree: odom and vision children of body; odometry then stays in odom)
ROOTS = (*WORLD_FRAMES, "body")


def odometry_frame(root: str) -> str:
    """The frame odometry is in for the TF root ``root``: the root, or odom under body."""
    return root if root in WORLD_FRAMES else "odom"


# Frames whose transform to their parent changes while the robot moves (every frame the API
# documents in a robot state: feet_center follows the feet, the wrist the arm).
_MOVING = {"body", "odom", "vision", "gpe", "flat_body", "feet_center", "hand"}
_MOVING_PREFIXES = ("arm", "hand", "link_")


@dataclass(frozen=True)
class Edge:
    parent: str
    child: str
    pose: SE3Pose  # parent_T_child


def reroot(snapshot: geometry_pb2.FrameTreeSnapshot, root: str) -> list[Edge]:
    """Edges of the snapshot's tree re-rooted at ``root`` (a frame in the tree)."""
    edges = snapshot.child_to_parent_edge_map
    if root not in edges:
        raise KeyError(f"frame {root!r} is not in the robot's frame tree")
    flipped: dict[str, Edge] = {}
    frame = root
    while edges[frame].parent_frame_name:
        parent = edges[frame].parent_frame_name
        pose = SE3Pose.from_proto(edges[frame].parent_tform_child)
        flipped[parent] = Edge(frame, parent, pose.inverse())
        frame = parent
    out = []
    for child, edge in edges.items():
        if child in flipped:
            out.append(flipped[child])
        elif edge.parent_frame_name and child != root:
            out.append(Edge(edge.parent_frame_name, child,
                            SE3Pose.from_proto(edge.parent_tform_child)))
    return out


def is_static(edge: Edge) -> bool:
    """True for edges fixed to the robot's structure (head, cameras), false for moving ones."""
    child = edge.child
    moving_child = child in _MOVING or child.startswith(_MOVING_PREFIXES)
    return not moving_child and edge.parent not in WORLD_FRAMES


def transform_msg(edge: Edge, stamp, prefix: str = "",
                  names: Mapping[str, str] = MappingProxyType({})) -> TransformStamped:
    """``edge`` on TF: its frames prefixed, and renamed where ``names`` (robot name ->
    published name: ``description/frame_names.py``) says."""
    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = prefix + names.get(edge.parent, edge.parent)
    msg.child_frame_id = prefix + names.get(edge.child, edge.child)
    t: Transform = msg.transform
    p, q = edge.pose.position, edge.pose.rotation
    t.translation.x, t.translation.y, t.translation.z = float(p.x), float(p.y), float(p.z)
    t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z = (float(q.w), float(q.x),
                                                               float(q.y), float(q.z))
    return msg


def split_transforms(snapshot: geometry_pb2.FrameTreeSnapshot, root: str, stamp,
                     prefix: str = "", skip: frozenset[str] = frozenset(),
                     names: Mapping[str, str] = MappingProxyType({})
                     ) -> tuple[list[TransformStamped], list[TransformStamped]]:
    """(dynamic, static) TransformStamped lists for /tf and /tf_static; edges to a child in
    ``skip`` (frames another node publishes) are left out."""
    dynamic, static = [], []
    for edge in reroot(snapshot, root):
        if edge.child in skip:
            continue
        (static if is_static(edge) else dynamic).append(
            transform_msg(edge, stamp, prefix, names))
    return dynamic, static
