"""Action servers over ``follower.RobotTask``: one way to accept, run, cancel and end a goal.

Each action server has a goal policy, shared by the servers that command one part of the
robot (a ``GoalSlot``):

- ``REJECT``: while a goal runs, another is rejected (docking, missions, GraphNav,
  choreography: a second run of these would fight the first for the robot);
- ``PREEMPT``: a new goal replaces the running one, which ends aborted with "preempted by a
  newer goal" (arm, gripper and body trajectories: the newest command is what the user wants,
  as with ros2_control's trajectory controller).
"""

import enum
import threading
from collections.abc import Callable

from rclpy.action import ActionServer, CancelResponse, GoalResponse

from spot_driver.core import qos
from spot_driver.core.errors import describe
from spot_driver.core.follower import Ending, Outcome, RobotTask, follow, result_values

PREEMPT_WAIT_S = 2.0  # how long a new goal waits for the goal it preempts to let go


class GoalPolicy(enum.Enum):
    REJECT = "reject"
    PREEMPT = "preempt"


class GoalSlot:
    """The running goal of one part of the robot, under one policy."""

    def __init__(self, name: str, policy: GoalPolicy) -> None:
        self.name, self.policy = name, policy
        self._cond = threading.Condition()
        self._reserved = 0  # REJECT: goals accepted and not yet ended (0 or 1)
        self._generation = 0  # PREEMPT: the newest goal's number
        self._running = 0

    def accept(self) -> bool:
        """Whether a new goal may be accepted now (REJECT reserves the slot)."""
        with self._cond:
            if self.policy is GoalPolicy.REJECT:
                if self._reserved:
                    return False
                self._reserved = 1
            return True

    def begin(self) -> int:
        """The goal starts executing: under PREEMPT, older goals see ``preempted`` and this
        waits (briefly) until they have let go. Returns the goal's number."""
        with self._cond:
            self._generation += 1
            generation = self._generation
            self._cond.wait_for(lambda: self._running == 0, timeout=PREEMPT_WAIT_S)
            self._running += 1
            return generation

    def preempted(self, generation: int) -> bool:
        return self.policy is GoalPolicy.PREEMPT and generation != self._generation

    def end(self) -> None:
        with self._cond:
            self._running -= 1
            if self.policy is GoalPolicy.REJECT:
                self._reserved = 0
            self._cond.notify_all()


def fill_result(result, ending: Ending):
    """The usual result fields (``success``, ``status``, ``message``) plus ``ending.values``."""
    for name, value in (("success", ending.ok), ("status", ending.status),
                        ("message", ending.message), *ending.values.items()):
        if hasattr(result, name):
            setattr(result, name, value)
    return result


def serve(node, action_type, name: str, task_for: Callable[[object], RobotTask],
          slot: GoalSlot, group,
          result_for: Callable[[object, Ending], object] = fill_result,
          feedback_for: Callable[[dict], object] | None = None) -> ActionServer:
    """An action server that follows ``task_for(goal)`` for each goal under ``slot``'s
    policy. ``task_for`` raising (invalid goal) ends the goal aborted with the reason, and
    nothing is sent to the robot."""
    logger = node.get_logger()
    make_feedback = feedback_for or (lambda values: action_type.Feedback(**values))

    def accept(goal) -> GoalResponse:
        if slot.accept():
            return GoalResponse.ACCEPT
        logger.warning(f"{name} goal rejected: another {slot.name} goal is running")
        return GoalResponse.REJECT

    def execute(goal_handle):
        generation = slot.begin()
        try:
            try:
                task = task_for(goal_handle.request)
            except Exception as exc:
                ending = Ending(Outcome.ABORTED, message=describe(exc),
                                values=result_values(exc))
            else:
                ending = follow(
                    task, lambda: goal_handle.is_cancel_requested,
                    lambda values: goal_handle.publish_feedback(make_feedback(values)),
                    lambda: slot.preempted(generation))
        finally:
            slot.end()
        result = result_for(action_type.Result(), ending)
        if ending.outcome is Outcome.SUCCEEDED:
            goal_handle.succeed()
        elif ending.outcome is Outcome.CANCELED:
            goal_handle.canceled()
        else:
            logger.warning(f"{name}: {ending.message}")
            goal_handle.abort()
        return result

    return ActionServer(node, action_type, name, execute_callback=execute,
                        goal_callback=accept, cancel_callback=lambda goal: CancelResponse.ACCEPT,
                        **qos.ACTION_QUEUES, callback_group=group)
