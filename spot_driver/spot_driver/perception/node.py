"""Publishes the robot's cameras (image, compressed, camera_info, depth, points, XYZRGB points),
the front cameras stitched, and lidar."""

import time

from bosdyn.api import image_pb2
from builtin_interfaces.msg import Time
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.publisher import Publisher
from sensor_msgs.msg import CameraInfo, CompressedImage, PointCloud2
from sensor_msgs.msg import Image as ImageMsg
from tf2_msgs.msg import TFMessage

from spot_driver.core import qos
from spot_driver.core.acquisition import (
    DEFAULT_MAX_IN_FLIGHT,
    Scheduler,
    Stream,
    StreamStats,
    check_rate,
)
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import describe
from spot_driver.description import frame_names as naming
from spot_driver.description import robot_model
from spot_driver.nodes.parameters import declare, on_change
from spot_driver.nodes.triggers import answer_callback
from spot_driver.perception import gripper_camera, stitching
from spot_driver.perception.cameras import (
    BODY_CAMERAS,
    KNOWN_CAMERAS,
    UnknownCameraError,
    camera_sources,
)
from spot_driver.perception.extrinsics import WRIST_IN_IMAGES, SensorMounts
from spot_driver.perception.sensors import RobotSensors
from spot_driver.perception.streams import (
    CameraSettings,
    CameraStream,
    LidarStream,
    StitchedStream,
)
from spot_msgs.srv import GetGripperCameraParameters, SetGripperCameraParameters

_PIXEL_FORMATS = {
    "native": image_pb2.Image.PIXEL_FORMAT_UNKNOWN,
    "mono": image_pb2.Image.PIXEL_FORMAT_GREYSCALE_U8,
    "rgb": image_pb2.Image.PIXEL_FORMAT_RGB_U8,
}
ERROR_LOG_PERIOD = 5.0  # s between repeated error logs of one stream
ALL_CAMERAS = KNOWN_CAMERAS
CAMERA_RATES = (0.1, 30.0)  # Hz a camera_rate / rates.<camera> may take
NO_WAIT = Duration(seconds=0)


class TopicOutput:
    """A publisher of serialized messages; with ``lazy``, only wanted while subscribed.

    With ``pace``, it is not wanted while a reliable reader has not yet acknowledged the
    previous message, so the frame is not even asked of the robot; one fetched meanwhile is
    dropped (and counted): a reader behind a slow link gets fewer frames instead of queueing
    them in front of every other topic, and neither the robot nor the driver spends CPU on
    frames nobody could receive (doc/across_the_robot.md)."""

    def __init__(self, publisher: Publisher, lazy: bool, pace: bool = False) -> None:
        self._publisher, self._lazy, self._pace = publisher, lazy, pace
        self.dropped = 0
        self.stats: StreamStats | None = None  # the stream's, which diagnostics read

    def wanted(self) -> bool:
        if self._lazy and self._publisher.get_subscription_count() == 0:
            return False
        return not self._held()

    def _held(self) -> bool:
        """Paced, and a reader has not yet acknowledged the last message."""
        return self._pace and not self._publisher.wait_for_all_acked(NO_WAIT)

    def publish(self, data: bytes) -> None:
        if self._held():
            self.dropped += 1
            if self.stats is not None:
                self.stats.dropped += 1
            return
        self._publisher.publish(data)


class PerceptionNode(Node):
    """Streams every configured camera and the lidar through a pipelined scheduler."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_perception", namespace=context.namespace)
        connection = context.connection
        self.cameras = list(declare(self, "cameras", list(BODY_CAMERAS), read_only=False))
        self.default_rate = float(declare(self, "camera_rate", 15.0, read_only=False,
                                          bounds=CAMERA_RATES))
        self.rates = {c: float(declare(self, f"rates.{c}", self.default_rate, read_only=False,
                                       bounds=CAMERA_RATES,
                                       description=f"Hz of camera {c} (default: camera_rate)"))
                      for c in ALL_CAMERAS}
        raw = declare(self, "publish_raw_images", True)
        compressed = declare(self, "publish_compressed_images", True)
        depth = declare(self, "publish_depth", True)
        registered = declare(self, "publish_depth_registered", False)
        points = declare(self, "publish_depth_points", False)
        colored = declare(self, "publish_depth_registered_points", False)
        stitched = declare(self, "publish_stitched_front", False)
        self._stitched_rate = float(declare(self, "stitched_front_rate", 10.0,
                                            bounds=CAMERA_RATES))
        quality = int(declare(self, "jpeg_quality", 75, bounds=(1, 100)))
        color = declare(self, "image_color", "native")
        in_flight = int(declare(self, "max_in_flight", DEFAULT_MAX_IN_FLIGHT, bounds=(1, 32)))
        lazy = declare(self, "lazy_publishing", True)
        self._pace = declare(self, "pace_slow_readers", False)
        lidar_source = declare(self, "lidar_source", "velodyne-point-cloud")
        lidar_rate = float(declare(self, "lidar_rate", 10.0, read_only=False,
                                   bounds=(0.1, 20.0)))
        sensor_qos = declare(self, "sensor_qos", "reliable")
        if sensor_qos not in qos.SENSOR_PROFILES:
            raise ValueError(f"parameter sensor_qos must be one of "
                             f"{sorted(qos.SENSOR_PROFILES)}, not {sensor_qos!r}")
        self._sensor_qos = qos.SENSOR_PROFILES[sensor_qos]
        self.prefix = declare(self, "frame_prefix", "")
        if color not in _PIXEL_FORMATS:
            raise ValueError(f"parameter image_color must be one of {sorted(_PIXEL_FORMATS)}, "
                             f"not {color!r}")

        self._connection = connection
        self._cache = context.cache
        self.sensors = RobotSensors(connection)
        rsp = declare(self, "robot_state_publisher", False)
        self._model_frames = robot_model.link_names(has_arm=True) if rsp else frozenset()
        self._tf_static = self.create_publisher(TFMessage, "/tf_static", qos.LATCHED)
        names = naming.renames(naming.check(declare(self, "frame_names", "spot")),
                               robot_model.link_names(has_arm=True))
        self.mounts = SensorMounts(self.prefix, {} if rsp else dict(WRIST_IN_IMAGES),
                                   lambda transforms: self._tf_static.publish(
                                       TFMessage(transforms=transforms)), names)
        self._last_error_log: dict[str, float] = {}
        self.outputs: dict[str, TopicOutput] = {}  # by topic (diagnostics count drops)
        self._lazy = lazy
        self._color = color
        self._wants = dict(image=raw, compressed=compressed, info=raw or compressed,
                           depth=depth, depth_info=depth, registered=registered,
                           registered_info=registered, points=points,
                           registered_points=colored)
        self._settings = (quality, _PIXEL_FORMATS[color], in_flight)
        self._sources: dict[str, image_pb2.ImageSource] | None = None
        self.camera_streams: dict[str, CameraStream] = {}
        self.streams: list[Stream] = []  # every stream made so far (diagnostics read it)
        for camera in self.cameras:
            self._add_camera(camera)
        if stitched:
            stream = self._stitched_stream(in_flight)
            if stream is not None:
                self.streams.append(stream)
        self.lidar = self._lidar_stream(lidar_source, lidar_rate, in_flight) \
            if lidar_source else None
        if self.lidar is not None:
            self.streams.append(self.lidar)
        self._scheduler = Scheduler(self.streams, describe=describe,
                                    robot_time=context.connection.robot_time.take)
        context.streams.append(lambda: self.streams)
        self._scheduler.start()
        self.get_logger().info(
            f"streaming {', '.join(s.name for s in self.streams) or 'nothing'}")
        on_change(self, {
            "cameras": (self._check_cameras, self._select_cameras),
            "camera_rate": (None, self._set_default_rate),
            **{f"rates.{c}": (None, lambda rate, c=c: self._set_rate(c, rate))
               for c in ALL_CAMERAS},
            "lidar_rate": (None, lambda rate: self.lidar is not None
                           and self.lidar.set_rate(rate)),
        })

        settings = MutuallyExclusiveCallbackGroup()
        for srv_type, name, fill in (
                (GetGripperCameraParameters, "gripper_camera/get_parameters",
                 self._get_gripper_camera),
                (SetGripperCameraParameters, "gripper_camera/set_parameters",
                 self._set_gripper_camera)):
            self.create_service(srv_type, name, answer_callback(self.get_logger(), name, fill),
                                qos_profile=qos.SERVICES, callback_group=settings)

    # ------------------------------------------------------------------ gripper camera
    def _get_gripper_camera(self, request, response) -> str:
        response.params = gripper_camera.from_proto(self.sensors.gripper_camera_params())
        return "gripper camera settings"

    def _set_gripper_camera(self, request, response) -> str:
        params = gripper_camera.to_proto(request.params, list(request.fields))
        response.params = gripper_camera.from_proto(self.sensors.set_gripper_camera_params(params))
        return f"gripper camera: set {', '.join(request.fields)}"

    def _robot_sources(self) -> dict[str, image_pb2.ImageSource]:
        if not self._sources:
            self._sources = self._list_sources()
        return self._sources

    def _check_cameras(self, cameras: list[str]) -> str:
        sources = self._robot_sources()
        for camera in cameras:
            try:
                names = camera_sources(camera, self._color == "rgb")
            except UnknownCameraError as exc:
                return str(exc)
            if names.visual not in sources:
                return f"the robot has no camera {camera!r}"
        return ""

    def _select_cameras(self, cameras: list[str]) -> None:
        """Stream exactly ``cameras`` from now on (streams of others pause)."""
        self.cameras = list(cameras)
        for camera in cameras:
            if camera in self.camera_streams:
                self.camera_streams[camera].enabled = True
            else:
                stream = self._add_camera(camera)
                if stream is not None:
                    self._scheduler.add(stream)
        for camera, stream in self.camera_streams.items():
            stream.enabled = camera in cameras

    def _add_camera(self, camera: str) -> "CameraStream | None":
        quality, pixel_format, in_flight = self._settings
        settings = CameraSettings(self.rates.get(camera, self.default_rate), quality,
                                  pixel_format, in_flight)
        stream = self._camera_stream(camera, self._color == "rgb", self._robot_sources(),
                                     dict(self._wants), settings)
        if stream is not None:
            self.camera_streams[camera] = stream
            self.streams.append(stream)
        return stream

    def _set_default_rate(self, rate: float) -> None:
        """camera_rate: every camera still at the previous default follows it."""
        for camera, current in self.rates.items():
            if current == self.default_rate:
                self._set_rate(camera, rate)
        self.default_rate = rate

    def _set_rate(self, camera: str, rate: float) -> None:
        self.rates[camera] = rate
        if camera in self.camera_streams:
            self.camera_streams[camera].set_rate(rate)

    # ------------------------------------------------------------------ setup
    def _list_sources(self) -> dict[str, image_pb2.ImageSource]:
        try:
            return self.sensors.image_sources()
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
            cloud = "points" if kind == "depth" else "registered_points"
            if source not in sources and (wants[kind] or wants[cloud]):
                log.warning(f"camera {camera}: the robot has no {source!r}; no {kind} published")
                wants[kind] = wants[f"{kind}_info"] = wants[cloud] = False
        topics = {
            "image": (ImageMsg, f"camera/{camera}/image"),
            "compressed": (CompressedImage, f"camera/{camera}/image/compressed"),
            "info": (CameraInfo, f"camera/{camera}/camera_info"),
            "depth": (ImageMsg, f"depth/{camera}/image"),
            "depth_info": (CameraInfo, f"depth/{camera}/camera_info"),
            "registered": (ImageMsg, f"depth_registered/{camera}/image"),
            "registered_info": (CameraInfo, f"depth_registered/{camera}/camera_info"),
            "points": (PointCloud2, f"depth/{camera}/points"),
            "registered_points": (PointCloud2, f"depth_registered/{camera}/points"),
        }
        outputs = {key: self._output(*topics[key]) for key, on in wants.items() if on}
        stream = CameraStream(names, sources, self.sensors.image_client,
                              outputs, settings,
                              lambda: self._connection.skew_nsec, self.prefix, self._report,
                              mount=self._mount)
        for output in outputs.values():
            output.stats = stream.stats
        return stream

    def _stitched_stream(self, in_flight: int) -> StitchedStream | None:
        """camera/frontmiddle_virtual: the front cameras stitched (spot_ros2's name)."""
        names = tuple(camera_sources(c, self._color == "rgb").visual
                      for c in ("frontleft", "frontright"))
        sources = self._robot_sources()
        if not all(name in sources for name in names):
            self.get_logger().error("publish_stitched_front: the robot has no "
                                    f"{' and '.join(names)}")
            return None
        camera = f"camera/{stitching.VIRTUAL_FRAME}"
        outputs = {"image": self._output(ImageMsg, f"{camera}/image"),
                   "info": self._output(CameraInfo, f"{camera}/camera_info")}
        stream = StitchedStream(names, self.sensors.image_client, outputs, self._stitched_rate,
                                self._settings[1], lambda: self._connection.skew_nsec,
                                self.prefix, in_flight, self._report, mount=self._mount)
        for output in outputs.values():
            output.stats = stream.stats
        return stream

    def _lidar_stream(self, source: str, rate: float, in_flight: int) -> LidarStream | None:
        log = self.get_logger()
        try:
            available = self.sensors.point_cloud_sources(source)
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
        output = self._output(PointCloud2, "lidar/points")
        stream = LidarStream(source, lambda: self.sensors.point_cloud_client(source), output,
                             rate, lambda: self._connection.skew_nsec, self.prefix,
                             self._report, in_flight, mount=self._mount)
        output.stats = stream.stats
        return stream

    def _mount(self, snapshot, sensor: str, stamp_nsec: int) -> bool:
        """A response's frame tree: the sensor's mount on /tf_static when new or moved. The
        frames others publish: the robot state's and, with robot_state_publisher, the model's."""
        state = self._cache.latest()
        if state is None:
            return False  # which frames the robot state has is not known yet
        published = set(state.kinematic_state.transforms_snapshot.child_to_parent_edge_map)
        stamp = Time(sec=stamp_nsec // 1_000_000_000, nanosec=stamp_nsec % 1_000_000_000)
        self.mounts.update(snapshot, sensor, published | self._model_frames, stamp)
        return True

    def _output(self, msg_type, topic: str) -> TopicOutput:
        output = TopicOutput(self.create_publisher(msg_type, topic, self._sensor_qos),
                             self._lazy, self._pace)
        self.outputs[topic] = output
        return output

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
