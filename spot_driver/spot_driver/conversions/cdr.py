"""CDR serialization without rclpy messages: fixed layouts and shaped structs.

The names in a robot's joint list and frame tree do not change from one state to the next,
so everything but the numbers of joint_states, odometry and /tf is the same every cycle. A
``Layout`` is that constant byte image (little-endian XCDR1, as rmw_fastrtps writes it) cut
around its numeric slots into one ``struct`` format: filling it is a single pack of the
constant pieces interleaved with the numbers. Messages whose strings and sequences change
(the statuses) use a ``ShapedMessage``: one packer per shape, kept.
"""

import struct

ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR, little endian
_HEADER = len(ENCAPSULATION)


class LayoutWriter:
    """Builds a Layout field by field, recording where the numbers go."""

    def __init__(self) -> None:
        self.buf = bytearray(ENCAPSULATION)
        self.padding: list[int] = []  # byte offsets whose content is undefined
        self.slots: list[tuple[int, str]] = []  # (offset, struct codes), in order

    def _align(self, size: int) -> None:
        pad = (-(len(self.buf) - _HEADER)) % size
        self.padding.extend(range(len(self.buf), len(self.buf) + pad))
        self.buf += b"\x00" * pad

    def u32(self, value: int = 0) -> int:
        self._align(4)
        offset = len(self.buf)
        self.buf += struct.pack("<I", value)
        return offset

    def string(self, text: str) -> None:
        data = text.encode()
        self.u32(len(data) + 1)
        self.buf += data + b"\x00"

    def f64s(self, count: int) -> int:
        """A slot of ``count`` consecutive doubles; returns the offset of the first."""
        self._align(8)
        offset = len(self.buf)
        self.buf += b"\x00" * (8 * count)
        self.slots.append((offset, f"{count}d"))
        return offset

    def constant_f64s(self, values) -> None:
        """Doubles that are the same in every message (no slot)."""
        self._align(8)
        self.buf += struct.pack(f"<{len(values)}d", *values)

    def header(self, frame_id: str) -> int:
        """std_msgs/Header with a (sec, nanosec) stamp slot; returns the stamp's offset."""
        offset = self.u32()
        self.u32()
        self.slots.append((offset, "iI"))
        self.string(frame_id)
        return offset

    def finish(self) -> "Layout":
        return Layout(bytes(self.buf), self.padding, self.slots)


class Layout:
    """A message's constant bytes with numeric slots, filled per cycle through ``fill``."""

    def __init__(self, template: bytes, padding: list[int],
                 slots: list[tuple[int, str]]) -> None:
        self.template = template
        self.padding = padding
        fmt, self._constants, position = ["<"], [], 0
        for offset, codes in slots:
            fmt.append(f"{offset - position}s{codes}")
            self._constants.append(template[position:offset])
            position = offset + struct.calcsize("<" + codes)
        fmt.append(f"{len(template) - position}s")
        self._tail = template[position:]
        self._struct = struct.Struct("".join(fmt))
        if self._struct.size != len(template):
            raise ValueError("layout slots overlap or are out of order")

    def fill_stamp(self, stamp: tuple[int, int]) -> bytes:
        """``fill`` of a layout whose one slot is a header's stamp (sec, nanosec), without
        the loop (a message that repeats everything but its stamp)."""
        return self._struct.pack(self._constants[0], *stamp, self._tail)

    def fill(self, slot_values) -> bytes:
        """The message with one tuple of numbers per slot (in order) written in."""
        values = []
        for constant, numbers in zip(self._constants, slot_values, strict=True):
            values.append(constant)
            values += numbers
        values.append(self._tail)
        return self._struct.pack(*values)


_SIZES = {"B": 1, "i": 4, "I": 4, "f": 4, "d": 8, "Q": 8}


class ShapedMessage:
    """Packs one message type whose layout depends on its strings and sequences.

    ``spec`` lists the message's fields in order as struct codes (``B i I f d Q``), ``S`` for
    a string, ``D`` for a float64[] and a nested tuple for a sequence of that sub-spec. A
    message's shape gives, in the same order, each string's byte length and each sequence's
    count; one ``struct`` is compiled per shape seen (a few per robot) and kept.
    """

    MAX_SHAPES = 4096

    def __init__(self, spec: tuple) -> None:
        self.spec = spec
        self._structs: dict[tuple[int, ...], struct.Struct] = {}

    def pack(self, shape: tuple[int, ...], values: list) -> bytes:
        """``values``: the encapsulation header, then the field values, a string as
        (byte length + 1, bytes)."""
        packer = self._structs.get(shape)
        if packer is None:
            if len(self._structs) >= self.MAX_SHAPES:
                self._structs.clear()
            packer = self._structs[shape] = shaped_struct(self.spec, shape)
        return packer.pack(*values)


def shaped_struct(spec: tuple, shape: tuple[int, ...]) -> struct.Struct:
    """The packer of ``spec`` (see ShapedMessage) for one ``shape``; alignment padding is
    zeros (rclpy leaves it undefined)."""
    fmt = ["<4s"]
    offset = 0
    sizes = iter(shape)

    def field(code: str, size: int, count: int = 1) -> None:
        nonlocal offset
        pad = -offset % size
        fmt.append(f"{pad}x{count}{code}" if pad else f"{count}{code}")
        offset += pad + size * count

    def walk(items: tuple) -> None:
        for item in items:
            if isinstance(item, tuple):
                count = next(sizes)
                field("I", 4)
                for _ in range(count):
                    walk(item)
            elif item == "S":
                length = next(sizes) + 1
                field("I", 4)
                field("s", 1, length)
            elif item == "D":
                count = next(sizes)
                field("I", 4)
                if count:
                    field("d", 8, count)
            else:
                field(item, _SIZES[item])

    walk(spec)
    if next(sizes, None) is not None:
        raise ValueError("shape has more entries than the spec uses")
    return struct.Struct("".join(fmt))


def text(value: str) -> bytes:
    """A ROS string's bytes: UTF-8, cut at the first NUL as rclpy does."""
    data = value.encode()
    return data[:data.index(b"\x00")] if b"\x00" in data else data
