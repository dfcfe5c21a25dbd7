"""ROS TF frames pushed to the robot as world objects (what spot_ros2's object synchronizer
does): the transforms heard on /tf and /tf_static kept as a tree, and for each frame to push,
the drawable world object that puts it in the robot's odom (or vision) frame. Pure: no ROS,
no robot.

A pushed object lives ``LIFETIME_S`` on the robot unless it is pushed again, so a frame that
stops being published disappears from the robot's world model by itself.
"""

from dataclasses import dataclass

from bosdyn.api import world_object_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_driver.core.errors import CommandError

LIFETIME_S = 5.0
STALE_S = 10.0  # a frame whose newest transform on its path is older is not pushed


@dataclass(frozen=True)
class Edge:
    parent: str
    parent_t_child: SE3Pose
    stamp: float  # s since the epoch; static transforms never go stale
    static: bool = False


class TransformTree:
    """Child frame -> its newest edge to its parent, from TF messages (frame names without
    the driver's prefix)."""

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix
        self._edges: dict[str, Edge] = {}

    def _name(self, frame: str) -> str:
        frame = frame.lstrip("/")
        return frame[len(self._prefix):] if self._prefix and frame.startswith(self._prefix) \
            else frame

    def update(self, transforms, static: bool = False) -> None:
        """Take geometry_msgs/TransformStamped-like messages (a TFMessage's transforms)."""
        for t in transforms:
            r, p = t.transform.rotation, t.transform.translation
            stamp = t.header.stamp.sec + t.header.stamp.nanosec * 1e-9
            self._edges[self._name(t.child_frame_id)] = Edge(
                self._name(t.header.frame_id),
                SE3Pose(p.x, p.y, p.z, Quat(r.w, r.x, r.y, r.z)), stamp, static)

    def lookup(self, root: str, frame: str, now: float) -> SE3Pose:
        """root_T_frame through their common ancestor (a frame under ``map`` reaches
        ``odom``); CommandError when the frame is unknown, not connected to ``root`` or a
        transform on the way is older than STALE_S."""
        if frame not in self._edges:
            raise CommandError(f"frame {frame!r} has not been heard on /tf or /tf_static")
        top, top_t_frame = self._to_top(frame, now, stop=root)
        if top == root:
            return top_t_frame
        top_root, top_t_root = self._to_top(root, now)
        if top != top_root:
            raise CommandError(f"frame {frame!r} is not connected to {root!r} on /tf")
        return top_t_root.inverse() * top_t_frame

    def _to_top(self, frame: str, now: float, stop: str = "") -> tuple[str, SE3Pose]:
        """The frame's top ancestor (or ``stop`` when it is on the way) and its transform
        to the frame."""
        pose, seen = SE3Pose(0.0, 0.0, 0.0, Quat()), set()
        while frame in self._edges and frame != stop:
            if frame in seen:
                raise CommandError(f"the transforms above {frame!r} form a loop")
            seen.add(frame)
            edge = self._edges[frame]
            if not edge.static and now - edge.stamp > STALE_S:
                raise CommandError(f"frame {frame!r}: its transform is {now - edge.stamp:.0f} s "
                                   "old")
            pose = edge.parent_t_child * pose
            frame = edge.parent
        return frame, pose


def drawable(frame: str, root: str, root_t_frame: SE3Pose, acquired: float
             ) -> world_object_pb2.WorldObject:
    """The world object that shows ``frame`` on the robot: a drawable named as the frame,
    whose snapshot puts the frame in ``root`` (odom or vision), acquired at ``acquired``
    (local clock, s since the epoch: the SDK's client converts it to robot time)."""
    obj = world_object_pb2.WorldObject(name=frame)
    obj.object_lifetime.FromNanoseconds(int(LIFETIME_S * 1e9))
    obj.acquisition_time.FromNanoseconds(int(acquired * 1e9))
    drawing = obj.drawable_properties.add()
    drawing.frame.arrow_length, drawing.frame.arrow_radius = 0.1, 0.01
    edges = obj.transforms_snapshot.child_to_parent_edge_map
    edges[root].SetInParent()
    edges[frame].parent_frame_name = root
    edges[frame].parent_tform_child.CopyFrom(root_t_frame.to_proto())
    return obj


def mutation(obj: world_object_pb2.WorldObject, object_id: int | None
             ) -> world_object_pb2.MutateWorldObjectRequest:
    """Add the object (no id yet) or change the one added before."""
    Request = world_object_pb2.MutateWorldObjectRequest
    request = Request(mutation=Request.Mutation(
        action=Request.ACTION_ADD if object_id is None else Request.ACTION_CHANGE, object=obj))
    if object_id is not None:
        request.mutation.object.id = object_id
    return request
