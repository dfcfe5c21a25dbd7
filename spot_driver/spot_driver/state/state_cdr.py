"""joint_states, odometry and /tf of a RobotState straight to CDR bytes (the hot path).

Produces exactly what ``rclpy.serialization.serialize_message`` makes of the messages built by
``joint_states``, ``odometry`` and ``frames`` (tested field by field and byte by byte outside
padding), at a fraction of the cost: layouts are built once per joint list / tree shape.
"""

from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
from bosdyn.api import robot_state_pb2

from spot_driver.conversions import frames
from spot_driver.conversions.cdr import Layout, LayoutWriter
from spot_driver.conversions.time import Stamp
from spot_driver.state.joint_states import urdf_joint_name
from spot_driver.state.odometry import POSE_COVARIANCE, TWIST_COVARIANCE

# An Odometry's last fields, a TwistWithCovarianceStamped's too: twist (6) and covariance (36)
_TWIST_TAIL_SIZE = 8 * (6 + 36)


def _rotate(q: tuple[float, float, float, float], v: tuple[float, float, float]):
    """Rotate vector v by unit quaternion q = (w, x, y, z)."""
    w, x, y, z = q
    vx, vy, vz = v
    # t = 2 * cross(q_vec, v); v' = v + w * t + cross(q_vec, t)
    tx, ty, tz = 2 * (y * vz - z * vy), 2 * (z * vx - x * vz), 2 * (x * vy - y * vx)
    return (vx + w * tx + (y * tz - z * ty), vy + w * ty + (z * tx - x * tz),
            vz + w * tz + (x * ty - y * tx))


def _covariance(diagonal) -> list[float]:
    covariance = np.zeros((6, 6))
    np.fill_diagonal(covariance, diagonal)
    return covariance.ravel().tolist()


def _poses(edge_map, plan: list[tuple[str, bool]]) -> list[tuple[float, ...]]:
    """(x, y, z, qx, qy, qz, qw) of each planned edge of a snapshot's edge map, inverted
    where planned (KeyError when a planned frame is missing)."""
    poses = []
    for key, invert in plan:
        pose = edge_map[key].parent_tform_child
        p, r = pose.position, pose.rotation
        values = (p.x, p.y, p.z, r.x, r.y, r.z, r.w)
        poses.append(_inverse(values) if invert else values)
    return poses


def _inverse(pose: tuple[float, ...]) -> tuple[float, ...]:
    """The inverse of an (x, y, z, qx, qy, qz, qw) pose."""
    q = (pose[6], -pose[3], -pose[4], -pose[5])
    t = _rotate(q, (-pose[0], -pose[1], -pose[2]))
    return (t[0], t[1], t[2], q[1], q[2], q[3], q[0])


class _JointLayout:
    def __init__(self, names: tuple[str, ...], prefix: str) -> None:
        writer = LayoutWriter()
        writer.header("")
        writer.u32(len(names))
        for name in names:
            writer.string(prefix + urdf_joint_name(name))
        for _ in range(3):  # position, velocity, effort
            writer.u32(len(names))
            writer.f64s(len(names))
        self.layout: Layout = writer.finish()


class _TfLayout:
    """Dynamic edges of one tree shape: which map entries, inverted or not, and where."""

    def __init__(self, edges: list[frames.Edge], snapshot, prefix: str, root: str,
                 body: str, names: Mapping[str, str]) -> None:
        # the odometry's pose: the edge between its frame and the body, either way round
        odom = frames.odometry_frame(root)
        self.body_index, self.body_inverted = next(
            ((i, e.parent == body) for i, e in enumerate(edges)
             if (e.parent, e.child) in ((odom, body), (body, odom))), (None, False))
        writer = LayoutWriter()
        writer.u32(len(edges))
        self.plan = []  # (snapshot child key, invert)
        for edge in edges:
            writer.header(prefix + names.get(edge.parent, edge.parent))
            writer.string(prefix + names.get(edge.child, edge.child))
            writer.f64s(7)
            in_tree = snapshot.child_to_parent_edge_map.get(edge.child)
            inverted = in_tree is None or in_tree.parent_frame_name != edge.parent
            self.plan.append((edge.parent if inverted else edge.child, inverted))
        self.layout: Layout = writer.finish()


FULL_CHECK_EVERY = 50  # cycles between full comparisons of joint names and tree shape


class StateSerializer:
    """Serialized joint_states, odometry and dynamic /tf for one RobotState.

    Joint names and the tree's shape are compared in full every ``FULL_CHECK_EVERY`` cycles
    and whenever their sizes change; in between, the cached layouts are reused.
    """

    def __init__(self, root: str, prefix: str = "", body_frame: str = "body",
                 skip: frozenset[str] = frozenset(),
                 names: Mapping[str, str] = MappingProxyType({})) -> None:
        """``skip``: frames left to another publisher (robot_state_publisher's links);
        ``names``: robot frame name -> published name, where they differ."""
        self.root, self.prefix, self.body, self.skip = root, prefix, body_frame, skip
        self.names = names
        self._joints: dict[tuple[str, ...], _JointLayout] = {}
        self._tf: dict[frozenset, _TfLayout] = {}
        self._current_joints: tuple[int, _JointLayout] | None = None
        self._current_tf: tuple[int, _TfLayout] | None = None
        self._joint_calls = 0
        self._tf_calls = 0
        self._tree_layout: _TfLayout | None = None
        writer = LayoutWriter()
        writer.header(prefix + frames.odometry_frame(root))
        writer.string(prefix + body_frame)
        writer.f64s(7)  # pose
        writer.constant_f64s(_covariance(POSE_COVARIANCE))
        writer.f64s(6)  # twist
        writer.constant_f64s(_covariance(TWIST_COVARIANCE))
        self._odom = writer.finish()
        writer = LayoutWriter()
        writer.header(prefix + body_frame)
        writer.constant_f64s(())  # aligned for the twist and covariance the odometry ends with
        self._twist_head = writer.finish()

    def joint_states(self, kin: robot_state_pb2.KinematicState, stamp: Stamp) -> bytes:
        joints = kin.joint_states
        self._joint_calls += 1
        current = self._current_joints
        if current is not None and current[0] == len(joints) and \
                self._joint_calls % FULL_CHECK_EVERY:
            layout = current[1]
        else:
            names = tuple(j.name for j in joints)
            layout = self._joints.get(names)
            if layout is None:
                layout = self._joints[names] = _JointLayout(names, self.prefix)
            self._current_joints = (len(joints), layout)
        positions, velocities, efforts = [], [], []
        for joint in joints:
            positions.append(joint.position.value)
            velocities.append(joint.velocity.value)
            efforts.append(joint.load.value)
        return layout.layout.fill((stamp, positions, velocities, efforts))

    def _tf_layout(self, snapshot, full_check: bool = False) -> _TfLayout:
        edge_map = snapshot.child_to_parent_edge_map
        self._tf_calls += 1
        current = self._current_tf
        if current is not None and current[0] == len(edge_map) and not full_check and \
                self._tf_calls % FULL_CHECK_EVERY:
            return current[1]
        shape = frozenset((child, edge.parent_frame_name) for child, edge in edge_map.items())
        layout = self._tf.get(shape)
        if layout is None:
            dynamic = [e for e in frames.reroot(snapshot, self.root)
                       if not frames.is_static(e) and e.child not in self.skip]
            layout = self._tf[shape] = _TfLayout(dynamic, snapshot, self.prefix, self.root,
                                                 self.body, self.names)
        self._current_tf = (len(edge_map), layout)
        return layout

    def transforms(self, kin: robot_state_pb2.KinematicState,
                   stamp: Stamp) -> tuple[bytes, list[tuple[float, ...]]]:
        """The dynamic /tf TFMessage, and each edge's (x, y, z, qx, qy, qz, qw)."""
        snapshot = kin.transforms_snapshot
        layout = self._tf_layout(snapshot)
        edge_map = snapshot.child_to_parent_edge_map
        try:
            poses = _poses(edge_map, layout.plan)
        except KeyError:  # a planned frame is gone: the tree changed shape
            layout = self._tf_layout(snapshot, full_check=True)
            poses = _poses(edge_map, layout.plan)
        slots = []
        for pose in poses:
            slots += (stamp, pose)
        return layout.layout.fill(slots), poses

    def odometry(self, kin: robot_state_pb2.KinematicState, stamp: Stamp,
                 root_tform_body: tuple[float, ...]) -> bytes:
        velocity = (kin.velocity_of_body_in_vision if frames.odometry_frame(self.root) ==
                    "vision" else kin.velocity_of_body_in_odom)
        lin, ang = velocity.linear, velocity.angular
        return self._odometry(stamp, root_tform_body, (lin.x, lin.y, lin.z, ang.x, ang.y, ang.z))

    def _odometry(self, stamp: Stamp, root_tform_body: tuple[float, ...],
                  root_twist: tuple[float, ...]) -> bytes:
        """Odometry with the twist (given in the root frame) turned into the body frame."""
        inverse = (root_tform_body[6], -root_tform_body[3], -root_tform_body[4],
                   -root_tform_body[5])
        twist = (*_rotate(inverse, root_twist[:3]), *_rotate(inverse, root_twist[3:]))
        return self._odom.fill((stamp, root_tform_body, twist))

    def body_twist(self, stamp: Stamp, odometry: bytes) -> bytes:
        """TwistWithCovarianceStamped in the body frame: the twist of ``odometry`` (bytes
        from ``odometry()``, which end with the twist and its covariance)."""
        return self._twist_head.fill_stamp(stamp) + odometry[-_TWIST_TAIL_SIZE:]

    @property
    def tree_layout(self) -> object | None:
        """The layout of the current tree shape; a new object whenever the shape changes."""
        return self._tree_layout

    def serialize(self, kin: robot_state_pb2.KinematicState, stamp: Stamp
                  ) -> tuple[bytes, bytes, bytes]:
        """(joint_states, odometry, /tf) CDR bytes for one kinematic state. Raises KeyError
        when the body is not a child of the root in the robot's tree."""
        tf_bytes, poses = self.transforms(kin, stamp)
        tf_layout = self._current_tf[1]
        self._tree_layout = tf_layout
        if tf_layout.body_index is None:
            raise KeyError(f"{self.body!r} is not a child of {self.root!r} in the tree")
        pose = poses[tf_layout.body_index]
        return (self.joint_states(kin, stamp),
                self.odometry(kin, stamp, _inverse(pose) if tf_layout.body_inverted else pose),
                tf_bytes)
