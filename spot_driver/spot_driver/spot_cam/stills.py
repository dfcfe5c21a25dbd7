"""Spot CAM media-log stills as ROS images and files: pure functions of the logpoint and the
bytes the Spot CAM returned.

The Spot CAM returns the panorama and IR as JPEG, other cameras as raw RGB24, and IR's raw
data as 16-bit big-endian radiometric counts, read here as centikelvin (0.01 K per count, the
unit of common radiometric thermal cores; ours, unconfirmed on a robot) and published as
``32FC1`` kelvin.
"""

import io
from dataclasses import dataclass

import numpy as np
import simplejpeg
from bosdyn.api import image_pb2
from PIL import Image as PilImage
from sensor_msgs.msg import Image

from spot_driver.conversions.robot_data import RobotDataError
from spot_msgs.msg import Logpoint

PixelFormat = image_pb2.Image
_STATUS = {0: "FAILED", 1: "QUEUED", 2: "COMPLETE", -1: "UNKNOWN"}
CENTIKELVIN = 0.01


class StillError(RobotDataError):
    """Bytes that are not the image the logpoint describes."""


def logpoint_msg(point, stamp) -> Logpoint:
    """A ``spot_cam.Logpoint`` as a message (``stamp``: its local builtin Time)."""
    return Logpoint(name=point.name, tag=point.tag, status=_STATUS.get(point.status, "UNKNOWN"),
                    stamp=stamp, width=point.image_params.width,
                    height=point.image_params.height)


@dataclass(frozen=True)
class Still:
    """Decoded pixels, their ROS encoding, and the file form the Spot CAM's bytes take."""

    pixels: np.ndarray
    encoding: str
    suffix: str  # .jpg (the JPEG as sent), .png (RGB) or .tiff (kelvin floats)


def decode(point, data: bytes) -> Still:
    """The still in ``data`` as pixels (StillError when they do not fit the logpoint)."""
    width, height = point.image_params.width, point.image_params.height
    if data[:2] == b"\xff\xd8":
        pixels = simplejpeg.decode_jpeg(data, colorspace="RGB")
        return Still(pixels, "rgb8", ".jpg")
    if point.image_params.format == PixelFormat.PIXEL_FORMAT_GREYSCALE_U16:
        if len(data) != width * height * 2:
            raise StillError(f"{len(data)} bytes are not a {width}x{height} 16-bit image")
        counts = np.frombuffer(data, ">u2").reshape(height, width)
        return Still((counts * CENTIKELVIN).astype(np.float32), "32FC1", ".tiff")
    if len(data) != width * height * 3:
        raise StillError(f"{len(data)} bytes are not a {width}x{height} RGB24 image")
    return Still(np.frombuffer(data, np.uint8).reshape(height, width, 3), "rgb8", ".png")


def image_msg(still: Still, header) -> Image:
    pixels = np.ascontiguousarray(still.pixels)
    height, width = pixels.shape[:2]
    return Image(header=header, height=height, width=width, encoding=still.encoding,
                 is_bigendian=0, step=pixels.strides[0], data=pixels.tobytes())


def file_bytes(still: Still, data: bytes) -> bytes:
    """What to write for the still: the JPEG as received, else PNG or float TIFF."""
    if still.suffix == ".jpg":
        return data
    out = io.BytesIO()
    PilImage.fromarray(np.ascontiguousarray(still.pixels)).save(
        out, format="TIFF" if still.encoding == "32FC1" else "PNG")
    return out.getvalue()
