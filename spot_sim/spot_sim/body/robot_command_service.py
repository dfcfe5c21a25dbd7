"""robot-command: RobotCommand requests read into the robot's command kinds
(``spot_sim.body.kinds``: stand, sit, stop, self-right, velocity, SE2 trajectories, stance,
joint, follow-arm, constrained manipulation, ...) with their arm and gripper parts, and their
feedback."""

from bosdyn.api import robot_command_pb2, robot_command_service_pb2_grpc
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2

from spot_common.stage_stamps import stamp
from spot_sim.body import kinds
from spot_sim.body.arm import commands as arm_command
from spot_sim.body.arm.contact import Scene
from spot_sim.body.arm.model import Arm
from spot_sim.body.commands import Command, CommandBook, CommandRejectedError
from spot_sim.body.kinds.kind import Acceptance, Kind
from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import LEASE, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.core.time_sync_service import TimeSyncServicer

Response = robot_command_pb2.RobotCommandResponse


class RobotCommandServicer(robot_command_service_pb2_grpc.RobotCommandServiceServicer):
    def __init__(self, robot: SimRobot, time_sync: TimeSyncServicer, scene: Scene) -> None:
        self.robot, self.clock, self.time_sync, self.scene = robot, robot.clock, time_sync, scene

    @unary(robot_command_pb2.RobotCommandResponse, LEASE)
    def RobotCommand(self, request, response, context):
        mobility = request.command.synchronized_command.mobility_command
        if mobility.HasField("se2_velocity_request"):
            stamp("sim_command_received", mobility.se2_velocity_request.velocity.linear.x)
        synced = self.time_sync.known(request.clock_identifier)
        try:
            with self.robot.parts(Arm) as (arm,):  # checked and started as one step
                command_id = self._accept(request, synced, arm)
        except CommandRejectedError as rejected:
            response.status = rejected.status
            response.message = str(rejected)
            return
        response.status = Response.STATUS_OK
        response.robot_command_id = command_id
        if mobility.HasField("se2_velocity_request"):
            stamp("sim_command_accepted", mobility.se2_velocity_request.velocity.linear.x)

    def _accept(self, request, synced: bool, arm: Arm | None) -> int:
        """Check every part of the command, then start them all (nothing starts if any part
        is refused); the command's id."""
        robot = self.robot
        arm_request, gripper_request = _manipulator_requests(request.command)
        manipulator = arm_request is not None or gripper_request is not None
        kind, body = None, None
        if not manipulator or request.command.synchronized_command.HasField("mobility_command"):
            kind, body = kinds.classify(request.command)
            if kind is None:
                raise CommandRejectedError(Response.STATUS_UNSUPPORTED, body)
        kinds.check_allowed(robot, kind, manipulator)
        now = self.clock.now_nsec()
        arm_task = gripper_task = None
        if arm_request is not None:
            arm_task = arm_command.arm_task(robot, arm, self.scene, 0, arm_request, now)
        elif kind is not None and kind.arm_task is not None:
            arm_task = kind.arm_task(robot, body)
        if gripper_request is not None:
            gripper_task = arm_command.gripper_task(robot, 0, gripper_request, now)
        if kind is not None and kind.full_body:  # it takes the whole robot: the arm's command
            robot.halt_arm()                     # ends where the arm is (overridden)
        record = self._accept_mobility(request, kind, body, Acceptance(robot, synced, now)) \
            if kind is not None else robot.record_command("manipulator")
        if arm_task is not None:
            arm_task.command_id = record
            arm.start(arm_task)
        if gripper_task is not None:
            gripper_task.command_id = record
            arm.start_gripper(gripper_task)
        return record

    def _accept_mobility(self, request, kind: Kind, body, ctx: Acceptance) -> int:
        end_ns = kind.end(ctx, body)
        params = request.command.synchronized_command.mobility_command.params
        mobility_params = None
        if params.type_url:
            mobility_params = spot_command_pb2.MobilityParams()
            if not params.Unpack(mobility_params):
                raise CommandRejectedError(Response.STATUS_INVALID_REQUEST,
                                           "mobility params are not bosdyn.api.spot.MobilityParams")
        fields = kind.accept(ctx, body)
        if mobility_params is not None:
            self.robot.set_mobility_params(mobility_params)
        return self.robot.new_command(kind.name, end_ns=end_ns, **fields)

    @unary(robot_command_pb2.RobotCommandFeedbackResponse)
    def RobotCommandFeedback(self, request, response, context):
        robot = self.robot
        with robot.parts(CommandBook, Arm) as (book, arm):
            command = book.commands.get(request.robot_command_id)
            if command is not None:
                _fill_feedback(robot, arm, command, response.feedback)
        if command is None:
            response.header.error.code = response.header.error.CODE_INVALID_REQUEST
            response.header.error.message = f"unknown command id {request.robot_command_id}"

    @unary(robot_command_pb2.ClearBehaviorFaultResponse, LEASE)
    def ClearBehaviorFault(self, request, response, context):
        cleared = self.robot.clear_behavior_fault(request.behavior_fault_id)
        response.status = response.STATUS_CLEARED if cleared else response.STATUS_NOT_CLEARED


def _manipulator_requests(command: robot_command_pb2.RobotCommand) -> tuple:
    """The (arm, gripper) requests of a synchronized command; None for a part it lacks."""
    if not command.HasField("synchronized_command"):
        return None, None
    sync = command.synchronized_command
    return (sync.arm_command if sync.HasField("arm_command") else None,
            sync.gripper_command if sync.HasField("gripper_command") else None)


def _fill_feedback(robot: SimRobot, arm: Arm | None, command: Command, feedback) -> None:
    """RobotCommandFeedback for one command, from its record and the robot's state (under
    the robot's lock)."""
    now = robot.clock.now_nsec()
    if arm is not None:
        sync = feedback.synchronized_feedback
        if command.id in arm.tasks and command.kind != "constrained_manipulation":
            arm_command.fill_arm_feedback(arm, arm.tasks[command.id], now,
                                          sync.arm_command_feedback)
        if command.id in arm.gripper_tasks:
            arm_command.fill_gripper_feedback(arm, arm.gripper_tasks[command.id], now,
                                              sync.gripper_command_feedback)
    kind = kinds.KINDS.get(command.kind)  # "manipulator": arm and gripper feedback only
    if kind is not None and kind.feedback is not None:
        fb = feedback.full_body_feedback if kind.full_body else \
            feedback.synchronized_feedback.mobility_command_feedback
        fb.status = command.status
        kind.feedback(robot, command, now, fb)


def spec() -> ServiceSpec:
    return ServiceSpec("robot-command", "bosdyn.api.RobotCommandService", "api.spot.robot",
                       robot_command_service_pb2_grpc.add_RobotCommandServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: RobotCommandServicer(
    parts.robot, parts.servicer(TimeSyncServicer), parts.sensors.scene)),)
