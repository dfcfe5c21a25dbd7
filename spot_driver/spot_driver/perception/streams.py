"""Camera and lidar streams: what to request from the robot and how responses become topics.

Streams publish already serialized messages through ``Output`` objects (a ROS publisher in
the driver, a list in tests and benchmarks), so this module has no ROS node in it.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from bosdyn.api import geometry_pb2, image_pb2, point_cloud_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from rclpy.serialization import serialize_message

from spot_driver.conversions import point_cloud, sensor_cdr
from spot_driver.conversions.time import timestamp_to_nsec
from spot_driver.core.acquisition import DEFAULT_MAX_IN_FLIGHT, Stream
from spot_driver.perception import images, stitching
from spot_driver.perception.cameras import CameraSources

Image = image_pb2.Image
FETCH_TIMEOUT_S = 2.0  # s; a later camera or lidar answer is an error (the next tick asks again)


# (the response's frame tree, its sensor frame, acquisition time in local ns): the sensor's
# mount, read from every response (perception/extrinsics.SensorMounts)
Mount = Callable[[object, str, int], None]


class Output(Protocol):
    """Where one topic's serialized messages go."""

    def wanted(self) -> bool: ...

    def publish(self, data: bytes) -> None: ...


@dataclass(frozen=True)
class CameraSettings:
    rate: float = 15.0
    jpeg_quality: int = 75
    pixel_format: int = Image.PIXEL_FORMAT_UNKNOWN  # unknown: the camera's own format
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT  # the cap; the round trip sets the number


class CameraStream(Stream):
    """One camera: its visual image (raw and/or JPEG), depth, registered depth, points, and
    XYZRGB points from the registered depth coloured by the visual image of the same request.

    ``outputs`` maps any of ``image``, ``compressed``, ``info``, ``depth``, ``depth_info``,
    ``registered``, ``registered_info``, ``points``, ``registered_points`` to an Output;
    missing keys are not produced. ``sources`` are the robot's ImageSource protos by name;
    ``client()`` returns the current session's image client (it changes when the driver
    reconnects). ``mount`` takes each response's frame tree: until one came, the camera is
    requested even with nobody subscribed, so its frames are on /tf_static from the start.
    """

    def __init__(self, names: CameraSources, sources: dict[str, image_pb2.ImageSource],
                 client: Callable[[], object], outputs: dict[str, Output],
                 settings: CameraSettings,
                 skew_nsec: Callable[[], int], frame_prefix: str = "",
                 report: Callable[[str], None] | None = None,
                 mount: Mount | None = None) -> None:
        self.name = f"camera {names.camera}"
        super().__init__(settings.rate, settings.max_in_flight, report)
        self.names, self._client, self._settings = names, client, settings
        self._skew, self._prefix = skew_nsec, frame_prefix
        self._outputs = outputs
        self._sources = dict(sources)  # this stream's own: a resolution change replaces one
        self._handlers = {names.visual: self._visual, names.depth: self._depth,
                          names.registered: self._registered}
        self._last_stamp = dict.fromkeys(self._handlers, -1)
        self._info_templates: dict[str, bytes] = {}
        self._rays = (images.PinholeRays.of_source(sources[names.depth])
                      if "points" in outputs else None)
        self._registered_rays = (images.PinholeRays.of_source(sources[names.registered])
                                 if "registered_points" in outputs else None)
        self._batch: dict[str, object] = {}  # this response's visual pixels, registered depth
        self._mount = mount
        self._mounted = mount is None

    def _wants(self, *keys: str) -> bool:
        return any(k in self._outputs and self._outputs[k].wanted() for k in keys)

    def wanted(self) -> bool:
        return not self._mounted or self._wants(*self._outputs)

    def fetch(self):
        return self._client().get_image(self._requests(), timeout=FETCH_TIMEOUT_S)

    def _requests(self) -> list:
        requests = []
        jpeg = self._wants("compressed") or not (self._mounted or self._wants(*self._outputs))
        if jpeg or self._wants("image", "info", "registered_points"):
            requests.append(image_pb2.ImageRequest(
                image_source_name=self.names.visual, quality_percent=self._settings.jpeg_quality,
                image_format=Image.FORMAT_JPEG if jpeg else Image.FORMAT_RAW,
                pixel_format=self._settings.pixel_format))
        if self._wants("depth", "depth_info", "points"):
            requests.append(image_pb2.ImageRequest(
                image_source_name=self.names.depth, image_format=Image.FORMAT_RAW,
                pixel_format=Image.PIXEL_FORMAT_DEPTH_U16))
        if self._wants("registered", "registered_info", "registered_points"):
            requests.append(image_pb2.ImageRequest(
                image_source_name=self.names.registered, image_format=Image.FORMAT_RAW,
                pixel_format=Image.PIXEL_FORMAT_DEPTH_U16))
        return requests

    def handle(self, responses) -> None:
        problems = []
        published = overtaken = False
        self._batch = {}
        for response in responses:
            name = response.source.name
            handler = self._handlers.get(name)
            shot = response.shot
            stamp = timestamp_to_nsec(shot.acquisition_time) - self._skew()
            if handler is None:
                continue
            self._follow_source(response.source)
            if stamp <= self._last_stamp[name]:
                overtaken = True  # an older frame overtaken by a newer one: drop it
                continue
            self._last_stamp[name] = stamp
            frame = self._prefix + shot.frame_name_image_sensor
            if self._mount is not None:
                self._mounted = self._mount(shot.transforms_snapshot,
                                            shot.frame_name_image_sensor, stamp) or self._mounted
            try:
                handler(shot, name, stamp, frame)
                published = True
            except (images.ImageDecodeError, ValueError) as exc:
                problems.append(f"{response.source.name}: {exc}")
        try:
            self._colored_points()
        except (images.ImageDecodeError, ValueError) as exc:
            problems.append(f"{self.names.registered} points: {exc}")
        if published:
            self.stats.delivered += 1
        elif overtaken:
            self.stats.overtaken += 1
        if problems:
            raise images.ImageDecodeError("; ".join(problems))


    def _follow_source(self, source: image_pb2.ImageSource) -> None:
        """A source whose size changed (the gripper camera's mode) is taken from the
        response, so camera_info and depth points follow it."""
        known = self._sources.get(source.name)
        if known is None or (source.cols, source.rows) == (known.cols, known.rows) or \
                not source.HasField("pinhole"):
            return
        self._sources[source.name] = image_pb2.ImageSource.FromString(source.SerializeToString())
        for key, name in (("info", self.names.visual), ("depth_info", self.names.depth),
                          ("registered_info", self.names.registered)):
            if name == source.name:
                self._info_templates.pop(key, None)
        if source.name == self.names.depth and self._rays is not None:
            self._rays = images.PinholeRays.of_source(source)
        if source.name == self.names.registered and self._registered_rays is not None:
            self._registered_rays = images.PinholeRays.of_source(source)

    def _publish_info(self, key: str, source_name: str, stamp: int, frame: str) -> None:
        output = self._outputs.get(key)
        if output is None or not output.wanted():
            return
        template = self._info_templates.get(key)
        if template is None:
            info = images.camera_info(self._sources[source_name], frame)
            template = self._info_templates[key] = serialize_message(info)
        output.publish(sensor_cdr.restamp(template, stamp))

    def _visual(self, shot: image_pb2.ImageCapture, source: str, stamp: int, frame: str) -> None:
        image = shot.image
        data = image.data  # one copy out of the protobuf
        compressed = self._outputs.get("compressed")
        raw = self._outputs.get("image")
        if image.format == Image.FORMAT_JPEG and compressed is not None and compressed.wanted():
            compressed.publish(sensor_cdr.compressed_image_cdr(
                stamp, frame, images.compressed_format(image.pixel_format), data))
        colour = self._wants("registered_points")
        decoded = images.decode_pixels(image, data) if colour or (
            raw is not None and raw.wanted() and image.format != Image.FORMAT_RAW) else None
        if raw is not None and raw.wanted():
            layout = images.pixel_layout(image.pixel_format)
            pixels = images.raw_bytes(image, data) if image.format == Image.FORMAT_RAW \
                else memoryview(decoded).cast("B")
            raw.publish(sensor_cdr.image_cdr(stamp, frame, image.rows, image.cols,
                                             layout.encoding, images.row_step(image), pixels))
        if colour:
            self._batch["pixels"] = decoded
        self._publish_info("info", source, stamp, frame)

    def _depth(self, shot: image_pb2.ImageCapture, source: str, stamp: int, frame: str) -> None:
        image = shot.image
        if image.pixel_format != Image.PIXEL_FORMAT_DEPTH_U16:
            raise images.ImageDecodeError("depth image is not DEPTH_U16")
        data = images.raw_bytes(image)
        output = self._outputs.get("depth")
        if output is not None and output.wanted():
            output.publish(sensor_cdr.image_cdr(stamp, frame, image.rows, image.cols, "16UC1",
                                                images.row_step(image), data))
        self._publish_info("depth_info", source, stamp, frame)
        points = self._outputs.get("points")
        if points is not None and points.wanted():
            depth = images.decode_pixels(image, data)
            xyz = self._rays.points(depth, self._sources[source].depth_scale or 1000.0)
            points.publish(sensor_cdr.point_cloud2_cdr(stamp, frame, xyz))

    def _registered(self, shot: image_pb2.ImageCapture, source: str, stamp: int,
                    frame: str) -> None:
        image = shot.image
        output = self._outputs.get("registered")
        if output is not None and output.wanted():
            output.publish(sensor_cdr.image_cdr(stamp, frame, image.rows, image.cols, "16UC1",
                                                images.row_step(image), images.raw_bytes(image)))
        self._publish_info("registered_info", source, stamp, frame)
        if self._wants("registered_points"):
            if image.pixel_format != Image.PIXEL_FORMAT_DEPTH_U16:
                raise images.ImageDecodeError("registered depth image is not DEPTH_U16")
            self._batch["depth"] = (images.decode_pixels(image), stamp, frame,
                                    self._sources[source].depth_scale or 1000.0)

    def _colored_points(self) -> None:
        """depth_registered/<camera>/points: the registered depth's points coloured by the
        visual image fetched with it (both from one request)."""
        if "pixels" not in self._batch or "depth" not in self._batch:
            return
        depth, stamp, frame, scale = self._batch["depth"]
        if self._registered_rays.shape != depth.shape[:2]:
            self._registered_rays = images.PinholeRays.of_source(
                self._sources[self.names.registered])
        xyz, rgb = self._registered_rays.colored_points(depth, scale, self._batch["pixels"])
        self._outputs["registered_points"].publish(
            sensor_cdr.point_cloud2_cdr(stamp, frame, xyz, rgb))


class StitchedStream(Stream):
    """The front cameras stitched into one virtual camera's image (``stitching.py``): both
    fetched in one request, stitched with a map made from the first response's calibration
    (made again when a camera's calibration changes), published as ``image`` and ``info``
    with the virtual camera's mount (body -> frontmiddle_virtual) given to ``mount`` until it
    takes it."""

    name = "camera frontmiddle_virtual"

    def __init__(self, sources: tuple[str, str], client: Callable[[], object],
                 outputs: dict[str, Output], rate: float, pixel_format: int,
                 skew_nsec: Callable[[], int], frame_prefix: str = "",
                 max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
                 report: Callable[[str], None] | None = None,
                 mount: Mount | None = None) -> None:
        super().__init__(rate, max_in_flight, report)
        self._names, self._client, self._outputs = sources, client, outputs
        self._pixel_format = pixel_format
        self._skew, self._prefix, self._mount = skew_nsec, frame_prefix, mount
        self._mounted = mount is None
        self._virtual: stitching.Pinhole | None = None
        self._body_t_virtual = None
        self._stitcher: stitching.Stitcher | None = None
        self._calibration: tuple | None = None
        self._info: bytes | None = None
        self._last_stamp = -1

    def wanted(self) -> bool:
        return any(output.wanted() for output in self._outputs.values())

    def fetch(self):
        return self._client().get_image([image_pb2.ImageRequest(
            image_source_name=name, image_format=Image.FORMAT_RAW,
            pixel_format=self._pixel_format) for name in self._names], timeout=FETCH_TIMEOUT_S)

    def handle(self, responses) -> None:
        shots = {r.source.name: r for r in responses}
        if any(name not in shots or shots[name].status != shots[name].STATUS_OK
               for name in self._names):
            raise images.ImageDecodeError("a front camera gave no image")
        pair = [shots[name] for name in self._names]
        stamp = max(timestamp_to_nsec(r.shot.acquisition_time) for r in pair) - self._skew()
        if stamp <= self._last_stamp:
            self.stats.overtaken += 1
            return
        self._last_stamp = stamp
        self._follow_calibration(pair)
        if not self._mounted:
            tree = geometry_pb2.FrameTreeSnapshot()
            tree.child_to_parent_edge_map["body"].SetInParent()
            edge = tree.child_to_parent_edge_map[stitching.VIRTUAL_FRAME]
            edge.parent_frame_name = "body"
            edge.parent_tform_child.CopyFrom(self._body_t_virtual.to_proto())
            self._mounted = bool(self._mount(tree, stitching.VIRTUAL_FRAME, stamp))
        stitched = self._stitcher.stitch([images.decode_pixels(r.shot.image) for r in pair])
        frame = self._prefix + stitching.VIRTUAL_FRAME
        layout = images.pixel_layout(pair[0].shot.image.pixel_format)
        image = self._outputs.get("image")
        if image is not None and image.wanted():
            channels = stitched.shape[2]
            image.publish(sensor_cdr.image_cdr(
                stamp, frame, self._virtual.rows, self._virtual.cols, layout.encoding,
                self._virtual.cols * channels * stitched.dtype.itemsize,
                memoryview(np.ascontiguousarray(stitched)).cast("B")))
        info = self._outputs.get("info")
        if info is not None and info.wanted():
            info.publish(sensor_cdr.restamp(self._info, stamp))
        self.stats.delivered += 1

    def _follow_calibration(self, pair) -> None:
        """(Re)make the stitcher when the cameras' models or mounts changed."""
        poses = [get_a_tform_b(r.shot.transforms_snapshot, "body",
                               r.shot.frame_name_image_sensor) for r in pair]
        models = [r.source.pinhole.intrinsics for r in pair]
        key = tuple((p.x, p.y, p.z, p.rot.w, p.rot.x, p.rot.y, p.rot.z) for p in poses) + \
            tuple((m.focal_length.x, m.focal_length.y, m.principal_point.x,
                   m.principal_point.y, r.source.cols, r.source.rows)
                  for m, r in zip(models, pair, strict=True))
        if key == self._calibration:
            return
        cameras = [(stitching.Pinhole(r.source.cols, r.source.rows, m.focal_length.x,
                                      m.focal_length.y, m.principal_point.x,
                                      m.principal_point.y), pose)
                   for r, m, pose in zip(pair, models, poses, strict=True)]
        self._body_t_virtual = stitching.virtual_pose(poses[0], poses[1])
        self._virtual = v = stitching.virtual_model(cameras[0][0])
        self._stitcher = stitching.Stitcher(v, self._body_t_virtual, cameras)
        self._calibration = key
        self._mounted = self._mount is None
        source = image_pb2.ImageSource(cols=v.cols, rows=v.rows)
        intrinsics = source.pinhole.intrinsics
        intrinsics.focal_length.x, intrinsics.focal_length.y = v.fx, v.fy
        intrinsics.principal_point.x, intrinsics.principal_point.y = v.cx, v.cy
        self._info = serialize_message(images.camera_info(
            source, self._prefix + stitching.VIRTUAL_FRAME))


class LidarStream(Stream):
    """A point-cloud source (the lidar payload) as PointCloud2 XYZ float32."""

    def __init__(self, source: str, client: Callable[[], object], output: Output, rate: float,
                 skew_nsec: Callable[[], int], frame_prefix: str = "",
                 report: Callable[[str], None] | None = None,
                 max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
                 mount: Mount | None = None) -> None:
        self.name = f"point cloud {source}"
        super().__init__(rate, max_in_flight, report)
        self._source, self._client, self._output = source, client, output
        self._skew, self._prefix = skew_nsec, frame_prefix
        self._last_stamp = -1
        self._mount = mount
        self._mounted = mount is None

    def wanted(self) -> bool:
        return not self._mounted or self._output.wanted()

    def fetch(self):
        return self._client().get_point_cloud(
            [point_cloud_pb2.PointCloudRequest(point_cloud_source_name=self._source)],
            timeout=FETCH_TIMEOUT_S)

    def handle(self, responses) -> None:
        cloud = responses[0].point_cloud
        stamp = timestamp_to_nsec(cloud.source.acquisition_time) - self._skew()
        if stamp <= self._last_stamp:
            self.stats.overtaken += 1
            return
        self._last_stamp = stamp
        if self._mount is not None:
            self._mounted = self._mount(cloud.source.transforms_snapshot,
                                        cloud.source.frame_name_sensor, stamp) or self._mounted
        if not self._output.wanted():
            return
        xyz = point_cloud.decode_xyz(cloud)
        xyz = xyz[np.isfinite(xyz).all(axis=1)]  # published as a dense cloud
        frame = self._prefix + cloud.source.frame_name_sensor
        self._output.publish(sensor_cdr.point_cloud2_cdr(stamp, frame, xyz))
        self.stats.delivered += 1

