"""Serialized (CDR) sensor_msgs Image, CompressedImage and PointCloud2, built around the data.

Images and clouds are mostly one big byte array. Building the rclpy message copies it element
by element; here the few header fields are packed into a small prefix and the payload is
joined on once, giving the bytes ``Publisher.publish`` accepts as an already serialized
message (little-endian XCDR1, as rmw_fastrtps writes it).
"""

import functools
import struct

import numpy as np

from spot_driver.conversions.cdr import ENCAPSULATION

NSEC = 1_000_000_000
_STAMP = struct.Struct("<iI")
_FLOAT32 = 7  # sensor_msgs/PointField.FLOAT32


class _Writer:
    """Appends CDR primitives, aligning relative to the end of the encapsulation header."""

    def __init__(self) -> None:
        self.buf = bytearray(ENCAPSULATION)

    def _align(self, size: int) -> None:
        self.buf += b"\x00" * ((-(len(self.buf) - 4)) % size)

    def u32(self, value: int) -> None:
        self._align(4)
        self.buf += struct.pack("<I", value)

    def u8(self, value: int) -> None:
        self.buf.append(value)

    def string(self, text: str) -> None:
        data = text.encode()
        self.u32(len(data) + 1)
        self.buf += data
        self.buf.append(0)

    def header(self, stamp_nsec: int, frame_id: str) -> None:
        stamp_nsec = max(int(stamp_nsec), 0)
        self.buf += _STAMP.pack(stamp_nsec // NSEC, stamp_nsec % NSEC)
        self.string(frame_id)


def image_cdr(stamp_nsec: int, frame_id: str, height: int, width: int, encoding: str,
              step: int, data) -> bytes:
    """sensor_msgs/Image with ``data`` (any bytes-like object of height * step bytes)."""
    head = bytearray(_image_head(frame_id, height, width, encoding, step,
                                 memoryview(data).nbytes))
    _put_stamp(head, stamp_nsec)
    return b"".join((head, data))


def compressed_image_cdr(stamp_nsec: int, frame_id: str, fmt: str, data) -> bytes:
    """sensor_msgs/CompressedImage with ``data`` (the JPEG bytes)."""
    head = bytearray(_compressed_head(frame_id, fmt, len(data)))
    _put_stamp(head, stamp_nsec)
    return b"".join((head, data))


# The fields before the payload repeat from frame to frame of a stream: built once, restamped.
@functools.lru_cache(maxsize=256)
def _image_head(frame_id: str, height: int, width: int, encoding: str, step: int,
                nbytes: int) -> bytes:
    w = _Writer()
    w.header(0, frame_id)
    w.u32(height)
    w.u32(width)
    w.string(encoding)
    w.u8(0)  # is_bigendian
    w.u32(step)
    w.u32(nbytes)
    return bytes(w.buf)


@functools.lru_cache(maxsize=256)
def _compressed_head(frame_id: str, fmt: str, nbytes: int) -> bytes:
    w = _Writer()
    w.header(0, frame_id)
    w.string(fmt)
    w.u32(nbytes)
    return bytes(w.buf)


def _put_stamp(buf: bytearray, stamp_nsec: int) -> None:
    stamp_nsec = max(int(stamp_nsec), 0)
    _STAMP.pack_into(buf, 4, stamp_nsec // NSEC, stamp_nsec % NSEC)


def point_cloud2_cdr(stamp_nsec: int, frame_id: str, xyz: np.ndarray,
                     rgb: np.ndarray | None = None) -> bytes:
    """Unorganised sensor_msgs/PointCloud2 with float32 fields x, y, z (12-byte points), and
    with ``rgb`` ((N, 3) uint8) a float32 field ``rgb`` packing 0x00RRGGBB as PCL and
    depth_image_proc's XYZRGB clouds do (16-byte points)."""
    xyz = np.ascontiguousarray(xyz, dtype="<f4").reshape(-1, 3)
    n = len(xyz)
    fields = ["x", "y", "z"]
    if rgb is None:
        data = xyz.view(np.uint8).reshape(-1)
    else:
        rgb = np.asarray(rgb, dtype=np.uint8).reshape(-1, 3)
        if len(rgb) != n:
            raise ValueError(f"{len(rgb)} colours for {n} points")
        packed = np.empty((n, 4), dtype="<f4")
        packed[:, :3] = xyz
        colour = packed[:, 3].view("<u4")
        colour[:] = (rgb[:, 0].astype(np.uint32) << 16) | (rgb[:, 1].astype(np.uint32) << 8) \
            | rgb[:, 2]
        data = packed.view(np.uint8).reshape(-1)
        fields.append("rgb")
    step = 4 * len(fields)
    w = _Writer()
    w.header(stamp_nsec, frame_id)
    w.u32(1)  # height
    w.u32(n)  # width
    w.u32(len(fields))
    for offset, name in enumerate(fields):
        w.string(name)
        w.u32(4 * offset)
        w.u8(_FLOAT32)
        w.u32(1)
    w.u8(0)  # is_bigendian
    w.u32(step)  # point_step
    w.u32(step * n)  # row_step
    w.u32(step * n)  # data length
    return b"".join((w.buf, data, b"\x01"))  # is_dense: no NaN points


def restamp(template: bytes, stamp_nsec: int) -> bytes:
    """A serialized message whose header comes first, with its stamp replaced."""
    buf = bytearray(template)
    _put_stamp(buf, stamp_nsec)
    return bytes(buf)
