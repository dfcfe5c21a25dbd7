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
from collections.abc import Iterator

from bosdyn.api import robot_state_pb2
from google.protobuf.descriptor import Descriptor

Path = tuple
_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5


def _read_varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def leaves(data: bytes, descriptor: Descriptor, start: int = 0, end: int | None = None,
           path: Path = ()) -> Iterator[tuple[Path, int, int, int]]:
    """(path, wire type, start, end) of every scalar in serialized ``data`` of a message of
    type ``descriptor``, in wire order. A path names fields, with the occurrence index after
    a repeated field and the key after a map (string keys). Raises ValueError on a field the
    descriptor does not have or bytes that are not a message."""
    end = len(data) if end is None else end
    counts: dict[str, int] = {}
    i = start
    while i < end:
        tag, i = _read_varint(data, i)
        wire_type = tag & 7
        field = descriptor.fields_by_number.get(tag >> 3)
        if field is None:
            raise ValueError(f"{descriptor.name} has no field {tag >> 3}")
        key: Path = (field.name,)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            pass  # keyed below, once the entry's key is read
        elif field.is_repeated:
            key += (counts.get(field.name, 0),)
            counts[field.name] = key[1] + 1
        if wire_type == _VARINT:
            j = i
            while data[j] & 0x80:
                j += 1
            yield path + key, wire_type, i, j + 1
            i = j + 1
        elif wire_type in (_FIXED64, _FIXED32):
            size = 8 if wire_type == _FIXED64 else 4
            yield path + key, wire_type, i, i + size
            i += size
        elif wire_type == _LENGTH_DELIMITED:
            length, i = _read_varint(data, i)
            if field.message_type is None:
                yield path + key, wire_type, i, i + length
            else:
                if field.message_type.GetOptions().map_entry:
                    key += (_map_key(data, i, i + length),)
                yield from leaves(data, field.message_type, i, i + length, path + key)
            i += length
        else:
            raise ValueError(f"wire type {wire_type} in {descriptor.name}")
        if i > end:
            raise ValueError(f"{descriptor.name} runs past its end")


def _map_key(data: bytes, start: int, end: int) -> str:
    """The string key (field 1) of a serialized map entry."""
    if data[start:start + 1] != b"\x0a":
        raise ValueError("map entry without a string key first")
    length, i = _read_varint(data, start + 1)
    if i + length > end:
        raise ValueError("map key runs past its entry")
    return data[i:i + length].decode()


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
        for path, wire_type, start, end in leaves(data, sample.DESCRIPTOR):
            if wire_type == _LENGTH_DELIMITED:
                continue  # strings and bytes stay in the constant part
            pattern += (re.escape(data[position:start]), b".{%d}" % (end - start))
            if wire_type == _FIXED64 and path in wanted_index:
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
