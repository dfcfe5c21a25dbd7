"""The robot's cameras and lidar as its services see them: which sources there are, what a
request may ask of them, and their images and scans from given sensor poses.

Renders run in a ``RenderPool`` (worker processes by default, as a robot renders its cameras
on hardware of its own) and are cached here by sensor pose, so a robot standing still serves
every frame from memory (its JPEG bytes included) without asking a worker. Tests inject
faults per source: corrupt JPEG data, truncated depth buffers, or a slow camera.
"""

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from bosdyn.api import image_pb2, point_cloud_pb2
from bosdyn.client.math_helpers import SE3Pose

from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.perception import point_cloud_encoding
from spot_sim.perception.gripper_camera import GripperCamera, Look
from spot_sim.perception.render_pool import RenderPool, RendersStoppedError
from spot_sim.perception.renderer import Lru, Pose
from spot_sim.perception.scene import Scene
from spot_sim.perception.sources import (
    GRIPPER_CAMERA_FRAME,
    VISUAL,
    VISUAL_FORMATS,
    CameraSource,
    camera_sources,
)

Image = image_pb2.Image
DEFAULT_RENDER_WORKERS = 2


def _pose(pose: SE3Pose) -> Pose:
    q = pose.rotation
    return (pose.x, pose.y, pose.z, q.w, q.x, q.y, q.z)


def _pose_key(pose: SE3Pose) -> tuple:
    """Poses that agree to 0.1 mm / 1e-5 render the same image."""
    q = pose.rotation
    return tuple(round(v, 4) for v in (pose.x, pose.y, pose.z)) + tuple(
        round(v, 5) for v in (q.w, q.x, q.y, q.z))


class InvalidRequestError(ValueError):
    """A request the source cannot serve; carries the ImageResponse status to report."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Sensors:
    """The image sources and lidar of one robot, rendering ``scene`` from given sensor poses
    in odom with ``render_workers`` worker processes (0: in this process)."""

    def __init__(self, has_arm: bool, color: bool, scene: Scene | None = None,
                 lidar_encoding: int = point_cloud_pb2.PointCloud.ENCODING_XYZ_32F,
                 render_workers: int = DEFAULT_RENDER_WORKERS) -> None:
        self.scene = scene or Scene()
        self.sources = camera_sources(has_arm, color)
        self.gripper_camera = GripperCamera() if has_arm else None
        self.lidar_encoding = lidar_encoding
        # Fault injection, by source name: "corrupt" (JPEG / depth bytes garbled), "truncated"
        # (data cut short), or a delay in seconds before the source answers.
        self.faults: dict[str, str] = {}
        self.delays: dict[str, float] = {}
        self.renders = RenderPool(self.scene, render_workers)
        # the lidar is a payload of its own (a robot's EAP), not one more camera: its scans
        # never queue behind the cameras' renders
        self.lidar_renders = RenderPool(self.scene, min(render_workers, 1))
        # one GetImage's requests (a camera's visual and depth) rendered at once, one a worker
        self._askers = ThreadPoolExecutor(max(1, 2 * render_workers),
                                          thread_name_prefix="spot-sim-image")
        self._images = Lru(64)
        self._lidar = Lru(4)
        self._lock = OrderedLock("sensor caches", LEAF)  # guards the two caches

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

    def _cached(self, cache: Lru, key, make):
        """``cache[key]``, made on a miss outside the cache's lock (two threads missing the
        same key at once both make it: the same bytes)."""
        with self._lock:
            if key in cache:
                cache.move_to_end(key)
                return cache[key]
        value = make()
        with self._lock:
            cache.put(key, value)
        return value

    def _checked(self, request: image_pb2.ImageRequest) -> tuple[CameraSource, int, int]:
        """The source, pixel format and image format a request asks for; raises
        InvalidRequestError with the robot's status for one it cannot serve."""
        status = image_pb2.ImageResponse
        source = self.source(request.image_source_name)
        if source is None:
            raise InvalidRequestError(status.STATUS_UNKNOWN_CAMERA,
                                      f"no image source {request.image_source_name!r}")
        pixel_format = request.pixel_format or source.native_format
        image_format = request.image_format or (
            Image.FORMAT_JPEG if source.kind == VISUAL else Image.FORMAT_RAW)
        allowed = VISUAL_FORMATS if source.kind == VISUAL else (Image.PIXEL_FORMAT_DEPTH_U16,)
        if pixel_format not in allowed:
            raise InvalidRequestError(status.STATUS_UNSUPPORTED_PIXEL_FORMAT_REQUESTED,
                                      f"{source.name} cannot produce pixel format "
                                      f"{pixel_format}")
        if image_format not in (Image.FORMAT_RAW, Image.FORMAT_JPEG) or (
                source.kind != VISUAL and image_format != Image.FORMAT_RAW):
            raise InvalidRequestError(status.STATUS_UNSUPPORTED_IMAGE_FORMAT_REQUESTED,
                                      f"{source.name} cannot produce image format "
                                      f"{image_format}")
        if request.resize_ratio not in (0.0, 1.0):
            raise InvalidRequestError(status.STATUS_UNSUPPORTED_RESIZE_RATIO_REQUESTED,
                                      "the simulated cameras do not resize")
        return source, pixel_format, image_format

    def image(self, request: image_pb2.ImageRequest, odom_tform_sensor: SE3Pose) -> Image:
        """Build the Image for one request; raises InvalidRequestError with the robot's status."""
        source, pixel_format, image_format = self._checked(request)
        delay = self.delays.get(source.name, 0.0)
        if delay:
            time.sleep(delay)
        quality = None
        if image_format == Image.FORMAT_JPEG:
            quality = int(request.quality_percent) if request.quality_percent > 0 else 75
        look = self._look(source)
        key = (source.name, source.model, look, pixel_format, quality,
               _pose_key(odom_tform_sensor))
        try:
            data = self._cached(self._images, key, lambda: self.renders.encoded(
                source, _pose(odom_tform_sensor), pixel_format, look, quality))
        except RendersStoppedError as exc:  # a request in flight as the robot stops
            raise InvalidRequestError(image_pb2.ImageResponse.STATUS_IMAGE_DATA_ERROR,
                                      str(exc)) from exc
        fault = self.faults.get(source.name)
        if fault == "corrupt":
            data = bytes(16) + data[16:]
        elif fault == "truncated":
            data = data[: len(data) // 2]
        return Image(cols=source.model.cols, rows=source.model.rows, format=image_format,
                     pixel_format=pixel_format, data=data)

    def images(self, asks: list[tuple[image_pb2.ImageRequest, SE3Pose]]
               ) -> list[Image | InvalidRequestError]:
        """``image`` of each (request, sensor pose), rendered at once on the workers; a
        request that cannot be served gives its InvalidRequestError in its place."""
        def one(ask):
            try:
                return self.image(*ask)
            except InvalidRequestError as exc:
                return exc

        if len(asks) < 2 or not self.renders.workers:
            return [one(ask) for ask in asks]
        return list(self._askers.map(one, asks))

    # ---------------------------------------------------------------- lidar
    def _scan(self, odom_tform_sensor: SE3Pose, encoding: int):
        return self._cached(self._lidar, (_pose_key(odom_tform_sensor), encoding),
                            lambda: self.lidar_renders.lidar(_pose(odom_tform_sensor), encoding))

    def lidar_points(self, odom_tform_sensor: SE3Pose):
        """(N, 3) float32 returns in the sensor frame; beams with no return are dropped."""
        return self._scan(odom_tform_sensor, self.lidar_encoding)[0]

    def lidar_cloud(self, odom_tform_sensor: SE3Pose) -> point_cloud_pb2.PointCloud:
        """The scan from this pose in the configured encoding (data, num_points, parameters)."""
        encoding = self.lidar_encoding
        points, data, params = self._scan(odom_tform_sensor, encoding)
        cloud = point_cloud_pb2.PointCloud(num_points=len(points), encoding=encoding, data=data)
        if params is not None:
            cloud.encoding_parameters.CopyFrom(
                params.to_proto(point_cloud_encoding.bytes_per_point(encoding)))
        return cloud

    def start(self) -> None:
        """Start the renderers now rather than at the first request (returns at once)."""
        self.renders.start()
        self.lidar_renders.start()

    def close(self) -> None:
        """Stop the renderers."""
        self._askers.shutdown(wait=False, cancel_futures=True)
        self.renders.close()
        self.lidar_renders.close()
