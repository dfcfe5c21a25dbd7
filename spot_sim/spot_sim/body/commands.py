"""The robot's command book: ids, accepted commands and the mobility command in charge."""

import itertools
from dataclasses import dataclass, field

from bosdyn.api import basic_command_pb2, robot_command_pb2

from spot_sim.body.mobility import Se2

Feedback = basic_command_pb2.RobotCommandFeedbackStatus
INVALID_REQUEST = robot_command_pb2.RobotCommandResponse.STATUS_INVALID_REQUEST

# Mobility command kinds that count as full-body commands in feedback.
FULL_BODY_KINDS = {"stop_fb", "freeze", "selfright", "safe_power_off", "battery_change_pose",
                   "joint", "constrained_manipulation"}


@dataclass
class Command:
    """One accepted robot command and what the robot knows of its progress."""

    id: int
    kind: str
    received_ns: int
    end_ns: int | None = None
    goal: Se2 | None = None
    velocity: Se2 | None = None
    status: int = Feedback.STATUS_PROCESSING
    done: bool = False
    done_ns: int | None = None
    details: dict = field(default_factory=dict)


class CommandRejectedError(Exception):
    """A command the robot refuses, with the response status and a message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def reject(message: str, status: int = INVALID_REQUEST):
    """Refuse a command: raise CommandRejectedError with ``status`` (default INVALID_REQUEST)."""
    raise CommandRejectedError(status, message)


def finish(command: Command, status: int | None, now_ns: int) -> None:
    """End ``command``, with ``status`` if given (else the status it has)."""
    if status is not None:
        command.status = status
    command.done = True
    command.done_ns = now_ns


class CommandBook:
    """Every command id the robot hands out (commands, power commands, faults, tasks), the
    accepted commands by id and the one mobility command in charge of the body."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.commands: dict[int, Command] = {}
        self.mobility: Command | None = None

    def next_id(self) -> int:
        return next(self._ids)

    def forget(self) -> None:
        """A reboot: no command survives (ids keep counting)."""
        self.commands, self.mobility = {}, None

    def add_mobility(self, kind: str, now_ns: int, **kwargs) -> Command:
        """A new mobility command; the one it replaces, if still running, is overridden."""
        command = Command(self.next_id(), kind, now_ns, **kwargs)
        self.commands[command.id] = command
        self.override(now_ns)
        self.mobility = command
        return command

    def add_done(self, kind: str, now_ns: int) -> Command:
        """A command without a mobility part (arm and gripper only), recorded as done."""
        command = Command(self.next_id(), kind, now_ns, done=True)
        self.commands[command.id] = command
        return command

    def override(self, now_ns: int) -> None:
        """The running mobility command, if any, ends as overridden."""
        if self.mobility is not None and not self.mobility.done:
            finish(self.mobility, Feedback.STATUS_COMMAND_OVERRIDDEN, now_ns)

    def active(self, command_id: int) -> bool:
        """Whether ``command_id`` is the mobility command and still running."""
        return (self.mobility is not None and self.mobility.id == command_id
                and not self.mobility.done)
