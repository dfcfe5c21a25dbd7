"""Walking protobuf wire bytes by descriptor, and templates of messages whose shape repeats.

A robot sends the same message shape again and again: the same joint names, frame tree,
batteries and faults; only numbers change. A ``ShapeTemplate`` keeps one serialized message
with its numbers cut out. A later message whose bytes equal it outside those numbers (one
regex match: the constant bytes literal, each number any bytes of its length) has every
number at the template's offset, so its doubles come out of one ``struct`` unpack and its
varints out of one numpy pass, without protobuf's Python objects (about 0.2 us per value).
Anything else (a double that became exactly 0 and so left the wire, a renamed joint, a new
fault, an enum that changed, unknown fields) fails the match; the caller then reads that
message through protobuf and makes a new template of it.
"""

import re
import struct
from collections.abc import Callable, Iterator

import numpy as np
from google.protobuf.descriptor import Descriptor, FieldDescriptor

Path = tuple
VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5
_TIME_TYPES = ("google.protobuf.Timestamp", "google.protobuf.Duration")


def read_varint(data: bytes, i: int) -> tuple[int, int]:
    """(value, index after it) of the varint at ``data[i]``."""
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def leaves(data: bytes, descriptor: Descriptor, start: int = 0, end: int | None = None,
           path: Path = (), opaque: Callable[[Path], bool] = lambda path: False,
           ) -> Iterator[tuple[Path, FieldDescriptor, int, int, int]]:
    """(path, field, wire type, start, end) of every scalar in serialized ``data`` of a
    message of type ``descriptor``, in wire order; each element of a packed double list is
    one FIXED64 scalar, and a sub-message at an ``opaque`` path one LENGTH_DELIMITED scalar.
    A path names fields, with the occurrence index after a repeated field and the key after
    a map (string keys). Raises ValueError on a field the descriptor does not have or bytes
    that are not such a message."""
    end = len(data) if end is None else end
    counts: dict[str, int] = {}
    i = start
    while i < end:
        tag, i = read_varint(data, i)
        wire_type = tag & 7
        field = descriptor.fields_by_number.get(tag >> 3)
        if field is None:
            raise ValueError(f"{descriptor.name} has no field {tag >> 3}")
        message = field.message_type
        is_map = message is not None and message.GetOptions().map_entry
        key: Path = (field.name,)
        if field.is_repeated and not is_map and not (wire_type == LENGTH_DELIMITED and
                                                      field.type == field.TYPE_DOUBLE):
            key += (counts.get(field.name, 0),)
            counts[field.name] = key[1] + 1
        if wire_type == VARINT:
            j = i
            while data[j] & 0x80:
                j += 1
            yield path + key, field, wire_type, i, j + 1
            i = j + 1
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            yield path + key, field, wire_type, i, i + size
            i += size
        elif wire_type == LENGTH_DELIMITED:
            length, i = read_varint(data, i)
            if message is not None and opaque(path + key):
                yield path + key, field, wire_type, i, i + length
            elif message is not None:
                if is_map:
                    key += (_map_key(data, i, i + length),)
                yield from leaves(data, message, i, i + length, path + key, opaque)
            elif field.type == field.TYPE_DOUBLE:  # packed
                if length % 8:
                    raise ValueError(f"packed {field.name} is not a whole number of doubles")
                for k, offset in enumerate(range(i, i + length, 8)):
                    yield path + key + (k,), field, FIXED64, offset, offset + 8
            else:
                yield path + key, field, wire_type, i, i + length
            i += length
        else:
            raise ValueError(f"wire type {wire_type} in {descriptor.name}")
        if i > end:
            raise ValueError(f"{descriptor.name} runs past its end")


def _map_key(data: bytes, start: int, end: int) -> str:
    """The string key (field 1) of a serialized map entry."""
    if data[start:start + 1] != b"\x0a":
        raise ValueError("map entry without a string key first")
    length, i = read_varint(data, start + 1)
    if i + length > end:
        raise ValueError("map key runs past its entry")
    return data[i:i + length].decode()


def is_double(field: FieldDescriptor, wire_type: int) -> bool:
    return wire_type == FIXED64 and field.type == field.TYPE_DOUBLE


def is_time_varint(field: FieldDescriptor, wire_type: int) -> bool:
    """A Timestamp's or Duration's seconds or nanos."""
    return wire_type == VARINT and field.containing_type.full_name in _TIME_TYPES


class ShapeTemplate:
    """Serialized ``data`` of a ``descriptor`` message with its numbers cut out.

    ``numbers(field, wire_type)`` picks the scalars that may change (say doubles and time
    varints); every other byte must stay equal, but for the content of sub-messages at
    ``opaque`` paths (their length must stay equal). ``doubles`` and ``varints`` list the
    paths of the number slots, in wire order; ``read`` fills them.
    """

    def __init__(self, data: bytes, descriptor: Descriptor,
                 numbers: Callable[[FieldDescriptor, int], bool],
                 opaque: Callable[[Path], bool] = lambda path: False) -> None:
        pattern, doubles, varints = [], [], []
        fmt, position, unpacked = ["<"], 0, 0
        for path, field, wire_type, start, end in leaves(data, descriptor, opaque=opaque):
            hidden = field.message_type is not None  # an opaque sub-message
            if not hidden and not numbers(field, wire_type):
                continue  # constant: stays in the literal part
            pattern += (re.escape(data[position:start]), b".{%d}" % (end - start))
            position = end
            if hidden:
                continue
            if wire_type == FIXED64:
                fmt.append(f"{start - unpacked}xd")
                unpacked = end
                doubles.append(path)
            else:
                varints.append((path, start, end))
        pattern.append(re.escape(data[position:]))
        self._regex = re.compile(b"".join(pattern), re.DOTALL)
        self._doubles = struct.Struct("".join(fmt)).unpack_from
        self.doubles: list[Path] = doubles
        self.varints: list[Path] = [path for path, _, _ in varints]
        width = max((end - start for _, start, end in varints), default=1)
        index = np.full((len(varints), width), len(data), dtype=np.intp)  # -> a zero byte
        for row, (_, start, end) in enumerate(varints):
            index[row, :end - start] = np.arange(start, end)
        self._varint_index = index
        self._shifts = np.arange(width, dtype=np.uint64) * np.uint64(7)
        self.size = len(data)

    def read(self, data: bytes) -> tuple[tuple[float, ...], list[int]] | None:
        """(doubles, varints) of ``data`` shaped like the template, else None. Varints are
        read as int64 (two's complement), as protobuf's int64/int32 fields."""
        if len(data) != self.size or self._regex.fullmatch(data) is None:
            return None
        if not len(self._varint_index):
            return self._doubles(data), []
        raw = np.frombuffer(data + b"\x00", dtype=np.uint8)[self._varint_index]
        values = ((raw & 0x7F).astype(np.uint64) << self._shifts).sum(axis=1, dtype=np.uint64)
        return self._doubles(data), values.view(np.int64).tolist()
