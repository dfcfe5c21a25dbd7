"""robot-state: the full RobotState snapshot, the hardware configuration (skeleton with an
OBJ model per link), link models and robot metrics."""

import math

from bosdyn.api import robot_state_pb2, robot_state_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError

from spot_common import stage_stamps
from spot_sim.body.robot import SimRobot
from spot_sim.core.directory import Directory
from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.state import link_models, state_report

STRIDE_M = 0.6  # distance per gait cycle, for the gait-cycle metric


class RobotStateServicer(robot_state_service_pb2_grpc.RobotStateServiceServicer):
    def __init__(self, robot: SimRobot, directory: Directory | None = None) -> None:
        self.robot, self.clock, self.directory = robot, robot.clock, directory
        self._skeleton = link_models.skeleton(robot.config.has_arm)

    @unary(robot_state_pb2.RobotStateResponse)
    def GetRobotState(self, request, response, context):
        if self.directory is not None:
            self.directory.check_liveness()
        response.robot_state.CopyFrom(state_report.robot_state(self.robot))
        if stage_stamps.ENABLED:
            velocity = response.robot_state.kinematic_state.velocity_of_body_in_odom.linear
            stage_stamps.stamp("sim_state_read", math.hypot(velocity.x, velocity.y))

    @unary(robot_state_pb2.RobotHardwareConfigurationResponse)
    def GetRobotHardwareConfiguration(self, request, response, context):
        config = response.hardware_configuration
        config.skeleton.CopyFrom(self._skeleton)
        config.can_power_command_request_payload_ports = True
        config.can_power_command_request_wifi_radio = True
        config.redundant_safety_stop_enabled = self.robot.config.safety_rated_stop
        config.has_audio_visual_system = self.robot.config.has_audio_visual

    @unary(robot_state_pb2.RobotLinkModelResponse)
    def GetRobotLinkModel(self, request, response, context):
        link = next((k for k in self._skeleton.links if k.name == request.link_name), None)
        if link is None:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      f"unknown link {request.link_name!r}")
            return
        response.link_model.CopyFrom(link.obj_model)

    @unary(robot_state_pb2.RobotMetricsResponse)
    def GetRobotMetrics(self, request, response, context):
        robot = self.robot
        distance, moving, powered = robot.metrics()
        metrics = response.robot_metrics
        metrics.timestamp.CopyFrom(self.clock.timestamp())
        metrics.metrics.add(label="distance", units="m", float_value=distance)
        metrics.metrics.add(label="gait cycles", int_value=int(distance / STRIDE_M))
        metrics.metrics.add(label="time moving", units="s").duration.FromNanoseconds(
            int(moving * 1e9))
        metrics.metrics.add(label="electric power", units="s",
                            notes="time with motor power on").duration.FromNanoseconds(
            int(powered * 1e9))


def spec() -> ServiceSpec:
    return ServiceSpec("robot-state", "bosdyn.api.RobotStateService", "api.spot.robot",
                       robot_state_service_pb2_grpc.add_RobotStateServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: RobotStateServicer(parts.robot,
                                                             parts.directory)),)
