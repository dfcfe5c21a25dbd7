"""The robot's cameras and lidar: sources, intrinsics, and rendering of the scene.

Renders are cached by sensor pose, so a robot standing still serves every frame from memory
(including its JPEG bytes). Renders are made one at a time: a robot renders its cameras on
hardware of their own, never in the time of its other services, but here every service shares
one Python interpreter, and a dozen renders at once (a walking robot, cameras requested by
several lanes each) held it in turn while a velocity command waited 150-400 ms to be read.
One at a time, the rest of the robot waits for at most one render's share of the interpreter.
Tests inject faults per source: corrupt JPEG data, truncated depth buffers, or a slow camera.
"""

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np
import simplejpeg
from bosdyn.api import image_pb2, point_cloud_pb2
from bosdyn.client.math_helpers import SE3Pose

from spot_sim.body import kinematics
from spot_sim.perception import point_cloud_encoding
from spot_sim.perception.gripper_camera import MAX_RENDER_COLS, GripperCamera, Look
from spot_sim.perception.scene import NOTHING, Scene

Image = image_pb2.Image
VISUAL, DEPTH, DEPTH_IN_VISUAL = "visual", "depth", "depth_in_visual"
DEPTH_SCALE = 1000.0  # depth pixels are millimetres
MAX_DEPTH_M = 10.0
LIDAR_SOURCE = "velodyne-point-cloud"
LIDAR_FRAME = "sensor"
GRIPPER_CAMERA_FRAME = "hand_color_image_sensor"


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
            source.pixel_formats.extend(_VISUAL_FORMATS)
            source.image_formats.extend([Image.FORMAT_JPEG, Image.FORMAT_RAW])
        else:
            source.image_type = image_pb2.ImageSource.IMAGE_TYPE_DEPTH
            source.depth_scale = DEPTH_SCALE
            source.pixel_formats.append(Image.PIXEL_FORMAT_DEPTH_U16)
            source.image_formats.append(Image.FORMAT_RAW)
        return source


_VISUAL_FORMATS = (Image.PIXEL_FORMAT_GREYSCALE_U8, Image.PIXEL_FORMAT_RGB_U8,
                   Image.PIXEL_FORMAT_RGBA_U8)


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


def _pose_key(pose: SE3Pose) -> tuple:
    """Poses that agree to 0.1 mm / 1e-5 render the same image."""
    q = pose.rotation
    return tuple(round(v, 4) for v in (pose.x, pose.y, pose.z)) + tuple(
        round(v, 5) for v in (q.w, q.x, q.y, q.z))


class _Lru(OrderedDict):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key, value) -> None:
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)


class InvalidRequestError(ValueError):
    """A request the source cannot serve; carries the ImageResponse status to report."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Sensors:
    """Renders camera images and lidar scans of ``scene`` from given sensor poses in odom."""

    def __init__(self, has_arm: bool, color: bool, scene: Scene | None = None,
                 lidar_encoding: int = point_cloud_pb2.PointCloud.ENCODING_XYZ_32F) -> None:
        self.scene = scene or Scene()
        self.sources = camera_sources(has_arm, color)
        self.gripper_camera = GripperCamera() if has_arm else None
        self.lidar_encoding = lidar_encoding
        # Fault injection, by source name: "corrupt" (JPEG / depth bytes garbled), "truncated"
        # (data cut short), or a delay in seconds before the source answers.
        self.faults: dict[str, str] = {}
        self.delays: dict[str, float] = {}
        self._noises: dict[int, np.ndarray] = {}
        self._casts = _Lru(32)
        self._images = _Lru(64)
        self._lidar = _Lru(4)
        self._lock = threading.Lock()
        self._making = threading.RLock()  # one render at a time (a render may nest a cast)

    # ---------------------------------------------------------------- cameras
    def source(self, name: str) -> CameraSource | None:
        """Image source ``name`` as it is now (the gripper camera's follow its mode)."""
        source = self.sources.get(name)
        if source is None or self.gripper_camera is None or \
                source.frame != GRIPPER_CAMERA_FRAME:
            return source
        cols, rows = self.gripper_camera.size()
        if (cols, rows) == (source.model.cols, source.model.rows):
            return source
        return replace(source, model=source.model.resized(cols, rows))

    def listed(self) -> list[CameraSource]:
        """Every image source as ListImageSources reports it now."""
        return [self.source(name) for name in self.sources]

    def _look(self, source: CameraSource) -> Look:
        if self.gripper_camera is None or source.frame != GRIPPER_CAMERA_FRAME or \
                source.kind != VISUAL:
            return Look()
        return self.gripper_camera.look()

    def _cast(self, model: Pinhole, odom_tform_sensor: SE3Pose, key: tuple):
        def make():
            xs, ys = model.axes()
            origin = np.array([odom_tform_sensor.x, odom_tform_sensor.y, odom_tform_sensor.z])
            t, surface, world = self.scene.raycast_grid(
                origin, odom_tform_sensor.rotation.to_matrix(), xs, ys, MAX_DEPTH_M * 4)
            return t.ravel(), surface.ravel(), origin, world.reshape(3, -1)

        return self._cached(self._casts, (model, key), make)

    def _cached(self, cache: "_Lru", key, make):
        """``cache[key]``; on a miss made by one thread at a time, outside the cache's lock."""
        with self._lock:
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        with self._making:
            with self._lock:  # made meanwhile by the thread this one waited for
                if key in cache:
                    return cache[key]
            value = make()
            with self._lock:
                cache.put(key, value)
        return value

    def render(self, source: CameraSource, odom_tform_sensor: SE3Pose,
               pixel_format: int) -> np.ndarray:
        """The source's image (rows, cols[, channels]) in ``pixel_format`` from this pose."""
        key = _pose_key(odom_tform_sensor)
        look = self._look(source)
        return self._cached(self._images, (source.name, source.model, look, pixel_format, key),
                            lambda: self._scaled_render(source, odom_tform_sensor, pixel_format,
                                                        key, look))

    def _scaled_render(self, source, pose, pixel_format, key, look) -> np.ndarray:
        """``_render``, at most MAX_RENDER_COLS wide: larger images are scaled up from that."""
        model = source.model
        if model.cols <= MAX_RENDER_COLS:
            return self._render(source, pose, pixel_format, key, look)
        rows = round(model.rows * MAX_RENDER_COLS / model.cols)
        small = replace(source, model=model.resized(MAX_RENDER_COLS, rows))
        pixels = self._render(small, pose, pixel_format, key, look)
        row_index = np.arange(model.rows) * rows // model.rows
        col_index = np.arange(model.cols) * MAX_RENDER_COLS // model.cols
        return np.ascontiguousarray(pixels[row_index][:, col_index])

    def _noise(self, size: int) -> np.ndarray:
        """Fixed per-pixel sensor noise (+/-6 grey levels): realistic JPEG sizes."""
        noise = self._noises.get(size)
        if noise is None:
            noise = self._noises[size] = np.random.default_rng(size).integers(
                -6, 7, size, dtype=np.int16)
        return noise

    def _render(self, source, pose, pixel_format, key, look: Look) -> np.ndarray:
        t, surface, origin, directions = self._cast(source.model, pose, key)
        shape = (source.model.rows, source.model.cols)
        if source.kind != VISUAL:
            depth = np.where((surface != NOTHING) & (t <= MAX_DEPTH_M), t * DEPTH_SCALE, 0)
            return np.rint(depth).astype(np.uint16).reshape(shape)
        grey = self.scene.shade(surface, origin, directions, t)
        grey = np.clip(grey.astype(np.int16) + self._noise(len(grey)), 0, 255).astype(np.uint8)
        grey_sensor = source.native_format == Image.PIXEL_FORMAT_GREYSCALE_U8
        if pixel_format == Image.PIXEL_FORMAT_GREYSCALE_U8 and grey_sensor:
            return look.apply(grey, None)[0].reshape(shape)
        if grey_sensor:
            rgb = np.repeat(look.apply(grey, None)[0][:, None], 3, axis=1)
        else:
            rgb = look.apply(grey, self.scene.colorize(surface, grey))[1]
        if pixel_format == Image.PIXEL_FORMAT_GREYSCALE_U8:
            luma = rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
            return np.rint(luma).astype(np.uint8).reshape(shape)
        if pixel_format == Image.PIXEL_FORMAT_RGBA_U8:
            alpha = np.full((len(rgb), 1), 255, np.uint8)
            return np.concatenate([rgb, alpha], axis=1).reshape((*shape, 4))
        return rgb.reshape((*shape, 3))

    def image(self, request: image_pb2.ImageRequest, odom_tform_sensor: SE3Pose) -> Image:
        """Build the Image for one request; raises InvalidRequestError with the robot's status."""
        status = image_pb2.ImageResponse
        source = self.source(request.image_source_name)
        if source is None:
            raise InvalidRequestError(status.STATUS_UNKNOWN_CAMERA,
                                 f"no image source {request.image_source_name!r}")
        pixel_format = request.pixel_format or source.native_format
        image_format = request.image_format or (
            Image.FORMAT_JPEG if source.kind == VISUAL else Image.FORMAT_RAW)
        allowed = _VISUAL_FORMATS if source.kind == VISUAL else (Image.PIXEL_FORMAT_DEPTH_U16,)
        if pixel_format not in allowed:
            raise InvalidRequestError(status.STATUS_UNSUPPORTED_PIXEL_FORMAT_REQUESTED,
                                 f"{source.name} cannot produce pixel format {pixel_format}")
        if image_format not in (Image.FORMAT_RAW, Image.FORMAT_JPEG) or (
                source.kind != VISUAL and image_format != Image.FORMAT_RAW):
            raise InvalidRequestError(status.STATUS_UNSUPPORTED_IMAGE_FORMAT_REQUESTED,
                                 f"{source.name} cannot produce image format {image_format}")
        if request.resize_ratio not in (0.0, 1.0):
            raise InvalidRequestError(status.STATUS_UNSUPPORTED_RESIZE_RATIO_REQUESTED,
                                 "the simulated cameras do not resize")
        delay = self.delays.get(source.name, 0.0)
        if delay:
            time.sleep(delay)
        pixels = self.render(source, odom_tform_sensor, pixel_format)
        image = Image(cols=source.model.cols, rows=source.model.rows, format=image_format,
                      pixel_format=pixel_format)
        if image_format == Image.FORMAT_JPEG:
            quality = int(request.quality_percent) if request.quality_percent > 0 else 75
            image.data = self._jpeg(source, pixels, pixel_format, quality,
                                    (_pose_key(odom_tform_sensor), self._look(source)))
        else:
            image.data = pixels.tobytes()
        fault = self.faults.get(source.name)
        if fault == "corrupt":
            image.data = bytes(16) + image.data[16:]
        elif fault == "truncated":
            image.data = image.data[: len(image.data) // 2]
        return image

    def _jpeg(self, source, pixels, pixel_format, quality, key) -> bytes:
        def make():
            if pixel_format == Image.PIXEL_FORMAT_GREYSCALE_U8:
                return simplejpeg.encode_jpeg(pixels[..., None], quality, colorspace="GRAY")
            space = "RGBA" if pixel_format == Image.PIXEL_FORMAT_RGBA_U8 else "RGB"
            return simplejpeg.encode_jpeg(np.ascontiguousarray(pixels), quality,
                                          colorspace=space)

        return self._cached(self._images, ("jpeg", source.name, source.model, pixel_format,
                                           quality, key), make)

    # ---------------------------------------------------------------- lidar
    @staticmethod
    def lidar_rays(beams: int = 16, columns: int = 1800) -> np.ndarray:
        """Unit directions of a 16-beam spinning lidar (+/-15 deg, 0.2 deg steps), sensor frame."""
        elevation = np.deg2rad(np.linspace(-15.0, 15.0, beams))
        azimuth = np.linspace(-np.pi, np.pi, columns, endpoint=False)
        az, el = np.meshgrid(azimuth, elevation)
        return np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)],
                        axis=-1).reshape(-1, 3)

    def lidar_points(self, odom_tform_sensor: SE3Pose, max_range: float = 30.0) -> np.ndarray:
        """(N, 3) float32 returns in the sensor frame; beams with no return are dropped."""
        key = _pose_key(odom_tform_sensor)

        def make():
            rays = self.lidar_rays()
            rotation = odom_tform_sensor.rotation.to_matrix()
            origin = np.array([odom_tform_sensor.x, odom_tform_sensor.y, odom_tform_sensor.z])
            t, surface = self.scene.raycast(origin, rays @ rotation.T, max_range)
            hit = surface != NOTHING
            return (rays[hit] * t[hit, None]).astype(np.float32)

        return self._cached(self._lidar, key, make)

    def lidar_cloud(self, odom_tform_sensor: SE3Pose) -> point_cloud_pb2.PointCloud:
        """The scan from this pose in the configured encoding (data, num_points, parameters)."""
        points = self.lidar_points(odom_tform_sensor)
        encoding = self.lidar_encoding
        data, params = self._cached(self._lidar, (_pose_key(odom_tform_sensor), encoding),
                                    lambda: point_cloud_encoding.encode(points, encoding))
        cloud = point_cloud_pb2.PointCloud(num_points=len(points), encoding=encoding, data=data)
        if params is not None:
            cloud.encoding_parameters.CopyFrom(
                params.to_proto(point_cloud_encoding.bytes_per_point(encoding)))
        return cloud
