"""Following a long-running robot command to its end, without ROS.

A robot command that takes time (a docking run, a navigation route, an arm trajectory, a
mission, a dance) is a ``RobotTask``: ``start()`` sends it, ``poll()`` reads the robot's
feedback, ``renew()`` moves its end time forward when the robot needs that, ``stop()`` stops
the robot. ``follow()`` runs one task to its end (done, canceled, preempted, timed out or
failed) and says how it ended; the action servers (``nodes/actions.py``) only turn that
``Ending`` into a ROS result.
"""

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from spot_driver.core.errors import describe


@dataclass
class Progress:
    """One look at a running task. ``feedback`` holds plain values (field name -> value) for
    the action's feedback message; ``values`` what the result should carry besides
    success/status/message."""

    done: bool = False
    ok: bool = False
    status: str = ""
    message: str = ""
    feedback: dict | None = None
    values: dict = field(default_factory=dict)


class Outcome(enum.Enum):
    SUCCEEDED = "succeeded"
    ABORTED = "aborted"
    CANCELED = "canceled"


@dataclass
class Ending:
    """How a task ended: the outcome, the robot's last status and a sentence for people."""

    outcome: Outcome
    status: str = ""
    message: str = ""
    values: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.SUCCEEDED


class RobotTask:
    """A robot command followed until it ends. Subclasses implement ``start`` and ``poll``;
    ``stop`` stops the robot (cancel, timeout, failure); ``renew`` is called every
    ``renew_s`` seconds when set."""

    name = "command"
    poll_s = 0.1
    renew_s: float | None = None
    timeout: float = 60.0  # s from start() to giving up (the robot is stopped then)
    canceled_message = "canceled: the robot stopped"

    def start(self) -> None:
        raise NotImplementedError

    def poll(self) -> Progress:
        raise NotImplementedError

    def renew(self) -> None:
        """Keep the command alive (navigation and missions run only while renewed)."""

    def stop(self) -> None:
        """Stop what the command started."""


def follow(task: RobotTask, canceled: Callable[[], bool],
           publish: Callable[[dict], None] = lambda feedback: None,
           preempted: Callable[[], bool] = lambda: False,
           clock: Callable[[], float] = time.monotonic,
           sleep: Callable[[float], None] = time.sleep) -> Ending:
    """Start ``task`` and follow it to its end. A refusal at start ends ABORTED with the
    reason and nothing to stop; a cancel stops the robot (CANCELED); a preemption by a newer
    goal leaves the robot to the newer command (ABORTED); a timeout or an error while
    following stops the robot (ABORTED)."""
    try:
        task.start()
    except Exception as exc:
        return Ending(Outcome.ABORTED, message=describe(exc), values=result_values(exc))
    started = renewed = clock()
    last = Progress()
    try:
        while True:
            if preempted():
                return Ending(Outcome.ABORTED, last.status, "preempted by a newer goal",
                              last.values)
            if canceled():
                _stop_quietly(task)
                return Ending(Outcome.CANCELED, last.status, task.canceled_message,
                              last.values)
            progress = task.poll()
            if progress.feedback is not None:
                publish(progress.feedback)
            last = progress
            if progress.done:
                outcome = Outcome.SUCCEEDED if progress.ok else Outcome.ABORTED
                message = progress.message or (
                    f"{task.name} done" if progress.ok else f"{task.name} ended: "
                                                            f"{progress.status}")
                return Ending(outcome, progress.status, message, progress.values)
            now = clock()
            if now - started > task.timeout:
                _stop_quietly(task)
                return Ending(Outcome.ABORTED, progress.status,
                              f"timed out after {task.timeout:.3g} s (last status "
                              f"{progress.status or 'none'})", progress.values)
            if task.renew_s is not None and now - renewed >= task.renew_s:
                task.renew()
                renewed = now
            sleep(task.poll_s)
    except Exception as exc:
        _stop_quietly(task)
        return Ending(Outcome.ABORTED, last.status, describe(exc),
                      {**last.values, **result_values(exc)})


def result_values(exc: Exception) -> dict:
    """What an error adds to the goal's result (e.g. a mission's failed nodes, a trajectory
    error code): its ``result_values``, if it has any."""
    return dict(getattr(exc, "result_values", {}))


def _stop_quietly(task: RobotTask) -> None:
    try:
        task.stop()
    except Exception:  # the ending already says what happened; a failed stop must not hide it
        pass
