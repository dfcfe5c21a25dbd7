"""spot-cam-media-log: the Spot CAM's stills (``spot_sim.spot_cam.media_log``) rendered from
the simulated world at the robot's pose and the PTZ's position when stored, as the SDK's
``MediaLogClient`` and the Spot CAM program's ``media_log`` commands use them."""

from functools import partial

from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot_cam import logging_pb2, service_pb2_grpc
from bosdyn.client.frame_helpers import get_a_tform_b

from spot_sim.core.rpc import chunks, set_error, stamped, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.spot_cam.cameras import CAMERAS
from spot_sim.spot_cam.compositor import colorize
from spot_sim.spot_cam.media_log import MediaLogError, capture

_INVALID = CommonError.CODE_INVALID_REQUEST


def _calibration(camera_proto) -> logging_pb2.Logpoint.Calibration | None:
    if not camera_proto.HasField("pinhole"):
        return None
    out = logging_pb2.Logpoint.Calibration(width=int(camera_proto.resolution.x),
                                           height=int(camera_proto.resolution.y),
                                           base_frame_name=camera_proto.base_frame_name)
    out.base_tform_sensor.CopyFrom(camera_proto.base_tform_sensor)
    out.intrinsics.CopyFrom(camera_proto.pinhole)
    return out


class MediaLogServicer(service_pb2_grpc.MediaLogServiceServicer):
    def __init__(self, parts) -> None:
        self.clock, self.robot, self.scene = parts.clock, parts.robot, parts.sensors.scene
        cam = parts.spot_cam
        self.heads, self.rails, self.compositor, self.log = \
            cam.heads, cam.rails, cam.compositor, cam.media_log

    @unary(logging_pb2.ListCamerasResponse)
    def ListCameras(self, request, response, context):
        response.cameras.extend(camera.to_proto() for camera in CAMERAS.values())

    def still_now(self, camera_name: str):
        """A still of ``camera_name`` rendered now (data acquisition's Spot CAM captures)."""
        camera = CAMERAS[camera_name]
        now = self.clock.now_nsec()
        if camera.name == "ptz" and not self.rails.is_on("ptz", now):
            raise MediaLogError("the PTZ is powered off (spot-cam-power)")
        body = get_a_tform_b(self.robot.transforms_snapshot(), "odom", "body")
        return camera, capture(self.scene, camera, body, self.heads.position("mech", now),
                               self.compositor.colormap(), colorize)

    @unary(logging_pb2.StoreResponse)
    def Store(self, request, response, context):
        now = self.clock.now_nsec()
        camera = CAMERAS.get(request.camera.name)
        if camera is None:
            set_error(response, _INVALID, f"unknown camera {request.camera.name!r}; cameras: "
                      f"{sorted(CAMERAS)}")
            return
        if camera.name == "ptz" and not self.rails.is_on("ptz", now):
            set_error(response, _INVALID, "the PTZ is powered off (spot-cam-power)")
            return
        ptz = self.heads.position("mech", now)
        body = get_a_tform_b(self.robot.transforms_snapshot(), "odom", "body")
        render = partial(capture, self.scene, camera, body, ptz, self.compositor.colormap(),
                         colorize)
        response.point.CopyFrom(self.log.store(
            camera, request.tag, self.clock.timestamp(now),
            _calibration(camera.to_proto(ptz.zoom if camera.on_ptz else 1.0)), render))

    def _refusing(self, response, action) -> None:
        try:
            action()
        except MediaLogError as refused:
            set_error(response, _INVALID, str(refused))

    @unary(logging_pb2.GetStatusResponse)
    def GetStatus(self, request, response, context):
        self._refusing(response, lambda: response.point.CopyFrom(
            self.log.status(request.point.name)))

    @unary(logging_pb2.ListLogpointsResponse)
    def _list(self, request, response, context):
        response.logpoints.extend(self.log.points())

    def ListLogpoints(self, request, context):
        yield self._list(request, context)

    @unary(logging_pb2.TagResponse)
    def Tag(self, request, response, context):
        self._refusing(response, lambda: self.log.tag(request.point.name, request.point.tag))

    @unary(logging_pb2.DeleteResponse)
    def Delete(self, request, response, context):
        self._refusing(response, lambda: self.log.delete(request.point.name))

    @unary(logging_pb2.DebugResponse)
    def EnableDebug(self, request, response, context):
        """Accepted: the simulated payload keeps no debug records."""

    @unary(logging_pb2.SetPassphraseResponse)
    def SetPassphrase(self, request, response, context):
        """Accepted: the simulated media log is not encrypted (the passphrase is not kept)."""

    def _retrieve(self, request, response_type, raw: bool):
        try:
            point, data = self.log.retrieve(request.point.name, raw)
        except MediaLogError as refused:
            response = response_type()
            set_error(response, _INVALID, str(refused))
            yield stamped(self.clock, response, request.header)
            return
        for chunk in chunks(data):
            yield stamped(self.clock, response_type(logpoint=point, data=chunk), request.header)

    def Retrieve(self, request, context):
        yield from self._retrieve(request, logging_pb2.RetrieveResponse, raw=False)

    def RetrieveRawData(self, request, context):
        yield from self._retrieve(request, logging_pb2.RetrieveRawDataResponse, raw=True)


def spec() -> ServiceSpec:
    return ServiceSpec("spot-cam-media-log", "bosdyn.api.spot_cam.MediaLogService",
                       "api.spot.robot", service_pb2_grpc.add_MediaLogServiceServicer_to_server)


SERVICES = (Served(spec(), MediaLogServicer, hardware="spot_cam"),)
