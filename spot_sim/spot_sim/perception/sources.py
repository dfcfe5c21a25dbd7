"""The robot's image sources as ListImageSources reports them: names, sensor frames, pinhole
intrinsics and the formats each produces; and the lidar's source name and frame."""

from dataclasses import dataclass

import numpy as np
from bosdyn.api import image_pb2

from spot_sim.body import kinematics

Image = image_pb2.Image
VISUAL, DEPTH, DEPTH_IN_VISUAL = "visual", "depth", "depth_in_visual"
DEPTH_SCALE = 1000.0  # depth pixels are millimetres
LIDAR_SOURCE = "velodyne-point-cloud"
LIDAR_FRAME = "sensor"
GRIPPER_CAMERA_FRAME = "hand_color_image_sensor"
VISUAL_FORMATS = (Image.PIXEL_FORMAT_GREYSCALE_U8, Image.PIXEL_FORMAT_RGB_U8,
                  Image.PIXEL_FORMAT_RGBA_U8)


@dataclass(frozen=True)
class Pinhole:
    cols: int
    rows: int
    fx: float
    fy: float
    cx: float
    cy: float

    def resized(self, cols: int, rows: int) -> "Pinhole":
        """The same lens at another resolution: horizontal field of view kept, square
        pixels, centred."""
        fx = self.fx * cols / self.cols
        return Pinhole(cols, rows, fx, fx, (cols - 1) / 2.0, (rows - 1) / 2.0)

    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        """Camera-frame ray slopes: x of each column and y of each row (unit z), increasing."""
        return ((np.arange(self.cols, dtype=np.float32) - self.cx) / self.fx,
                (np.arange(self.rows, dtype=np.float32) - self.cy) / self.fy)


VISUAL_MODEL = Pinhole(640, 480, 280.0, 280.0, 319.5, 239.5)
DEPTH_MODEL = Pinhole(424, 240, 212.0, 212.0, 211.5, 119.5)
HAND_DEPTH_MODEL = Pinhole(224, 172, 210.0, 210.0, 111.5, 85.5)


@dataclass(frozen=True)
class CameraSource:
    """One image source as ListImageSources reports it."""

    name: str
    kind: str  # VISUAL, DEPTH or DEPTH_IN_VISUAL
    frame: str  # the sensor frame in the robot's frame tree
    model: Pinhole
    native_format: int  # Image.PixelFormat the sensor produces

    def to_proto(self) -> image_pb2.ImageSource:
        source = image_pb2.ImageSource(name=self.name, cols=self.model.cols,
                                       rows=self.model.rows)
        intrinsics = source.pinhole.intrinsics
        intrinsics.focal_length.x, intrinsics.focal_length.y = self.model.fx, self.model.fy
        intrinsics.principal_point.x = self.model.cx
        intrinsics.principal_point.y = self.model.cy
        if self.kind == VISUAL:
            source.image_type = image_pb2.ImageSource.IMAGE_TYPE_VISUAL
            source.pixel_formats.extend(VISUAL_FORMATS)
            source.image_formats.extend([Image.FORMAT_JPEG, Image.FORMAT_RAW])
        else:
            source.image_type = image_pb2.ImageSource.IMAGE_TYPE_DEPTH
            source.depth_scale = DEPTH_SCALE
            source.pixel_formats.append(Image.PIXEL_FORMAT_DEPTH_U16)
            source.image_formats.append(Image.FORMAT_RAW)
        return source


def camera_sources(has_arm: bool, color: bool) -> dict[str, CameraSource]:
    """Every image source of a robot: five body cameras (+ the gripper camera with an arm)."""
    visual_format = Image.PIXEL_FORMAT_RGB_U8 if color else Image.PIXEL_FORMAT_GREYSCALE_U8
    sources = []
    for cam in kinematics.BODY_CAMERAS:
        sources += [
            CameraSource(f"{cam}_fisheye_image", VISUAL, f"{cam}_fisheye", VISUAL_MODEL,
                         visual_format),
            CameraSource(f"{cam}_depth", DEPTH, cam, DEPTH_MODEL, Image.PIXEL_FORMAT_DEPTH_U16),
            CameraSource(f"{cam}_depth_in_visual_frame", DEPTH_IN_VISUAL, f"{cam}_fisheye",
                         VISUAL_MODEL, Image.PIXEL_FORMAT_DEPTH_U16),
        ]
    if has_arm:
        color_frame = GRIPPER_CAMERA_FRAME
        sources += [
            CameraSource("hand_color_image", VISUAL, color_frame, VISUAL_MODEL,
                         Image.PIXEL_FORMAT_RGB_U8),
            CameraSource("hand_image", VISUAL, color_frame, VISUAL_MODEL,
                         Image.PIXEL_FORMAT_GREYSCALE_U8),
            CameraSource("hand_depth", DEPTH, "hand_depth_sensor", HAND_DEPTH_MODEL,
                         Image.PIXEL_FORMAT_DEPTH_U16),
            CameraSource("hand_depth_in_hand_color_frame", DEPTH_IN_VISUAL, color_frame,
                         VISUAL_MODEL, Image.PIXEL_FORMAT_DEPTH_U16),
            # the other way round, as a robot with an arm offers it: the colour image as the
            # depth sensor sees the scene (its pose and intrinsics)
            CameraSource("hand_color_in_hand_depth_frame", VISUAL, "hand_depth_sensor",
                         HAND_DEPTH_MODEL, Image.PIXEL_FORMAT_RGB_U8),
        ]
    return {s.name: s for s in sources}
