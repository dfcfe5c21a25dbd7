"""image: the body (and gripper) cameras, rendered from the robot's current pose (under a
field profile stamped ``capture_delay`` earlier: exposure, readout and encoding). Calls
addressed to the Spot CAM's image service (``spot-cam-image``) go to its cameras."""

from bosdyn.api import image_pb2, image_service_pb2_grpc
from bosdyn.client.frame_helpers import get_a_tform_b

from spot_sim.body.frame_tree import sensor_view
from spot_sim.body.robot import SimRobot
from spot_sim.core.field import Captures, Draw
from spot_sim.core.rpc import authority, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.perception.sensors import InvalidRequestError, Sensors

SPOT_CAM_AUTHORITY = "spot-cam-image.spot.robot"


class ImageServicer(image_service_pb2_grpc.ImageServiceServicer):
    def __init__(self, robot: SimRobot, sensors: Sensors) -> None:
        self.robot, self.clock, self.sensors = robot, robot.clock, sensors
        self._draw = Draw(robot.config.field, "image")
        self._captures = Captures()
        self.spot_cam = None  # the Spot CAM's cameras (spot_cam_image.SpotCamImages), if fitted

    def attach_spot_cam(self, images) -> "ImageServicer":
        self.spot_cam = images
        return self

    def _for_spot_cam(self, context) -> bool:
        return self.spot_cam is not None and context is not None and \
            authority(context) == SPOT_CAM_AUTHORITY

    @unary(image_pb2.ListImageSourcesResponse)
    def ListImageSources(self, request, response, context):
        if self._for_spot_cam(context):
            response.image_sources.extend(self.spot_cam.sources())
            return
        response.image_sources.extend(s.to_proto() for s in self.sensors.listed())

    @unary(image_pb2.GetImageResponse)
    def GetImage(self, request, response, context):
        if self._for_spot_cam(context):
            for image_request in request.image_requests:
                out = response.image_responses.add()
                out.source.name = image_request.image_source_name
                self.spot_cam.respond(image_request, out)
            return
        snapshot = self.robot.transforms_snapshot()
        asks, sources = [], []
        for image_request in request.image_requests:
            source = self.sensors.source(image_request.image_source_name)
            sources.append(source)
            if source is not None:
                asks.append((image_request, get_a_tform_b(snapshot, "odom", source.frame)))
        images = iter(self.sensors.images(asks))
        for image_request, source in zip(request.image_requests, sources, strict=True):
            out = response.image_responses.add()
            out.source.name = image_request.image_source_name
            if source is None:
                out.status = image_pb2.ImageResponse.STATUS_UNKNOWN_CAMERA
                continue
            image = next(images)
            if isinstance(image, InvalidRequestError):
                out.status = image.status
                continue
            out.source.CopyFrom(source.to_proto())
            out.shot.image.CopyFrom(image)
            age = self._draw.uniform(self.robot.config.field.capture_delay)
            out.shot.acquisition_time.CopyFrom(self.clock.timestamp(self._captures.acquired(
                source.name, self.clock.now_nsec(), age)))
            out.shot.frame_name_image_sensor = source.frame
            out.shot.transforms_snapshot.CopyFrom(sensor_view(snapshot, source.frame))
            out.status = image_pb2.ImageResponse.STATUS_OK


def spec() -> ServiceSpec:
    return ServiceSpec("image", "bosdyn.api.ImageService", "api.spot.robot",
                       image_service_pb2_grpc.add_ImageServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: ImageServicer(parts.robot, parts.sensors)),)
