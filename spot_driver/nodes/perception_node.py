"""Publishes the robot's cameras (image, compressed, camera_info, depth, points) and lidar."""

import time

from bosdyn.api import image_pb2
from bosdyn.client.image import ImageClient
from bosdyn.client.point_cloud import PointCloudClient
from rclpy.node import Node
from rclpy.publisher import Publisher
from sensor_msgs.msg import CameraInfo, CompressedImage, PointCloud2
from sensor_msgs.msg import Image as ImageMsg

from spot_driver import qos
from spot_driver.acquisition import Scheduler, Stream, check_rate
from spot_driver.cameras import BODY_CAMERAS, UnknownCameraError, camera_sources
from spot_driver.connection import RobotConnection
from spot_driver.errors import describe
from spot_driver.perception import CameraSettings, CameraStream, LidarStream

_PIXEL_FORMATS = {
    "native": image_pb2.Image.PIXEL_FORMAT_UNKNOWN,
    "mono": image_pb2.Image.PIXEL_FORMAT_GREYSCALE_U8,
    "rgb": image_pb2.Image.PIXEL_FORMAT_RGB_U8,
}
ERROR_LOG_PERIOD = 5.0  # s between repeated error logs of one stream


class TopicOutput:
    """A publisher of serialized messages; with ``lazy``, only wanted while subscribed."""

    def __init__(self, publisher: Publisher, lazy: bool) -> None:
        self._publisher, self._lazy = publisher, lazy

    def wanted(self) -> bool:
        return not self._lazy or self._publisher.get_subscription_count() > 0

    def publish(self, data: bytes) -> None:
        self._publisher.publish(data)


class PerceptionNode(Node):
    """Streams every configured camera and the lidar through a pipelined scheduler."""

    def __init__(self, connection: RobotConnection, namespace: str = "") -> None:
        super().__init__("spot_perception", namespace=namespace)
        declare = self.declare_parameter
        self.cameras = list(declare("cameras", list(BODY_CAMERAS)).value)
        default_rate = float(declare("camera_rate", 15.0).value)
        self.rates = {c: float(declare(f"rates.{c}", default_rate).value) for c in self.cameras}
        raw = declare("publish_raw_images", True).value
        compressed = declare("publish_compressed_images", True).value
        depth = declare("publish_depth", True).value
        registered = declare("publish_depth_registered", False).value
        points = declare("publish_depth_points", False).value
        quality = int(declare("jpeg_quality", 75).value)
        color = declare("image_color", "native").value
        in_flight = int(declare("image_pipeline_depth", 2).value)
        lazy = declare("lazy_publishing", True).value
        lidar_source = declare("lidar_source", "velodyne-point-cloud").value
        lidar_rate = float(declare("lidar_rate", 10.0).value)
        workers = int(declare("perception_workers", 2).value)
        sensor_qos = declare("sensor_qos", "reliable").value
        if sensor_qos not in qos.SENSOR_PROFILES:
            raise ValueError(f"parameter sensor_qos must be one of {sorted(qos.SENSOR_PROFILES)}, "
                             f"not {sensor_qos!r}")
        self._sensor_qos = qos.SENSOR_PROFILES[sensor_qos]
        self.prefix = declare("frame_prefix", "").value
        if color not in _PIXEL_FORMATS:
            raise ValueError(f"parameter image_color must be one of {sorted(_PIXEL_FORMATS)}, "
                             f"not {color!r}")
        if not 1 <= quality <= 100:
            raise ValueError(f"parameter jpeg_quality must be in [1, 100], not {quality}")

        self._connection = connection
        self._last_error_log: dict[str, float] = {}
        self._lazy = lazy
        streams: list[Stream] = []
        if self.cameras:
            sources = self._list_sources()
            for camera in self.cameras:
                wants = dict(image=raw, compressed=compressed, info=raw or compressed,
                             depth=depth, depth_info=depth, registered=registered,
                             registered_info=registered, points=points)
                settings = CameraSettings(self.rates[camera], quality, _PIXEL_FORMATS[color],
                                          in_flight)
                stream = self._camera_stream(camera, color == "rgb", sources, wants, settings)
                if stream is not None:
                    streams.append(stream)
        if lidar_source:
            stream = self._lidar_stream(lidar_source, lidar_rate, in_flight)
            if stream is not None:
                streams.append(stream)
        self.streams = streams
        self._scheduler = Scheduler(streams, workers=workers, describe=describe)
        self._scheduler.start()
        self.get_logger().info(
            f"streaming {', '.join(s.name for s in streams) or 'nothing'}")

    # ------------------------------------------------------------------ setup
    def _list_sources(self) -> dict[str, image_pb2.ImageSource]:
        try:
            client = self._connection.client(ImageClient)
            return {s.name: s for s in client.list_image_sources(timeout=5.0)}
        except Exception as exc:
            self.get_logger().error(f"cannot list the robot's cameras: {describe(exc)}")
            return {}

    def _camera_stream(self, camera: str, color: bool,
                       sources: dict[str, image_pb2.ImageSource], wants: dict[str, bool],
                       settings: CameraSettings) -> CameraStream | None:
        log = self.get_logger()
        try:
            names = camera_sources(camera, color)
        except UnknownCameraError as exc:
            log.error(f"parameter cameras: {exc}")
            return None
        try:
            check_rate(f"camera {camera}", settings.rate)
        except ValueError as exc:
            log.error(str(exc))
            return None
        if names.visual not in sources:
            log.error(f"camera {camera}: the robot has no image source {names.visual!r} "
                      f"(it offers: {', '.join(sorted(sources)) or 'none'})")
            return None
        for kind, source in (("depth", names.depth), ("registered", names.registered)):
            if source not in sources and (wants[kind] or (kind == "depth" and wants["points"])):
                log.warning(f"camera {camera}: the robot has no {source!r}; no {kind} published")
                wants[kind] = wants[f"{kind}_info"] = False
                if kind == "depth":
                    wants["points"] = False
        topics = {
            "image": (ImageMsg, f"camera/{camera}/image"),
            "compressed": (CompressedImage, f"camera/{camera}/image/compressed"),
            "info": (CameraInfo, f"camera/{camera}/camera_info"),
            "depth": (ImageMsg, f"depth/{camera}/image"),
            "depth_info": (CameraInfo, f"depth/{camera}/camera_info"),
            "registered": (ImageMsg, f"depth_registered/{camera}/image"),
            "registered_info": (CameraInfo, f"depth_registered/{camera}/camera_info"),
            "points": (PointCloud2, f"depth/{camera}/points"),
        }
        outputs = {key: self._output(*topics[key]) for key, on in wants.items() if on}
        return CameraStream(names, sources, lambda: self._connection.client(ImageClient),
                            outputs, settings,
                            lambda: self._connection.skew_nsec, self.prefix, self._report)

    def _lidar_stream(self, source: str, rate: float, in_flight: int) -> LidarStream | None:
        log = self.get_logger()
        try:
            client = self._connection.client(PointCloudClient, source)
            available = [s.name for s in client.list_point_cloud_sources(timeout=5.0)]
        except Exception as exc:
            log.warning(f"no lidar: point-cloud service {source!r} unavailable "
                        f"({describe(exc)})")
            return None
        if source not in available:
            log.error(f"lidar: service {source!r} has no source {source!r} (it offers "
                      f"{', '.join(available) or 'none'})")
            return None
        try:
            check_rate("lidar (lidar_rate)", rate)
        except ValueError as exc:
            log.error(str(exc))
            return None
        return LidarStream(source, lambda: self._connection.client(PointCloudClient, source),
                           self._output(PointCloud2, "lidar/points"), rate,
                           lambda: self._connection.skew_nsec, self.prefix, self._report,
                           in_flight)

    def _output(self, msg_type, topic: str) -> TopicOutput:
        return TopicOutput(self.create_publisher(msg_type, topic, self._sensor_qos), self._lazy)

    def _report(self, message: str) -> None:
        """Log a stream's error, at most once per ERROR_LOG_PERIOD per stream."""
        stream = message.split(":", 1)[0]
        now = time.monotonic()
        if now - self._last_error_log.get(stream, -ERROR_LOG_PERIOD) >= ERROR_LOG_PERIOD:
            self._last_error_log[stream] = now
            self.get_logger().error(message)

    def stop_streaming(self) -> None:
        """Stop requesting and publishing (before the node goes away)."""
        self._scheduler.stop()

    def destroy_node(self) -> None:
        self.stop_streaming()
        super().destroy_node()
