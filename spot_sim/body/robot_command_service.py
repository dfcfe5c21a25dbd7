"""robot-command: stand, sit, stop, self-right, velocity, SE2 trajectories, arm and gripper
commands, and their feedback."""

import math

from bosdyn.api import basic_command_pb2 as basic
from bosdyn.api import robot_command_pb2, robot_command_service_pb2_grpc
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2

from spot_sim.body import kinematics, mobility
from spot_sim.body.commands import FULL_BODY_KINDS, Command, CommandRejectedError
from spot_sim.body.mobility import Se2
from spot_sim.body.power import MotorPower
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.rpc import LEASE, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.core.stage_stamps import stamp
from spot_sim.core.time_sync_service import TimeSyncServicer
from spot_sim.manipulation import arm_command, arm_kinematics, arm_modes
from spot_sim.perception.scene import Scene

Response = robot_command_pb2.RobotCommandResponse
Status = basic.RobotCommandFeedbackStatus
MAX_VELOCITY_HORIZON_NS = 30 * 1_000_000_000  # end times further ahead are TOO_DISTANT
_FULL_BODY = {"stop_request": "stop_fb", "freeze_request": "freeze",
              "selfright_request": "selfright", "safe_power_off_request": "safe_power_off",
              "battery_change_pose_request": "battery_change_pose", "joint_request": "joint",
              "constrained_manipulation_request": "constrained_manipulation"}
_MOBILITY = {"se2_trajectory_request": "trajectory", "se2_velocity_request": "velocity",
             "sit_request": "sit", "stand_request": "stand", "stop_request": "stop",
             "stance_request": "stance", "follow_arm_request": "follow_arm"}
_NEEDS_POWER = {"trajectory", "velocity", "sit", "stand", "stop", "stop_fb", "freeze",
                "selfright", "battery_change_pose", "stance", "joint", "follow_arm",
                "constrained_manipulation"}
_NEEDS_ARM = {"follow_arm", "constrained_manipulation"}
FEET = ("fl", "fr", "hl", "hr")
MAX_FOOT_SHIFT = 0.5  # m a stance may move a foot from its nominal place under the body
_ALLOWED_IN_FAULT = {"selfright", "safe_power_off", "stop_fb", "stop", "freeze"}


class RobotCommandServicer(robot_command_service_pb2_grpc.RobotCommandServiceServicer):
    def __init__(self, robot: SimRobot, time_sync: TimeSyncServicer, scene: Scene) -> None:
        self.robot, self.clock, self.time_sync, self.scene = robot, robot.clock, time_sync, scene

    @unary(robot_command_pb2.RobotCommandResponse, LEASE)
    def RobotCommand(self, request, response, context):
        mobility = request.command.synchronized_command.mobility_command
        if mobility.HasField("se2_velocity_request"):
            stamp("sim_command_received", mobility.se2_velocity_request.velocity.linear.x)
        try:
            command = self.robot.atomically(lambda: self._accept(request))
        except CommandRejectedError as rejected:
            response.status = rejected.status
            response.message = str(rejected)
            return
        response.status = Response.STATUS_OK
        response.robot_command_id = command.id
        if command.kind == "velocity":
            stamp("sim_command_accepted", command.velocity.x)

    def _accept(self, request) -> Command:
        """Check every part of the command, then start them all (nothing starts if any part
        is refused)."""
        robot = self.robot
        arm_request, gripper_request = _manipulator_requests(request.command)
        manipulator = arm_request is not None or gripper_request is not None
        kind, body = None, None
        if not manipulator or request.command.synchronized_command.HasField("mobility_command"):
            kind, body = _classify(request.command)
            if kind is None:
                raise CommandRejectedError(Response.STATUS_UNSUPPORTED, body)
        _check_robot_allows(robot, kind, manipulator)
        now = self.clock.now_nsec()
        arm_task = gripper_task = None
        if arm_request is not None:
            arm_task = arm_command.arm_task(robot, self.scene, 0, arm_request, now)
        elif kind == "constrained_manipulation":
            arm_task = arm_modes.constrained_task(robot, 0, body)
        if gripper_request is not None:
            gripper_task = arm_command.gripper_task(robot, 0, gripper_request, now)
        record = self._accept_mobility(request, kind, body) if kind is not None else \
            robot.record_command("manipulator")
        if arm_task is not None:
            arm_task.command_id = record.id
            robot.arm.start(arm_task)
        if gripper_task is not None:
            gripper_task.command_id = record.id
            robot.arm.start_gripper(gripper_task)
        return record

    def _accept_mobility(self, request, kind: str, body) -> Command:
        robot = self.robot
        end_ns = self._end_ns(request, kind, body)
        params = request.command.synchronized_command.mobility_command.params
        if params.type_url:
            mobility_params = spot_command_pb2.MobilityParams()
            if not params.Unpack(mobility_params):
                raise CommandRejectedError(Response.STATUS_INVALID_REQUEST,
                                           "mobility params are not bosdyn.api.spot.MobilityParams")
        else:
            mobility_params = None
        extra = {}
        if kind == "velocity":
            extra["velocity"] = self._velocity(body)
        elif kind == "trajectory":
            extra["goal"] = self._goal(body)
        elif kind == "stance":
            extra["details"] = {"reachable": self._stance_reachable(body.stance)}
        elif kind == "follow_arm":
            extra["details"] = {"offset": _body_offset(body)}
        if mobility_params is not None:
            robot.set_mobility_params(mobility_params)
        return robot.new_command(kind, end_ns=end_ns, **extra)

    def _end_ns(self, request, kind: str, body) -> int | None:
        """The robot time a command of ``kind`` ends (None: it runs until replaced)."""
        if kind in ("velocity", "trajectory", "stance"):
            return self._end_time(request, body)
        if kind != "constrained_manipulation":
            return None
        end_ns = timestamp_to_nsec(body.end_time)  # robot time, set by the caller
        if end_ns < self.clock.now_nsec():
            raise CommandRejectedError(Response.STATUS_EXPIRED, "end_time is in the past")
        return end_ns

    def _end_time(self, request, body) -> int:
        if not body.HasField("end_time"):
            raise CommandRejectedError(Response.STATUS_INVALID_REQUEST, "end_time is required")
        if not self.time_sync.known(request.clock_identifier):
            raise CommandRejectedError(Response.STATUS_NO_TIMESYNC,
                                  "no time sync for this clock identifier")
        end_ns = timestamp_to_nsec(body.end_time)
        now = self.clock.now_nsec()
        if end_ns < now:
            raise CommandRejectedError(Response.STATUS_EXPIRED, "end_time is in the past")
        if end_ns - now > MAX_VELOCITY_HORIZON_NS and isinstance(
                body, basic.SE2VelocityCommand.Request):
            raise CommandRejectedError(Response.STATUS_TOO_DISTANT, "end_time is too far ahead")
        return end_ns

    def _frame_pose(self, frame: str) -> Se2:
        """odom_T_frame for the gravity-aligned frames commands may be expressed in."""
        robot = self.robot
        if frame == "odom":
            return Se2()
        if frame == "vision":
            return mobility.inverse(robot.base.vision_odom)
        if frame in ("body", "flat_body"):
            return robot.base.odom_body
        raise CommandRejectedError(Response.STATUS_UNKNOWN_FRAME, f"unknown frame {frame!r}")

    def _velocity(self, body) -> Se2:
        v = body.velocity
        values = (v.linear.x, v.linear.y, v.angular)
        if not all(math.isfinite(x) for x in values):
            raise CommandRejectedError(Response.STATUS_INVALID_REQUEST, "velocity is not finite")
        frame_yaw = self._frame_pose(body.se2_frame_name or "body").yaw
        # Express the velocity in the body frame.
        relative_yaw = frame_yaw - self.robot.base.odom_body.yaw
        c, s = math.cos(relative_yaw), math.sin(relative_yaw)
        return Se2(c * values[0] - s * values[1], s * values[0] + c * values[1], values[2])

    def _stance_reachable(self, stance) -> bool:
        """Whether every foot of ``stance`` is within MAX_FOOT_SHIFT of where it stands now
        (raises for a missing foot or a non-finite position)."""
        missing = [foot for foot in FEET if foot not in stance.foot_positions]
        if missing:
            raise CommandRejectedError(Response.STATUS_INVALID_REQUEST,
                                       f"stance needs positions for feet {missing}")
        frame = self._frame_pose(stance.se2_frame_name or "odom")
        body = self.robot.base.odom_body
        nominal = kinematics.foot_positions_in_body(
            kinematics.leg_joint_positions(kinematics.STAND_HEIGHT))
        for index, foot in enumerate(FEET):
            position = stance.foot_positions[foot]
            if not (math.isfinite(position.x) and math.isfinite(position.y)):
                raise CommandRejectedError(Response.STATUS_INVALID_REQUEST,
                                           f"foot {foot} position is not finite")
            in_odom = mobility.compose(frame, Se2(position.x, position.y, 0.0))
            in_body = mobility.compose(mobility.inverse(body), in_odom)
            if math.hypot(in_body.x - nominal[index][0], in_body.y - nominal[index][1]) > \
                    MAX_FOOT_SHIFT:
                return False
        return True

    def _goal(self, body) -> Se2:
        points = body.trajectory.points
        if not points:
            raise CommandRejectedError(Response.STATUS_INVALID_REQUEST, "trajectory has no points")
        pose = points[-1].pose
        values = (pose.position.x, pose.position.y, pose.angle)
        if not all(math.isfinite(x) for x in values):
            raise CommandRejectedError(Response.STATUS_INVALID_REQUEST, "goal is not finite")
        return mobility.compose(self._frame_pose(body.se2_frame_name), Se2(*values))

    @unary(robot_command_pb2.RobotCommandFeedbackResponse)
    def RobotCommandFeedback(self, request, response, context):
        robot = self.robot

        def fill() -> bool:
            command = robot.book.commands.get(request.robot_command_id)
            if command is not None:
                _fill_feedback(robot, command, response.feedback)
            return command is not None

        if not robot.atomically(fill):
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


def _check_robot_allows(robot: SimRobot, kind: str | None, manipulator: bool) -> None:
    """Raise CommandRejectedError unless the robot can run a command of ``kind`` (None: no
    mobility part) with or without an arm/gripper part: hardware, license, faults, power."""
    license = robot.license
    manipulator = manipulator or kind in _NEEDS_ARM
    if manipulator and robot.arm is None:
        raise CommandRejectedError(Response.STATUS_UNSUPPORTED, "this robot has no arm")
    if manipulator and not license.allows("arm"):
        raise CommandRejectedError(Response.STATUS_UNSUPPORTED, license.refusal("arm"))
    if kind == "joint" and not license.allows("joint_control"):
        raise CommandRejectedError(Response.STATUS_UNSUPPORTED,
                                   license.refusal("joint_control"))
    if robot.active_fault() and (manipulator or kind not in _ALLOWED_IN_FAULT):
        raise CommandRejectedError(Response.STATUS_BEHAVIOR_FAULT,
                                   "the robot has an active behavior fault")
    if (manipulator or kind in _NEEDS_POWER) and not robot.powered:
        raise CommandRejectedError(Response.STATUS_NOT_POWERED_ON, "motor power is off")


def _classify(command: robot_command_pb2.RobotCommand):
    """(kind, request message) of a RobotCommand, or (None, reason) when unsupported."""
    which = command.WhichOneof("command")
    if which == "full_body_command":
        field = command.full_body_command.WhichOneof("command")
        if field in _FULL_BODY:
            return _FULL_BODY[field], getattr(command.full_body_command, field)
        return None, f"full body command {field!r} is not supported"
    if which == "synchronized_command":
        sync = command.synchronized_command
        field = sync.mobility_command.WhichOneof("command")
        if field in _MOBILITY:
            return _MOBILITY[field], getattr(sync.mobility_command, field)
        return None, f"mobility command {field!r} is not supported"
    return None, "empty command"


def _fill_feedback(robot: SimRobot, command: Command, feedback) -> None:
    """RobotCommandFeedback for one command, from its record and the robot's state."""
    now = robot.clock.now_nsec()
    arm = robot.arm
    if arm is not None:
        sync = feedback.synchronized_feedback
        if command.id in arm.tasks and command.kind != "constrained_manipulation":
            arm_command.fill_arm_feedback(arm, arm.tasks[command.id], now,
                                          sync.arm_command_feedback)
        if command.id in arm.gripper_tasks:
            arm_command.fill_gripper_feedback(arm, arm.gripper_tasks[command.id], now,
                                              sync.gripper_command_feedback)
    if command.kind in _FULL_BODY_FEEDBACK:
        fb = feedback.full_body_feedback
        fb.status = command.status
        _FULL_BODY_FEEDBACK[command.kind](robot, command, now, fb)
    elif command.kind in _MOBILITY_FEEDBACK:
        fb = feedback.synchronized_feedback.mobility_command_feedback
        fb.status = command.status
        _MOBILITY_FEEDBACK[command.kind](robot, command, now, fb)


def _body_offset(request) -> tuple[float, float]:
    """A follow-arm command's body offset from the hand (x, y in the body frame, m): the
    request's, or by default where the hand is at the arm's ready pose."""
    offset = request.body_offset_from_hand
    values = (offset.x, offset.y, offset.z)
    if not all(math.isfinite(v) for v in values):
        raise CommandRejectedError(Response.STATUS_INVALID_REQUEST,
                                   "body_offset_from_hand is not finite")
    if request.HasField("body_offset_from_hand"):
        return offset.x, offset.y
    hand = arm_kinematics.hand_pose(arm_kinematics.READY)
    return float(hand[0, 3]), float(hand[1, 3])


def _constrained(robot, command, now, fb) -> None:
    task = robot.arm.tasks.get(command.id) if robot.arm is not None else None
    if task is not None:
        arm_modes.fill_constrained_feedback(robot, task, fb)


def _settled_in_place(robot: SimRobot, command: Command, now: int) -> bool:
    """Whether ``command`` still drives the robot and the legs stand still, standing."""
    posture = robot.legs.posture
    return robot.book.mobility is command and posture.standing and not posture.moving(now)


def _safe_power_off(robot, command, now, fb) -> None:
    Off = basic.SafePowerOffCommand.Feedback
    fb.safe_power_off_feedback.status = Off.STATUS_POWERED_OFF \
        if robot.power.state == MotorPower.STATE_OFF else Off.STATUS_IN_PROGRESS


def _joint(robot, command, now, fb) -> None:
    Joint = basic.JointCommand.Feedback
    fb.joint_feedback.status = Joint.STATUS_ACTIVE \
        if robot.legs.joint_mode.command_id == command.id else Joint.STATUS_UNKNOWN


def _stand(robot, command, now, fb) -> None:
    Stand = basic.StandCommand.Feedback
    fb.stand_feedback.status = Stand.STATUS_IS_STANDING \
        if _settled_in_place(robot, command, now) else Stand.STATUS_IN_PROGRESS
    fb.stand_feedback.standing_state = Stand.STANDING_CONTROLLED


def _sit(robot, command, now, fb) -> None:
    Sit = basic.SitCommand.Feedback
    posture = robot.legs.posture
    fb.sit_feedback.status = Sit.STATUS_IS_SITTING \
        if not posture.standing and not posture.moving(now) else Sit.STATUS_IN_PROGRESS


def _stance(robot, command, now, fb) -> None:
    Stance = basic.StanceCommand.Feedback
    if not command.details.get("reachable", True):
        fb.stance_feedback.status = Stance.STATUS_TOO_FAR_AWAY
    elif _settled_in_place(robot, command, now):
        fb.stance_feedback.status = Stance.STATUS_STANCED
    else:
        fb.stance_feedback.status = Stance.STATUS_GOING_TO_STANCE


def _trajectory(robot, command, now, fb) -> None:
    Traj = basic.SE2TrajectoryCommand.Feedback
    traj = fb.se2_trajectory_feedback
    distance, _ = mobility.distance_to(robot.base.odom_body, command.goal)
    if mobility.goal_reached(robot.base.odom_body, command.goal):
        traj.status = Traj.STATUS_AT_GOAL
    elif distance < mobility.NEAR_GOAL_DIST:
        traj.status = Traj.STATUS_NEAR_GOAL
    else:
        traj.status = Traj.STATUS_GOING_TO_GOAL
    traj.body_movement_status = Traj.BODY_STATUS_MOVING if robot.base.velocity != Se2() \
        else Traj.BODY_STATUS_SETTLED
    traj.final_goal_status = Traj.FINAL_GOAL_STATUS_BLOCKED if robot.base.blocked \
        else Traj.FINAL_GOAL_STATUS_ACHIEVABLE  # a no-go region stopped the walk


def _completed_once_done(name: str, feedback):
    """Feedback ``name`` that says COMPLETED once the command is done, IN_PROGRESS before."""
    def fill(robot, command, now, fb) -> None:
        getattr(fb, name).status = feedback.STATUS_COMPLETED if command.done \
            else feedback.STATUS_IN_PROGRESS
    return fill


def _present(name: str):
    """Feedback that only says which command it is (an empty message named ``name``)."""
    return lambda robot, command, now, fb: getattr(fb, name).SetInParent()


# Feedback per command kind: fn(robot, command, now_ns, feedback message) fills the
# command's part; full-body kinds write FullBodyCommand.Feedback, mobility kinds
# MobilityCommand.Feedback. "manipulator" commands have only arm and gripper feedback.
_FULL_BODY_FEEDBACK = {
    "stop_fb": _present("stop_feedback"), "freeze": _present("freeze_feedback"),
    "selfright": _completed_once_done("selfright_feedback", basic.SelfRightCommand.Feedback),
    "safe_power_off": _safe_power_off, "joint": _joint,
    "battery_change_pose": _completed_once_done("battery_change_pose_feedback",
                                                basic.BatteryChangePoseCommand.Feedback),
    "constrained_manipulation": _constrained}
_MOBILITY_FEEDBACK = {
    "stand": _stand, "sit": _sit, "velocity": _present("se2_velocity_feedback"),
    "stance": _stance, "stop": _present("stop_feedback"), "trajectory": _trajectory,
    "follow_arm": _present("follow_arm_feedback")}
assert set(_FULL_BODY_FEEDBACK) == FULL_BODY_KINDS


def spec() -> ServiceSpec:
    return ServiceSpec("robot-command", "bosdyn.api.RobotCommandService", "api.spot.robot",
                       robot_command_service_pb2_grpc.add_RobotCommandServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: RobotCommandServicer(
    parts.robot, parts.servicer(TimeSyncServicer), parts.sensors.scene)),)
