"""docking: dock, undock, docking feedback, configuration and state."""

from bosdyn.api.docking import docking_pb2, docking_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError

from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.rpc import LeaseCheck, set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.docking import world
from spot_sim.docking.docking import Docking, DockingRejectedError

Response = docking_pb2.DockingCommandResponse


class DockingServicer(docking_service_pb2_grpc.DockingServiceServicer):
    def __init__(self, robot: SimRobot, docking: Docking) -> None:
        self.robot, self.clock, self.docking = robot, robot.clock, docking

    @unary(docking_pb2.DockingCommandResponse, LeaseCheck(
        refused=lambda response, uses: setattr(response, "status", Response.STATUS_ERROR_LEASE)))
    def DockingCommand(self, request, response, context):
        if not self.robot.license.allows("docking"):
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      self.robot.license.refusal("docking"))
            return
        if not request.HasField("end_time"):
            set_error(response, CommonError.CODE_INVALID_REQUEST, "end_time is required")
            return
        try:
            task_id = self.docking.command(request.docking_station_id,
                                           request.prep_pose_behavior,
                                           timestamp_to_nsec(request.end_time))
        except DockingRejectedError as rejected:
            response.status = rejected.status
            return
        response.status = Response.STATUS_OK
        response.docking_command_id = task_id

    @unary(docking_pb2.DockingCommandFeedbackResponse)
    def DockingCommandFeedback(self, request, response, context):
        params = request.update_docking_params
        end_ns = (timestamp_to_nsec(params.end_time) if request.HasField("update_docking_params")
                  and params.HasField("end_time") else None)
        response.status = self.docking.feedback(request.docking_command_id, end_ns)

    @unary(docking_pb2.GetDockingConfigResponse)
    def GetDockingConfig(self, request, response, context):
        for start, end, kind in world.DOCK_ID_RANGES:
            response.dock_configs.add(id_start=start, id_end=end, type=kind)

    @unary(docking_pb2.GetDockingStateResponse)
    def GetDockingState(self, request, response, context):
        response.dock_state.CopyFrom(self.docking.state())


def spec() -> ServiceSpec:
    return ServiceSpec("docking", "bosdyn.api.docking.DockingService", "api.spot.robot",
                       docking_service_pb2_grpc.add_DockingServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: DockingServicer(parts.robot, parts.docking)),)
