"""spot-cam-stream-quality and spot-cam-network: the live stream's encoder parameters and
congestion control, and the ICE servers WebRTC uses (``spot_sim.spot_cam.stream``), as the
SDK's ``StreamQualityClient`` and ``NetworkClient`` set them; spot-cam-version, the payload's
software version."""

from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot_cam import network_pb2, service_pb2_grpc, streamquality_pb2, version_pb2

from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.spot_cam.stream import StreamError, StreamSettings

VERSION = (4, 1, 0)  # ours: a Spot CAM software version of the SDK's generation


class StreamQualityServicer(service_pb2_grpc.StreamQualityServiceServicer):
    def __init__(self, clock, settings: StreamSettings) -> None:
        self.clock, self.settings = clock, settings

    @unary(streamquality_pb2.GetStreamParamsResponse)
    def GetStreamParams(self, request, response, context):
        response.params.CopyFrom(self.settings.params())

    @unary(streamquality_pb2.SetStreamParamsResponse)
    def SetStreamParams(self, request, response, context):
        try:
            response.params.CopyFrom(self.settings.set_params(request.params))
        except StreamError as refused:
            set_error(response, CommonError.CODE_INVALID_REQUEST, str(refused))

    @unary(streamquality_pb2.EnableCongestionControlResponse)
    def EnableCongestionControl(self, request, response, context):
        self.settings.set_congestion_control(request.enable_congestion_control)


class NetworkServicer(service_pb2_grpc.NetworkServiceServicer):
    def __init__(self, clock, settings: StreamSettings) -> None:
        self.clock, self.settings = clock, settings

    @unary(network_pb2.GetICEConfigurationResponse)
    def GetICEConfiguration(self, request, response, context):
        response.servers.extend(self.settings.ice())

    @unary(network_pb2.SetICEConfigurationResponse)
    def SetICEConfiguration(self, request, response, context):
        try:
            self.settings.set_ice(list(request.servers))
        except StreamError as refused:
            set_error(response, CommonError.CODE_INVALID_REQUEST, str(refused))


class VersionServicer(service_pb2_grpc.VersionServiceServicer):
    def __init__(self, clock) -> None:
        self.clock = clock

    @unary(version_pb2.GetSoftwareVersionResponse)
    def GetSoftwareVersion(self, request, response, context):
        version = response.version
        version.major_version, version.minor_version, version.patch_level = VERSION
        response.detail = "simulated Spot CAM+IR"


def _spec(name: str, service: str, add) -> ServiceSpec:
    return ServiceSpec(name, f"bosdyn.api.spot_cam.{service}", "api.spot.robot", add)


SERVICES = (
    Served(_spec("spot-cam-stream-quality", "StreamQualityService",
                 service_pb2_grpc.add_StreamQualityServiceServicer_to_server),
           lambda parts: StreamQualityServicer(parts.clock, parts.spot_cam.stream),
           hardware="spot_cam"),
    Served(_spec("spot-cam-network", "NetworkService",
                 service_pb2_grpc.add_NetworkServiceServicer_to_server),
           lambda parts: NetworkServicer(parts.clock, parts.spot_cam.stream),
           hardware="spot_cam"),
    Served(_spec("spot-cam-version", "VersionService",
                 service_pb2_grpc.add_VersionServiceServicer_to_server),
           lambda parts: VersionServicer(parts.clock), hardware="spot_cam"),
)
