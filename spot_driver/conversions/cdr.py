"""Fixed CDR layouts: serialize ROS messages by writing numbers into a prepared template.

The names in a robot's joint list and frame tree do not change from one state to the next,
so everything but the numbers of joint_states, odometry and /tf is the same every cycle. A
``Layout`` is that constant byte image (little-endian XCDR1, as rmw_fastrtps writes it) plus
the offsets of its numeric slots; filling one is a copy and a few numpy stores.
"""

import struct

_ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR, little endian
_HEADER = len(_ENCAPSULATION)


class LayoutWriter:
    """Builds a Layout field by field, recording where the numbers go."""

    def __init__(self) -> None:
        self.buf = bytearray(_ENCAPSULATION)
        self.padding: list[int] = []  # byte offsets whose content is undefined

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
        """``count`` consecutive doubles; returns the offset of the first."""
        self._align(8)
        offset = len(self.buf)
        self.buf += b"\x00" * (8 * count)
        return offset

    def header(self, frame_id: str) -> int:
        """std_msgs/Header; returns the offset of stamp.sec (stamp.nanosec follows)."""
        offset = self.u32()
        self.u32()
        self.string(frame_id)
        return offset

    def finish(self) -> "Layout":
        return Layout(bytes(self.buf), self.padding)


class Layout:
    """A message's constant bytes, filled per cycle through ``fill``."""

    def __init__(self, template: bytes, padding: list[int]) -> None:
        self.template = template
        self.padding = padding

    def fill(self, stamps, stamp_offsets: list[int], values, runs: "Runs") -> bytes:
        """The template with ``stamps`` (sec, nanosec) and the doubles ``values`` written in."""
        buf = bytearray(self.template)
        for offset, (sec, nanosec) in zip(stamp_offsets, stamps, strict=True):
            _STAMP.pack_into(buf, offset, sec, nanosec)
        start = 0
        for offset, packer in runs.packers:
            end = start + packer.size // 8
            packer.pack_into(buf, offset, *values[start:end])
            start = end
        return bytes(buf)


_STAMP = struct.Struct("<iI")


class Runs:
    """Contiguous runs of doubles, as (offset, count), each with its own packer."""

    def __init__(self, runs: list[tuple[int, int]]) -> None:
        self.packers = [(offset, struct.Struct(f"<{count}d")) for offset, count in runs]
