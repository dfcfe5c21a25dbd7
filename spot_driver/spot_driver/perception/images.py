"""Spot images to ROS: pixel decoding, encodings, camera_info and depth to points.

Pure functions of their inputs; the one cache (per-pixel rays of a pinhole camera) lives in
``PinholeRays`` objects the caller owns.
"""

from dataclasses import dataclass

import numpy as np
import simplejpeg
from bosdyn.api import image_pb2
from sensor_msgs.msg import CameraInfo

from spot_driver.conversions.robot_data import RobotDataError
from spot_driver.conversions.time import local_time_msg

Image = image_pb2.Image


class ImageDecodeError(RobotDataError):
    """An image whose bytes do not match what its header announces."""


@dataclass(frozen=True)
class PixelLayout:
    encoding: str  # sensor_msgs/image_encodings name
    channels: int
    dtype: np.dtype


PIXEL_LAYOUTS = {
    Image.PIXEL_FORMAT_GREYSCALE_U8: PixelLayout("mono8", 1, np.dtype(np.uint8)),
    Image.PIXEL_FORMAT_RGB_U8: PixelLayout("rgb8", 3, np.dtype(np.uint8)),
    Image.PIXEL_FORMAT_RGBA_U8: PixelLayout("rgba8", 4, np.dtype(np.uint8)),
    Image.PIXEL_FORMAT_DEPTH_U16: PixelLayout("16UC1", 1, np.dtype("<u2")),
    Image.PIXEL_FORMAT_GREYSCALE_U16: PixelLayout("mono16", 1, np.dtype("<u2")),
}
_JPEG_SPACES = {1: "GRAY", 3: "RGB", 4: "RGBA"}


def pixel_layout(pixel_format: int) -> PixelLayout:
    layout = PIXEL_LAYOUTS.get(pixel_format)
    if layout is None:
        raise ImageDecodeError(f"unsupported pixel format {Image.PixelFormat.Name(pixel_format)}"
                               if pixel_format in Image.PixelFormat.values()
                               else f"unknown pixel format {pixel_format}")
    return layout


def row_step(image: Image) -> int:
    layout = pixel_layout(image.pixel_format)
    return image.cols * layout.channels * layout.dtype.itemsize


def raw_bytes(image: Image, data: bytes | None = None) -> bytes:
    """The RAW pixel bytes of ``image``, checked against its size and pixel format.

    Reading a protobuf bytes field copies it; pass ``data`` if you already hold it.
    """
    if image.format != Image.FORMAT_RAW:
        raise ImageDecodeError(f"expected a RAW image, got {Image.Format.Name(image.format)}")
    data = image.data if data is None else data
    expected = row_step(image) * image.rows
    if len(data) != expected:
        raise ImageDecodeError(f"RAW {image.cols}x{image.rows} image has {len(data)} bytes, "
                               f"expected {expected} (truncated or corrupt)")
    return data


def decode_pixels(image: Image, data: bytes | None = None) -> np.ndarray:
    """(rows, cols, channels) pixels of a RAW or JPEG image (``data``: its bytes, if held)."""
    layout = pixel_layout(image.pixel_format)
    data = image.data if data is None else data
    if image.format == Image.FORMAT_RAW:
        pixels = np.frombuffer(raw_bytes(image, data), dtype=layout.dtype)
        return pixels.reshape(image.rows, image.cols, layout.channels)
    if image.format == Image.FORMAT_JPEG:
        space = _JPEG_SPACES.get(layout.channels) if layout.dtype.itemsize == 1 else None
        if space is None:
            raise ImageDecodeError(f"JPEG cannot hold {layout.encoding} pixels")
        try:
            pixels = simplejpeg.decode_jpeg(data, colorspace=space)
        except ValueError as exc:
            raise ImageDecodeError(f"corrupt JPEG ({len(data)} bytes): {exc}") from None
        if pixels.shape[:2] != (image.rows, image.cols):
            raise ImageDecodeError(f"JPEG is {pixels.shape[1]}x{pixels.shape[0]}, header says "
                                   f"{image.cols}x{image.rows}")
        return pixels
    raise ImageDecodeError(f"unsupported image format {Image.Format.Name(image.format)}")


def compressed_format(pixel_format: int) -> str:
    """The CompressedImage ``format`` string image_transport uses for a robot JPEG."""
    encoding = pixel_layout(pixel_format).encoding
    return f"{encoding}; jpeg compressed {encoding}"


def camera_info(source: image_pb2.ImageSource, frame_id: str, stamp_nsec: int = 0) -> CameraInfo:
    """CameraInfo of a pinhole ImageSource: K, P and identity R, no distortion (plumb_bob)."""
    if not source.HasField("pinhole"):
        raise ImageDecodeError(f"image source {source.name!r} has no pinhole intrinsics")
    intrinsics = source.pinhole.intrinsics
    fx, fy = intrinsics.focal_length.x, intrinsics.focal_length.y
    cx, cy = intrinsics.principal_point.x, intrinsics.principal_point.y
    skew = intrinsics.skew.x
    info = CameraInfo(width=source.cols, height=source.rows, distortion_model="plumb_bob")
    info.header.frame_id = frame_id
    info.header.stamp = local_time_msg(stamp_nsec)
    info.d = [0.0] * 5
    info.k = [fx, skew, cx, 0.0, fy, cy, 0.0, 0.0, 1.0]
    info.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    info.p = [fx, skew, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    return info


class PinholeRays:
    """Per-pixel viewing rays (x/z, y/z) of a pinhole camera, for depth-to-points."""

    def __init__(self, cols: int, rows: int, fx: float, fy: float, cx: float, cy: float) -> None:
        self.shape = (rows, cols)
        self.x = ((np.arange(cols, dtype=np.float32) - cx) / fx)[None, :]
        self.y = ((np.arange(rows, dtype=np.float32) - cy) / fy)[:, None]

    @classmethod
    def of_source(cls, source: image_pb2.ImageSource) -> "PinholeRays":
        i = source.pinhole.intrinsics
        return cls(source.cols, source.rows, i.focal_length.x, i.focal_length.y,
                   i.principal_point.x, i.principal_point.y)

    def points(self, depth: np.ndarray, depth_scale: float) -> np.ndarray:
        """(N, 3) float32 points in the optical frame for the valid (non-zero) depth pixels."""
        return self._points(depth, depth_scale)[0]

    def colored_points(self, depth: np.ndarray, depth_scale: float, pixels: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
        """The valid depth pixels' points and (N, 3) uint8 colours from ``pixels``, an image
        of the same size (grey (rows, cols) or RGB (rows, cols, 3)) registered to the depth:
        the inputs of an XYZRGB cloud."""
        pixels = np.asarray(pixels)
        if pixels.shape[:2] != self.shape:
            raise ImageDecodeError(f"the image is {pixels.shape[1]}x{pixels.shape[0]} and its "
                                   f"registered depth {self.shape[1]}x{self.shape[0]}")
        xyz, (rows, cols) = self._points(depth, depth_scale)
        colours = pixels[rows, cols].reshape(len(rows), -1)
        if colours.shape[1] == 1:  # grey
            colours = np.repeat(colours, 3, axis=1)
        return xyz, np.ascontiguousarray(colours[:, :3], dtype=np.uint8)

    def _points(self, depth: np.ndarray, depth_scale: float):
        depth = np.asarray(depth).reshape(self.shape)
        if not depth_scale > 0:
            raise ImageDecodeError(f"depth_scale must be positive, got {depth_scale}")
        rows, cols = np.nonzero(depth)
        z = depth[rows, cols].astype(np.float32) * np.float32(1.0 / depth_scale)
        out = np.empty((len(z), 3), dtype=np.float32)
        np.multiply(self.x[0, cols], z, out=out[:, 0])
        np.multiply(self.y[rows, 0], z, out=out[:, 1])
        out[:, 2] = z
        return out, (rows, cols)
