"""Any ``bosdyn.api.RobotCommand`` from ROS: parsed, checked before it is sent, and judged
finished from the robot's feedback. Pure functions: no ROS, no robot connection.

The checks are the ones a hand-written command most often fails: a value that is not finite,
a frame the robot does not have, mobility params that are not ``spot.MobilityParams``, and a
command that runs until an end time given none.
"""

import math

from bosdyn.api import basic_command_pb2, robot_command_pb2
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2
from google.protobuf.message import Message

from spot_driver.core.errors import CommandError
from spot_driver.core.proto_input import check_values, parse_one_form

RobotCommand = robot_command_pb2.RobotCommand
Container = basic_command_pb2.RobotCommandFeedbackStatus
MAX_DURATION_S = 300.0
# The requests that run until an end time (the SDK's END_TIME_EDIT_TREE, plus constrained
# manipulation, whose robot-time end the driver sets itself): (part, request).
TIMED = {("mobility", "se2_velocity_request"), ("mobility", "se2_trajectory_request"),
         ("mobility", "stance_request"), ("arm", "arm_velocity_command"),
         ("full_body", "constrained_manipulation_request")}
# Requests without a status of their own: these are done once the robot holds them; the
# others without one run until their end time. Follow-arm has no status and no end: the
# body follows the hand as long as the command stands, so the arm part decides.
HOLDS = {"stop_request", "freeze_request", "arm_stop_command", "follow_arm_request"}
# Statuses of a part still running when its end time came: it ran its course.
RAN_ITS_COURSE = {"STATUS_RUNNING"}
SUCCEEDED = {"STATUS_COMPLETED", "STATUS_COMPLETE", "STATUS_POWERED_OFF", "STATUS_IS_SITTING",
             "STATUS_IS_STANDING", "STATUS_STANCED", "STATUS_TRAJECTORY_COMPLETE",
             "STATUS_AT_GOAL", "STATUS_STOPPED", "STATUS_APPLYING_FORCE"}
# SE2 trajectory statuses have aliases (STOPPED = AT_GOAL, STOPPING = NEAR_GOAL): names are
# the first declared.
RUNNING = {"STATUS_UNKNOWN", "STATUS_IN_PROGRESS", "STATUS_GOING_TO_GOAL", "STATUS_NEAR_GOAL",
           "STATUS_GOING_TO_STANCE", "STATUS_STOPPING", "STATUS_RUNNING", "STATUS_DRAGGING",
           "STATUS_ACTIVE"}


def parse(serialized: bytes, text: str) -> RobotCommand:
    """The command a goal carries, from exactly one of its serialized or text forms."""
    command = parse_one_form(RobotCommand(), serialized, text, ("command", "command_text"))
    if command.WhichOneof("command") is None:
        raise CommandError("the command is empty: it has neither full_body_command nor "
                           "synchronized_command")
    return command


def parts(command: RobotCommand) -> list[tuple[str, str]]:
    """(part, request) for each part of the command: part is full_body, mobility, arm or
    gripper; request the name of the oneof field set in it."""
    if command.HasField("full_body_command"):
        return [("full_body", command.full_body_command.WhichOneof("command") or "")]
    sync = command.synchronized_command
    found = []
    for part, field in (("mobility", "mobility_command"), ("arm", "arm_command"),
                        ("gripper", "gripper_command")):
        if sync.HasField(field):
            found.append((part, getattr(sync, field).WhichOneof("command") or ""))
    return found


def check(command: RobotCommand, frames: set[str], duration: float) -> None:
    """Raise CommandError unless ``command`` may be sent with an end time ``duration`` s
    ahead (0: none): finite values, known frames, parts with a request, an end time where
    one is needed."""
    if not math.isfinite(duration) or not 0.0 <= duration <= MAX_DURATION_S:
        raise CommandError(f"duration {duration} s is outside [0, {MAX_DURATION_S:g}] s")
    found = parts(command)
    if not found:
        raise CommandError("the synchronized command has no mobility, arm or gripper part")
    empty = [part for part, request in found if not request]
    if empty:
        raise CommandError(f"the {', '.join(empty)} part has no request set")
    for message in (command, *_mobility_params(command)):
        check_values(message, frames)
    if duration == 0.0:
        for part, request in found:
            if (part, request) in TIMED and not _request(command, part,
                                                         request).HasField("end_time"):
                raise CommandError(f"{request} runs until an end time: set the goal's "
                                   f"duration (s)")


def _mobility_params(command: RobotCommand) -> list[Message]:
    """The mobility params packed in the command, unpacked (none if it has none)."""
    params = command.synchronized_command.mobility_command.params
    if not params.type_url:
        return []
    unpacked = spot_command_pb2.MobilityParams()
    if not params.Unpack(unpacked):
        raise CommandError(f"mobility params are {params.TypeName()}, not "
                           f"bosdyn.api.spot.MobilityParams")
    return [unpacked]


def _request(command: RobotCommand, part: str, request: str) -> Message:
    container = command.full_body_command if part == "full_body" else getattr(
        command.synchronized_command, f"{part}_command")
    return getattr(container, request)


def judge(command: RobotCommand, feedback) -> tuple[bool, bool, str]:
    """(done, succeeded, status) of a sent command from its RobotCommandFeedback. A part is
    done when its own status says so (standing, at goal, complete ...), when the robot holds
    it (stop, freeze), or when the robot stops processing it: timed out (success for a
    command that ran to its end time) or overridden, frozen, unsupported (failure)."""
    verdicts = [_judge_part(part, request, feedback) for part, request in parts(command)]
    done = all(v[0] for v in verdicts)
    status = "; ".join(f"{part}: {v[2]}" for (part, _), v in zip(parts(command), verdicts,
                                                                  strict=True))
    return done, done and all(v[1] for v in verdicts), status


def _judge_part(part: str, request: str, feedback) -> tuple[bool, bool, str]:
    if part == "full_body":
        container = feedback.full_body_feedback
    else:
        container = getattr(feedback.synchronized_feedback, f"{part}_command_feedback")
    inner_field = container.WhichOneof(container.DESCRIPTOR.oneofs[0].name)
    inner = getattr(container, inner_field) if inner_field else None
    own = _own_status(inner)
    if container.status not in (Container.STATUS_PROCESSING, Container.STATUS_UNKNOWN):
        ended = Container.Status.Name(container.status)
        ran_out = container.status == Container.STATUS_COMMAND_TIMED_OUT
        return True, ran_out and (own is None or own in SUCCEEDED | RAN_ITS_COURSE), ended
    if own is None:
        if request in HOLDS and container.status == Container.STATUS_PROCESSING:
            return True, True, "STATUS_PROCESSING"
        return False, False, Container.Status.Name(container.status)
    if own in RUNNING or (own == "STATUS_STOPPED" and _enum_name(
            inner, "body_movement_status") == "BODY_STATUS_MOVING"):
        return False, False, own
    return True, own in SUCCEEDED, own


def _own_status(inner) -> str | None:
    """The name of a part's own ``status`` (None: it has none)."""
    return None if inner is None else _enum_name(inner, "status")


def _enum_name(message: Message, name: str) -> str | None:
    field = message.DESCRIPTOR.fields_by_name.get(name)
    if field is None or field.enum_type is None:
        return None
    number = getattr(message, name)
    value = field.enum_type.values_by_number.get(number)
    return value.name if value is not None else str(number)
