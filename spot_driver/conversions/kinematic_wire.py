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

import operator
import re
import struct

from bosdyn.api import robot_state_pb2

from spot_driver.conversions.wire import FIXED64, LENGTH_DELIMITED, leaves


class KinematicTemplate:
    """Reads states shaped like ``sample``: joint positions, velocities and loads, the body
    twist (in vision or odom) and the poses of the child frames ``edge_keys``.

    Raises ValueError when ``sample`` has fields protobuf's KinematicState does not.
    """

    def __init__(self, sample: robot_state_pb2.KinematicState, edge_keys: list[str],
                 velocity_in_vision: bool) -> None:
        data = sample.SerializeToString()
        joints = range(len(sample.joint_states))
        velocity = "velocity_of_body_in_vision" if velocity_in_vision \
            else "velocity_of_body_in_odom"
        edges = ("transforms_snapshot", "child_to_parent_edge_map")
        wanted = [*(("joint_states", i, field, "value") for field in ("position", "velocity",
                                                                       "load") for i in joints),
                  *((velocity, part, axis) for part in ("linear", "angular") for axis in "xyz"),
                  *((*edges, key, "value", "parent_tform_child", part, axis) for key in edge_keys
                    for part, axes in (("position", "xyz"), ("rotation", "xyzw"))
                    for axis in axes)]
        wanted_index = {path: i for i, path in enumerate(wanted)}
        pattern, numbers, captured, position, unpacked = [], ["<"], [], 0, 0
        for path, _, wire_type, start, end in leaves(data, sample.DESCRIPTOR):
            if wire_type == LENGTH_DELIMITED:
                continue  # strings and bytes stay in the constant part
            pattern += (re.escape(data[position:start]), b".{%d}" % (end - start))
            if wire_type == FIXED64 and path in wanted_index:
                numbers.append(f"{start - unpacked}xd")
                unpacked = end
                captured.append(path)
            position = end
        pattern.append(re.escape(data[position:]))
        self._regex = re.compile(b"".join(pattern), re.DOTALL)
        self._unpack = struct.Struct("".join(numbers)).unpack_from
        slot = {path: i for i, path in enumerate(captured)}
        zero = len(captured)  # a wanted double absent from the wire (0.0) reads the last slot
        self._pick = operator.itemgetter(*(slot.get(path, zero) for path in wanted))
        self._joints = len(joints)

    def read(self, data: bytes) -> tuple | None:
        """(positions, velocities, loads, twist, poses) of one serialized KinematicState, or
        None when it is not shaped like the sample. twist is (vx, vy, vz, wx, wy, wz); each
        pose (x, y, z, qx, qy, qz, qw), in the order of ``edge_keys``."""
        if self._regex.fullmatch(data) is None:
            return None
        values = self._pick((*self._unpack(data), 0.0))
        n = self._joints
        twist_end = 3 * n + 6
        return (values[0:n], values[n:2 * n], values[2 * n:3 * n], values[3 * n:twist_end],
                [values[i:i + 7] for i in range(twist_end, len(values), 7)])
