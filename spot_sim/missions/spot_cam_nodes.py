"""The mission's Spot CAM nodes (SpotCamPtz, SpotCamStoreMedia, SpotCamLed,
SpotCamFocusState, SpotCamResetAutofocus): one request to the Spot CAM's own servicer, in
process, so it passes a client's checks; done when the Spot CAM accepts it. On a robot
without a Spot CAM the node errors, naming it."""

from bosdyn.api.header_pb2 import CommonError

from spot_sim.missions.nodes import SUCCESS, MissionNodeError, Node

NO_SPOT_CAM = "this robot has no Spot CAM payload"


class SpotCamCall(Node):
    def __init__(self, node_id, name, parameters, service: str, method: str, request):
        super().__init__(node_id, name, parameters)
        self.service, self.method, self.request = service, method, request

    def update(self, ctx):
        servicer = ctx.robot.spot_cam(self.service)
        if servicer is None:
            raise MissionNodeError(NO_SPOT_CAM)
        response = getattr(servicer, self.method)(self.request, None)
        error = response.header.error
        if error.code not in (CommonError.CODE_OK, CommonError.CODE_UNSPECIFIED):
            raise MissionNodeError(f"{self.service} refused: {error.message}")
        return SUCCESS
