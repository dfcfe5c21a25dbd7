"""Spot CAM camera images as ROS messages: pure functions of the image service's responses.

JPEG images pass through as CompressedImage (image_transport's ``compressed``); IR's
radiometric image (GREYSCALE_U16 raw) becomes ``32FC1`` kelvin, reading its counts as
centikelvin (0.01 K each: ours, unconfirmed on a robot, as for the media log).
"""

import numpy as np
from bosdyn.api import image_pb2
from sensor_msgs.msg import CompressedImage, Image

from spot_driver.conversions.robot_data import RobotDataError
from spot_driver.perception.images import compressed_format, decode_pixels

PixelFormat = image_pb2.Image
CENTIKELVIN = 0.01
OPTICAL = "spot_cam_ptz_optical"  # the PTZ's (and IR's) optical frame: z forward, x right
PTZ_CAMERAS = ("ptz", "ir")  # the cameras that turn with the PTZ (and have camera_info)


def compressed(image: image_pb2.Image, header) -> CompressedImage:
    if image.format != image.FORMAT_JPEG:
        raise RobotDataError(
            f"expected a JPEG image, got {image_pb2.Image.Format.Name(image.format)}")
    return CompressedImage(header=header, format=compressed_format(image.pixel_format),
                           data=image.data)


def kelvin(image: image_pb2.Image) -> np.ndarray:
    """Temperatures (rows, cols) float32 kelvin of a radiometric IR image."""
    if image.pixel_format != PixelFormat.PIXEL_FORMAT_GREYSCALE_U16:
        raise RobotDataError("expected IR's radiometric (GREYSCALE_U16) image")
    counts = decode_pixels(image)[..., 0]
    return counts.astype(np.float32) * np.float32(CENTIKELVIN)


def temperature_msg(temperatures: np.ndarray, header) -> Image:
    pixels = np.ascontiguousarray(temperatures, dtype=np.float32)
    return Image(header=header, height=pixels.shape[0], width=pixels.shape[1],
                 encoding="32FC1", is_bigendian=0, step=pixels.strides[0],
                 data=pixels.tobytes())
