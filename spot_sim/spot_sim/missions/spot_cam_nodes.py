"""The mission's Spot CAM nodes (SpotCamPtz, SpotCamStoreMedia, SpotCamLed,
SpotCamFocusState, SpotCamResetAutofocus): one request to the Spot CAM's own servicer (by its
class), in process, so it passes a client's checks; done when the Spot CAM accepts it. On a robot
without a Spot CAM the node errors, naming it."""

from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot_cam import LED_pb2, logging_pb2, ptz_pb2

from spot_sim.missions.nodes import SUCCESS, MissionNodeError, Node
from spot_sim.missions.parameters import CompileError
from spot_sim.spot_cam.lighting_service import LightingServicer
from spot_sim.spot_cam.media_log_service import MediaLogServicer
from spot_sim.spot_cam.ptz_service import PtzServicer

NO_SPOT_CAM = "this robot has no Spot CAM payload"
SERVICERS = (PtzServicer, MediaLogServicer, LightingServicer)  # what the nodes call


class SpotCamCall(Node):
    def __init__(self, node_id, name, parameters, kind: type, method: str, request):
        super().__init__(node_id, name, parameters)
        self.kind, self.method, self.request = kind, method, request

    def update(self, ctx):
        servicer = ctx.robot.spot_cam(self.kind)
        if servicer is None:
            raise MissionNodeError(NO_SPOT_CAM)
        response = getattr(servicer, self.method)(self.request, None)
        error = response.header.error
        if error.code not in (CommonError.CODE_OK, CommonError.CODE_UNSPECIFIED):
            raise MissionNodeError(f"the Spot CAM refused {self.method}: {error.message}")
        return SUCCESS


# The compiler's builders for the five node types: (node id, name, parameters, spec, info).

def ptz(node_id, name, params, spec, info) -> SpotCamCall:
    if spec.HasField("adjust_parameters"):
        raise CompileError("PTZ adjustment from the localization is not simulated")
    return SpotCamCall(node_id, name, params, PtzServicer, "SetPtzPosition",
                       ptz_pb2.SetPtzPositionRequest(position=spec.ptz_position))


def store_media(node_id, name, params, spec, info) -> SpotCamCall:
    return SpotCamCall(node_id, name, params, MediaLogServicer, "Store",
                       logging_pb2.StoreRequest(camera=spec.camera, type=spec.type, tag=spec.tag))


def led(node_id, name, params, spec, info) -> SpotCamCall:
    return SpotCamCall(node_id, name, params, LightingServicer, "SetLEDBrightness",
                       LED_pb2.SetLEDBrightnessRequest(brightnesses=dict(spec.brightnesses)))


def focus_state(node_id, name, params, spec, info) -> SpotCamCall:
    return SpotCamCall(node_id, name, params, PtzServicer, "SetPtzFocusState",
                       ptz_pb2.SetPtzFocusStateRequest(focus_state=spec.focus_state))


def reset_autofocus(node_id, name, params, spec, info) -> SpotCamCall:
    return SpotCamCall(node_id, name, params, PtzServicer, "InitializeLens",
                       ptz_pb2.InitializeLensRequest())
