"""spot-cam-lighting: the Spot CAM's four LEDs (``spot_sim.spot_cam.lights``) as the SDK's
``LightingClient`` sets and reads them."""

from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot_cam import LED_pb2, service_pb2_grpc

from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.spot_cam.lights import Lights, LightsError


class LightingServicer(service_pb2_grpc.LightingServiceServicer):
    def __init__(self, clock, lights: Lights) -> None:
        self.clock, self.lights = clock, lights

    @unary(LED_pb2.GetLEDBrightnessResponse)
    def GetLEDBrightness(self, request, response, context):
        response.brightnesses.extend(self.lights.get())

    @unary(LED_pb2.SetLEDBrightnessResponse)
    def SetLEDBrightness(self, request, response, context):
        try:
            self.lights.set(dict(request.brightnesses))
        except LightsError as refused:
            set_error(response, CommonError.CODE_INVALID_REQUEST, str(refused))


def spec() -> ServiceSpec:
    return ServiceSpec("spot-cam-lighting", "bosdyn.api.spot_cam.LightingService",
                       "api.spot.robot", service_pb2_grpc.add_LightingServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: LightingServicer(parts.clock, parts.spot_cam.lights),
                   hardware="spot_cam"),)
