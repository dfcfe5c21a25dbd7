"""power: motor power on and off, with feedback."""

from bosdyn.api import power_pb2, power_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError

from spot_sim.robot import SimRobot
from spot_sim.rpc import LEASE, set_error, unary
from spot_sim.services import Served, ServiceSpec

_REQUEST = power_pb2.PowerCommandRequest
_MOTORS_ON = (_REQUEST.REQUEST_ON, _REQUEST.REQUEST_ON_MOTORS)
_MOTORS_OFF = (_REQUEST.REQUEST_OFF, _REQUEST.REQUEST_OFF_MOTORS)


class PowerServicer(power_service_pb2_grpc.PowerServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot, self.clock = robot, robot.clock

    @unary(power_pb2.PowerCommandResponse, LEASE)  # the client reports the lease_use_result
    def PowerCommand(self, request, response, context):
        if request.request not in _MOTORS_ON + _MOTORS_OFF:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "the simulated robot only switches motor power")
            return
        status, command_id = self.robot.request_power(request.request in _MOTORS_ON)
        response.status = status
        response.power_command_id = command_id

    @unary(power_pb2.PowerCommandFeedbackResponse)
    def PowerCommandFeedback(self, request, response, context):
        response.status = self.robot.power_feedback(request.power_command_id)


def spec() -> ServiceSpec:
    return ServiceSpec("power", "bosdyn.api.PowerService", "api.spot.robot",
                       power_service_pb2_grpc.add_PowerServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: PowerServicer(parts.robot)),)
