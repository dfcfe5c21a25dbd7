"""The Spot CAM's cameras on image_transport topics, polled from its image service."""

import math

from bosdyn.api import image_pb2
from bosdyn.client.image import ImageClient, build_image_request
from bosdyn.client.spot_cam import IMAGE_SERVICE_NAME
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, CompressedImage, Image
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage
from transforms3d.euler import euler2quat

from spot_driver.conversions.time import robot_stamp_to_msg
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import describe
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork
from spot_driver.perception.images import camera_info
from spot_driver.spot_cam import images
from spot_driver.spot_cam.clients import NoSpotCamError, PollGate, spot_cam_client

CAMERAS = ("pano", "c0", "c1", "c2", "c3", "c4", "ptz", "ir")
RADIOMETRIC = build_image_request("ir", pixel_format=image_pb2.Image.PIXEL_FORMAT_GREYSCALE_U16,
                                  image_format=image_pb2.Image.FORMAT_RAW)


class SpotCamImagesNode(PeriodicWork, Node):
    """``spot_cam/<camera>/image/compressed`` for each of ``spot_cam_image_sources``;
    ``camera_info`` for the PTZ and IR (intrinsics following zoom), ``spot_cam/ir/temperature``
    (32FC1 kelvin); the ``spot_cam_ptz`` -> ``spot_cam_ptz_optical`` frame on /tf_static."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_cam_images", namespace=context.namespace)
        self.connection = context.connection
        rate = declare(self, "spot_cam_image_rate", 1.0)
        self.sources = list(declare(self, "spot_cam_image_sources", ["ptz", "ir"]))
        unknown = sorted(set(self.sources) - set(CAMERAS))
        if unknown:
            raise ValueError(f"spot_cam_image_sources: unknown Spot CAM cameras {unknown}; "
                             f"the Spot CAM has {', '.join(CAMERAS)}")
        prefix = declare(self, "frame_prefix", "")
        self.optical, self.pano_frame = f"{prefix}{images.OPTICAL}", f"{prefix}spot_cam"
        self._compressed = {s: self.create_publisher(
            CompressedImage, f"spot_cam/{s}/image/compressed", qos.SENSOR) for s in self.sources}
        self._info = {s: self.create_publisher(CameraInfo, f"spot_cam/{s}/camera_info",
                                               qos.SENSOR)
                      for s in self.sources if s in images.PTZ_CAMERAS}
        self._temperature = self.create_publisher(Image, "spot_cam/ir/temperature",
                                                  qos.SENSOR) if "ir" in self.sources else None
        # The optical frame goes out with the first PTZ or IR image: a robot without a Spot
        # CAM gets no spot_cam_ptz frame (no second root on its tree).
        self._static = self.create_publisher(TFMessage, "/tf_static", qos.LATCHED)
        self._ptz_frame, self._static_sent = f"{prefix}spot_cam_ptz", False
        self._gate = PollGate()
        if rate > 0 and self.sources:
            self.every(1.0 / rate, self._poll)

    def _optical_frame(self, parent: str) -> TransformStamped:
        out = TransformStamped()
        out.header.frame_id, out.child_frame_id = parent, self.optical
        w, x, y, z = euler2quat(-math.pi / 2, 0.0, -math.pi / 2)  # x forward -> z forward
        rotation = out.transform.rotation
        rotation.w, rotation.x, rotation.y, rotation.z = w, x, y, z
        return out

    def _poll(self) -> None:
        if not self._gate.open():
            return
        requests = [build_image_request(s) for s in self.sources]
        if self._temperature is not None:
            requests.append(RADIOMETRIC)
        try:
            client = spot_cam_client(self.connection, ImageClient, IMAGE_SERVICE_NAME)
            responses = client.get_image(requests, timeout=10.0)
        except NoSpotCamError as exc:
            self._gate.found_absent()
            self.get_logger().warning(f"spot_cam images: {exc}", throttle_duration_sec=600.0)
            return
        except Exception as exc:
            self.get_logger().warning(f"spot_cam images: {describe(exc)}",
                                      throttle_duration_sec=60.0)
            return
        for response in responses:
            if response.status != image_pb2.ImageResponse.STATUS_OK:
                continue
            try:
                self._publish(response)
            except ValueError as exc:
                self.get_logger().warning(f"spot_cam {response.source.name}: {exc}",
                                          throttle_duration_sec=60.0)

    def _publish(self, response) -> None:
        name, image = response.source.name, response.shot.image
        frame = self.optical if name in images.PTZ_CAMERAS else self.pano_frame
        header = Header(frame_id=frame, stamp=robot_stamp_to_msg(
            response.shot.acquisition_time, self.connection.skew_nsec))
        if name in images.PTZ_CAMERAS and not self._static_sent:
            self._static.publish(TFMessage(transforms=[self._optical_frame(self._ptz_frame)]))
            self._static_sent = True
        if image.pixel_format == image_pb2.Image.PIXEL_FORMAT_GREYSCALE_U16:
            self._temperature.publish(images.temperature_msg(images.kelvin(image), header))
            return
        self._compressed[name].publish(images.compressed(image, header))
        if name in self._info:
            info = camera_info(response.source, frame)
            info.header = header
            self._info[name].publish(info)
