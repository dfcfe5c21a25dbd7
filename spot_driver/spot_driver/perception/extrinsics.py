"""Sensor mounting poses (extrinsics) from the frame tree a sensor response carries.

Each image or point-cloud response holds the robot's calibrated transforms down to its sensor
frame. The edges between the sensor and the first frame someone else already publishes (a
robot-state frame such as ``body``, or a link of the robot model that robot_state_publisher
publishes) are the sensor's mount: static in their parent, published on /tf_static.
"""

import threading
from collections.abc import Callable, Container, Mapping
from types import MappingProxyType

from bosdyn.api import geometry_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose
from geometry_msgs.msg import TransformStamped

from spot_driver.conversions import frames
from spot_driver.conversions.frames import Edge


def sensor_mount(snapshot: geometry_pb2.FrameTreeSnapshot, sensor: str,
                 published: Container[str], aliases: dict[str, str]) -> list[Edge]:
    """The edges from the nearest published frame down to ``sensor``, parents first.
    ``aliases`` renames a parent the response names differently from the frame that is
    published, only when that parent is not published itself and its alias is (a 4.x Spot's
    image responses say ``arm0.link_wr1`` where its robot state says ``link_wr1``; a 5.x
    Spot's robot state says ``arm0.link_wr1`` too). Raises KeyError when ``sensor`` is not in
    the tree or no published frame is above it."""
    edges = snapshot.child_to_parent_edge_map
    chain = []
    frame = sensor
    while True:
        edge = edges[frame]
        parent = edge.parent_frame_name
        if not parent:
            raise KeyError(f"no published frame above {sensor!r} in the response's tree")
        alias = aliases.get(parent, parent)
        named = alias if parent not in published and alias in published else parent
        chain.append(Edge(named, frame, SE3Pose.from_proto(edge.parent_tform_child)))
        if named in published:
            return chain[::-1]
        frame = parent


class SensorMounts:
    """The sensors' mounts seen so far, published together (``publish(transforms)``) whenever
    one is new or changed: /tf_static keeps one latched message, so it must hold them all."""

    def __init__(self, prefix: str, aliases: dict[str, str],
                 publish: Callable[[list[TransformStamped]], None],
                 names: Mapping[str, str] = MappingProxyType({})) -> None:
        """``names``: robot frame name -> published name, where they differ."""
        self._prefix, self._aliases, self._publish = prefix, aliases, publish
        self._names = names
        self._mounts: dict[str, tuple] = {}  # sensor -> ((parent, child, pose values), ...)
        self._lock = threading.Lock()

    def update(self, snapshot: geometry_pb2.FrameTreeSnapshot, sensor: str,
               published: Container[str], stamp) -> bool:
        """Take ``sensor``'s mount from a response's tree; True when it was new or moved."""
        try:
            chain = sensor_mount(snapshot, sensor, published, self._aliases)
        except KeyError:
            return False
        key = tuple((e.parent, e.child, _values(e.pose)) for e in chain)
        with self._lock:
            if self._mounts.get(sensor) == key:
                return False
            self._mounts[sensor] = key
            edges = {child: (parent, values) for mount in self._mounts.values()
                     for parent, child, values in mount}
            transforms = [frames.transform_msg(Edge(parent, child, _pose(values)), stamp,
                                               self._prefix, self._names)
                          for child, (parent, values) in sorted(edges.items())]
            self._publish(transforms)
        return True


def _values(pose: SE3Pose) -> tuple[float, ...]:
    r = pose.rotation
    return tuple(round(v, 9) for v in (pose.x, pose.y, pose.z, r.w, r.x, r.y, r.z))


def _pose(values: tuple[float, ...]) -> SE3Pose:
    return SE3Pose(*values[:3], Quat(*values[3:]))

# A real Spot's image responses name the wrist ``arm0.link_wr1``; a 4.x robot state (what the
# driver publishes without robot_state_publisher) names it ``link_wr1`` (5.x: both or only
# ``arm0.link_wr1``; ``sensor_mount`` renames only what the robot state lacks).
WRIST_IN_IMAGES = {"arm0.link_wr1": "link_wr1"}
