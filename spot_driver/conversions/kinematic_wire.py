"""The numbers of a KinematicState read from its wire bytes through a template (fast path).

Reading joint values and frame poses through protobuf's Python objects costs about 1 us per
joint or frame, twice the parse of the whole RobotState. But from one state to the next only
numbers change: the joint names, the frame tree, which fields are set and every length stay
the same. A ``KinematicTemplate`` keeps one state's bytes with its numbers cut out; a later
state whose bytes equal it outside those numbers (one regex match: the constant bytes
literal, each number any bytes of its length) has every wanted double at the template's
offset, so one ``struct`` unpack reads them all.

When anything else changed (a double that became exactly 0 and so left the wire, a renamed
joint, a new frame, unknown fields), ``read`` returns None: the caller reads that state
through protobuf and makes a new template from it.
"""

import re
import struct

from bosdyn.api import robot_state_pb2

from spot_driver.conversions.wire import FIXED64, LENGTH_DELIMITED, leaves


class KinematicTemplate:
    """Reads states shaped like ``sample``: joint positions, velocities and loads, the body
    twist (in vision or odom) and the poses of the child frames ``edge_keys``.

    ``read(data)`` gives the numbers of one state; the index lists say where each wanted
    number is in them (0.0 for one absent from the wire). Raises ValueError when ``sample``
    has fields protobuf's KinematicState does not.
    """

    def __init__(self, sample: robot_state_pb2.KinematicState, edge_keys: list[str],
                 velocity_in_vision: bool) -> None:
        data = sample.SerializeToString()
        pattern, numbers, offsets, position, unpacked = [], ["<"], {}, 0, 0
        for path, _, wire_type, start, end in leaves(data, sample.DESCRIPTOR):
            if wire_type == LENGTH_DELIMITED:
                continue  # strings and bytes stay in the constant part
            pattern += (re.escape(data[position:start]), b".{%d}" % (end - start))
            if wire_type == FIXED64:
                numbers.append(f"{start - unpacked}xd")
                unpacked = end
                offsets[path] = len(offsets)
            position = end
        pattern.append(re.escape(data[position:]))
        self._regex = re.compile(b"".join(pattern), re.DOTALL)
        self._unpack = struct.Struct("".join(numbers)).unpack_from
        self.size = len(offsets) + 1  # values: the doubles, then a 0.0 for absent ones

        def index(*path) -> int:
            return offsets.get(path, len(offsets))

        joints = range(len(sample.joint_states))
        self.positions, self.velocities, self.loads = (
            [index("joint_states", i, field, "value") for i in joints]
            for field in ("position", "velocity", "load"))
        velocity = "velocity_of_body_in_vision" if velocity_in_vision \
            else "velocity_of_body_in_odom"
        self.twist = [index(velocity, part, axis) for part in ("linear", "angular")
                      for axis in "xyz"]
        edges = ("transforms_snapshot", "child_to_parent_edge_map")
        self.poses = [[index(*edges, key, "value", "parent_tform_child", part, axis)
                       for part, axes in (("position", "xyz"), ("rotation", "xyzw"))
                       for axis in axes] for key in edge_keys]
        if any(key not in sample.transforms_snapshot.child_to_parent_edge_map
               for key in edge_keys):
            raise ValueError("a frame to read is not in the sample's tree")

    def read(self, data: bytes) -> tuple[float, ...] | None:
        """Every double of one serialized KinematicState then 0.0, or None when ``data`` is
        not shaped like the sample."""
        if self._regex.fullmatch(data) is None:
            return None
        return (*self._unpack(data), 0.0)
