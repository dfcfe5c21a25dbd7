"""The ``robot_command`` goal as a followed task: any RobotCommand, checked, sent with the
driver's lease, and followed on the robot's own feedback until it ends."""

import math
from collections.abc import Callable

from google.protobuf import text_format

from spot_driver.body import raw_command
from spot_driver.body.commander import Commander
from spot_driver.core.errors import CommandError
from spot_driver.core.follower import Progress, RobotTask

FOLLOW_PAST_DURATION_S = 30.0  # default timeout beyond the goal's duration
DEFAULT_TIMEOUT_S = 60.0  # default timeout of a goal without a duration


class AnyCommandTask(RobotTask):
    """A goal's RobotCommand (serialized or text), refused before anything is sent when it
    does not parse or fails ``raw_command.check`` against the robot's frames; stopped on
    cancel and on timeout."""

    name = "robot_command"
    poll_s = 0.1
    canceled_message = "canceled; robot stopped"

    def __init__(self, commander: Commander, frames: Callable[[], set[str]], goal) -> None:
        self._commander = commander
        self.command = raw_command.parse(bytes(goal.command), goal.command_text)
        raw_command.check(self.command, frames(), goal.duration)
        if not math.isfinite(goal.timeout) or goal.timeout < 0.0:
            raise CommandError(f"timeout {goal.timeout} s must be finite and >= 0")
        self.duration = goal.duration
        self.timeout = goal.timeout or (goal.duration + FOLLOW_PAST_DURATION_S
                                        if goal.duration else DEFAULT_TIMEOUT_S)
        self.command_id = 0

    def start(self) -> None:
        self.command_id = self._commander.any_command(self.command, self.duration)

    def poll(self) -> Progress:
        feedback = self._commander.feedback(self.command_id)
        done, ok, status = raw_command.judge(self.command, feedback)
        serialized = feedback.SerializeToString()
        progress = Progress(status=status, values={"command_id": self.command_id,
                                                   "feedback": serialized})
        progress.feedback = {"status": status, "feedback": serialized,
                             "feedback_text": text_format.MessageToString(feedback,
                                                                          as_one_line=True)}
        if done:
            progress.done, progress.ok = True, ok
            progress.message = f"robot_command {'done' if ok else 'ended'}: {status}"
        return progress

    def stop(self) -> None:
        self._commander.stop()
