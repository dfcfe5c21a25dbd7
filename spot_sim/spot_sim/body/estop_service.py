"""estop: configuration, endpoint registration and challenge/response check-ins."""

from bosdyn.api import estop_pb2, estop_service_pb2_grpc

from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec


class EstopServicer(estop_service_pb2_grpc.EstopServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot, self.clock, self.estop = robot, robot.clock, robot.estop

    @unary(estop_pb2.RegisterEstopEndpointResponse)
    def RegisterEstopEndpoint(self, request, response, context):
        response.request.CopyFrom(request)
        status, endpoint = self.estop.register(request.target_config_id,
                                               request.target_endpoint, request.new_endpoint)
        response.status = status
        if endpoint is not None:
            response.new_endpoint.CopyFrom(endpoint)

    @unary(estop_pb2.DeregisterEstopEndpointResponse)
    def DeregisterEstopEndpoint(self, request, response, context):
        response.request.CopyFrom(request)
        response.status = self.estop.deregister(request.target_config_id,
                                                request.target_endpoint)

    @unary(estop_pb2.EstopCheckInResponse)
    def EstopCheckIn(self, request, response, context):
        response.request.CopyFrom(request)
        status, challenge = self.estop.check_in(request.endpoint, request.challenge,
                                                request.response, request.stop_level)
        response.status = status
        response.challenge = challenge
        self.robot.step()  # a stop takes effect at once, not at the next physics tick

    @unary(estop_pb2.GetEstopConfigResponse)
    def GetEstopConfig(self, request, response, context):
        response.request.CopyFrom(request)
        response.active_config.CopyFrom(self.estop.config())

    @unary(estop_pb2.SetEstopConfigResponse)
    def SetEstopConfig(self, request, response, context):
        response.request.CopyFrom(request)
        status, config = self.estop.set_config(request.config, request.target_config_id)
        response.status = status
        response.active_config.CopyFrom(config)

    @unary(estop_pb2.GetEstopSystemStatusResponse)
    def GetEstopSystemStatus(self, request, response, context):
        status = response.status
        status.stop_level = self.estop.system_level()
        for endpoint, level, since_valid_ns in self.estop.endpoint_states():
            entry = status.endpoints.add(stop_level=level)
            entry.endpoint.CopyFrom(endpoint)
            entry.time_since_valid_response.FromNanoseconds(since_valid_ns)


def spec() -> ServiceSpec:
    return ServiceSpec("estop", "bosdyn.api.EstopService", "api.spot.robot",
                       estop_service_pb2_grpc.add_EstopServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: EstopServicer(parts.robot)),)
