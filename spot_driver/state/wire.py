"""Walking protobuf wire bytes by descriptor, and templates of messages whose shape repeats.

A robot sends the same message shape again and again: the same joint names, frame tree,
batteries and faults; only numbers change. A ``ShapeTemplate`` keeps one serialized message
with its numbers cut out. A later message whose bytes equal it outside those numbers (one
regex match: the constant bytes literal, each number any bytes of its length) has every
number at the template's offset, so its doubles, and the bytes of its changing
sub-messages (Timestamps, say), come out of one ``struct`` unpack each, without protobuf's
Python objects (about 0.2 us per value).
Anything else (a double that became exactly 0 and so left the wire, a renamed joint, a new
fault, an enum that changed, unknown fields) fails the match; the caller then reads that
message through protobuf and makes a new template of it.
"""

import re
import struct
from collections.abc import Callable, Iterator

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
           path: Path = (), opaque: Callable[[Path, FieldDescriptor], bool] | None = None,
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
            if message is not None and opaque is not None and opaque(path + key, field):
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


class ShapeTemplate:
    """Serialized ``data`` of a ``descriptor`` message with its numbers cut out.

    The numbers are the doubles, and the sub-messages that ``opaque(path, field)`` picks
    (say Timestamps, or a section with a template of its own): their content may change,
    their length may not. Every other byte must stay equal. ``doubles`` and ``blobs`` list
    the paths of both, in wire order; ``read`` gives the doubles' values and the opaque
    sub-messages' bytes.
    """

    def __init__(self, data: bytes, descriptor: Descriptor,
                 opaque: Callable[[Path, FieldDescriptor], bool]) -> None:
        pattern, doubles, blobs = [], [], []
        double_fmt, blob_fmt, position, double_end, blob_end = ["<"], ["<"], 0, 0, 0
        for path, field, wire_type, start, end in leaves(data, descriptor, opaque=opaque):
            blob = field.message_type is not None  # an opaque sub-message
            if not blob and not is_double(field, wire_type):
                continue  # constant: stays in the literal part
            pattern += (re.escape(data[position:start]), b".{%d}" % (end - start))
            position = end
            if blob:
                blob_fmt.append(f"{start - blob_end}x{end - start}s")
                blob_end = end
                blobs.append(path)
            elif wire_type == FIXED64:
                double_fmt.append(f"{start - double_end}xd")
                double_end = end
                doubles.append(path)
        pattern.append(re.escape(data[position:]))
        self._regex = re.compile(b"".join(pattern), re.DOTALL)
        self._doubles = struct.Struct("".join(double_fmt)).unpack_from
        self._blobs = struct.Struct("".join(blob_fmt)).unpack_from
        self.doubles: list[Path] = doubles
        self.blobs: list[Path] = blobs
        self.size = len(data)

    def read(self, data: bytes) -> tuple[tuple[float, ...], tuple[bytes, ...]] | None:
        """(doubles, blobs) of ``data`` shaped like the template, else None. The blobs end
        in an extra b"" (index ``len(self.blobs)``: an empty sub-message, for one absent)."""
        if len(data) != self.size or self._regex.fullmatch(data) is None:
            return None
        return self._doubles(data), (*self._blobs(data), b"")


def is_time(path: Path, field: FieldDescriptor) -> bool:
    """A Timestamp or Duration sub-message."""
    return field.message_type is not None and field.message_type.full_name in _TIME_TYPES


class TemplateCache:
    """Templates kept by serialized size (a value near 0 may come and go from the wire, so
    a message may take a few shapes in turn), with a budget for making new ones: ``MAX`` in
    a burst, then one per 50 reads, so a robot whose messages never repeat their shape costs
    the protobuf path plus a template now and then, not a template per message."""

    MAX = 16

    def __init__(self) -> None:
        self._by_size: dict[int, list[tuple[object, object]]] = {}
        self._tokens = float(self.MAX)
        self.reads = self.misses = 0

    def read(self, data: bytes, *args) -> tuple[object, object] | None:
        """(what the first matching template's ``read(data, *args)`` gave, the extra kept with
        that template), or None when no template of this size matches."""
        for template, extra in self._by_size.get(len(data), ()):
            result = template.read(data, *args)
            if result is not None:
                self.reads += 1
                self._tokens = min(self._tokens + 0.02, self.MAX)
                return result, extra
        self.misses += 1
        return None

    @property
    def may_learn(self) -> bool:
        return self._tokens >= 1

    def add(self, size: int, template: object, extra: object = None) -> None:
        self._tokens -= 1
        if sum(map(len, self._by_size.values())) >= self.MAX:
            self._by_size.clear()
        self._by_size.setdefault(size, []).append((template, extra))
