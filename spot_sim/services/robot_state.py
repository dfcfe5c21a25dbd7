"""robot-state: the full RobotState snapshot."""

from bosdyn.api import robot_state_pb2, robot_state_service_pb2_grpc

from spot_sim.robot import SimRobot
from spot_sim.rpc import unary
from spot_sim.services import ServiceSpec
from spot_sim.state_report import robot_state


class RobotStateServicer(robot_state_service_pb2_grpc.RobotStateServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot, self.clock = robot, robot.clock

    @unary(robot_state_pb2.RobotStateResponse)
    def GetRobotState(self, request, response, context):
        response.robot_state.CopyFrom(robot_state(self.robot))


def spec() -> ServiceSpec:
    return ServiceSpec("robot-state", "bosdyn.api.RobotStateService", "api.spot.robot",
                       robot_state_service_pb2_grpc.add_RobotStateServiceServicer_to_server)
