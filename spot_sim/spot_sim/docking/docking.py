"""Docking and undocking: the robot side of the DockingService.

A docking command runs as a short plan of ordinary mobility commands, stepped by the physics
loop: stand, walk to the dock's prep pose, back onto the dock and sit. Undocking stands and
walks back to the prep pose. Each step's command is the robot's current mobility command, so a
newer command from anyone (or motors going off) interrupts the plan.

Choices where the API leaves room: docking with motors off, an active behavior fault or while
docked at another dock answers STATUS_ERROR_NOT_AVAILABLE; a dock must be in view
(``world.in_view``) to be found; an interrupted plan ends STATUS_ERROR_SYSTEM; a robot that
ends more than ``ALIGN_TOLERANCE`` off the dock ends STATUS_MISALIGNED.
"""

import math
from dataclasses import dataclass

from bosdyn.api.docking import docking_pb2

from spot_sim.body import mobility
from spot_sim.body.legs import Legs
from spot_sim.body.mobility import Se2
from spot_sim.docking import world
from spot_sim.manipulation.arm import Arm

Response = docking_pb2.DockingCommandResponse
Feedback = docking_pb2.DockingCommandFeedbackResponse
DockState = docking_pb2.DockState
ALIGN_TOLERANCE = 0.05  # m, body position error on the dock that still counts as docked
LEAVE_DISTANCE = 0.15  # m from the dock pose after which a docked robot counts as undocked

_PLANS = {
    docking_pb2.PREP_POSE_USE_POSE: ("stand", "prep", "approach", "sit"),
    docking_pb2.PREP_POSE_SKIP_POSE: ("stand", "approach", "sit"),
    docking_pb2.PREP_POSE_ONLY_POSE: ("stand", "prep"),
    docking_pb2.PREP_POSE_UNDOCK: ("stand", "prep"),
}


class DockingRejectedError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _check_ready(robot) -> None:
    """Raise DockingRejectedError unless the robot can dock now: power on, no behaviour
    fault, nothing in the gripper."""
    refusal = robot.motion_refusal()
    if refusal is not None:
        raise DockingRejectedError(Response.STATUS_ERROR_NOT_AVAILABLE, refusal)
    with robot.parts(Arm) as (arm,):
        holding = arm is not None and arm.holding
    if holding:
        raise DockingRejectedError(Response.STATUS_ERROR_GRIPPER_HOLDING_ITEM,
                                   "the gripper is holding an item")


@dataclass
class DockingTask:
    """One accepted docking command and how far its plan has got."""

    id: int
    dock: world.Dock
    behavior: int
    end_ns: int
    steps: tuple[str, ...]
    step: int = 0
    motion: int | None = None  # the id of the robot command driving the current step
    status: int = Feedback.STATUS_IN_PROGRESS
    error: str = ""

    @property
    def done(self) -> bool:
        return self.status != Feedback.STATUS_IN_PROGRESS

    @property
    def undocking(self) -> bool:
        return self.behavior == docking_pb2.PREP_POSE_UNDOCK


class Docking:
    """Docks in the world, the docked state and the docking commands. Call under the robot's
    lock; ``step`` runs in the physics loop."""

    def __init__(self, docks: tuple[world.Dock, ...], docked_id: int = 0) -> None:
        self.docks = {dock.dock_id: dock for dock in docks}
        self.docked_id = docked_id
        self.status = DockState.DOCK_STATUS_DOCKED if docked_id else DockState.DOCK_STATUS_UNDOCKED
        self.tasks: dict[int, DockingTask] = {}
        self.active: DockingTask | None = None

    # ------------------------------------------------------------------ commands
    def command(self, robot, task_id: int, dock_id: int, behavior: int, end_ns: int) -> DockingTask:
        """Accept a docking command or raise DockingRejectedError (nothing changes then)."""
        if behavior == docking_pb2.PREP_POSE_UNKNOWN:
            behavior = docking_pb2.PREP_POSE_USE_POSE
        if behavior not in _PLANS:
            raise DockingRejectedError(Response.STATUS_ERROR_SYSTEM,
                                       f"unknown prep pose behavior {behavior}")
        dock = self._target(robot, dock_id, behavior)
        _check_ready(robot)
        if self.active is not None and not self.active.done:
            self._end(self.active, Feedback.STATUS_OLD_DOCKING_COMMAND)
        task = DockingTask(task_id, dock, behavior, end_ns, _PLANS[behavior])
        self.tasks[task.id] = task
        if self.docked_id == dock.dock_id and not task.undocking and task.steps[-1] == "sit":
            task.status = Feedback.STATUS_DOCKED  # already there
            return task
        self.active = task
        self.status = (DockState.DOCK_STATUS_UNDOCKING if task.undocking
                       else DockState.DOCK_STATUS_DOCKING)
        return task

    def _target(self, robot, dock_id: int, behavior: int) -> world.Dock:
        """The dock a command of ``behavior`` acts on: the one docked at to undock, else
        ``dock_id``, which must exist, be in view (or docked at) and not be another dock."""
        if behavior == docking_pb2.PREP_POSE_UNDOCK:
            if not self.docked_id:
                raise DockingRejectedError(Response.STATUS_ERROR_NOT_DOCKED,
                                           "the robot is not docked")
            return self.docks[self.docked_id]
        dock = self.docks.get(dock_id)
        if dock is None or world.dock_type(dock_id) == docking_pb2.DOCK_TYPE_UNKNOWN:
            raise DockingRejectedError(Response.STATUS_ERROR_DOCK_NOT_FOUND,
                                       f"no dock with id {dock_id}")
        if not world.in_view(robot.odom_body(), dock) and self.docked_id != dock_id:
            raise DockingRejectedError(Response.STATUS_ERROR_DOCK_NOT_FOUND,
                                       f"dock {dock_id} is not in view")
        if self.docked_id and self.docked_id != dock_id:
            raise DockingRejectedError(Response.STATUS_ERROR_NOT_AVAILABLE,
                                       f"the robot is docked at {self.docked_id}")
        return dock

    def update_end_time(self, task_id: int, end_ns: int) -> None:
        task = self.tasks.get(task_id)
        if task is not None and not task.done:
            task.end_ns = end_ns

    def _end(self, task: DockingTask, status: int, error: str = "") -> None:
        task.status, task.error = status, error
        if self.active is task:
            self.active = None
        if status == Feedback.STATUS_DOCKED:
            self.docked_id = task.dock.dock_id
        if status != Feedback.STATUS_OLD_DOCKING_COMMAND:  # else the newer command owns it
            self.status = (DockState.DOCK_STATUS_DOCKED if self.docked_id
                           else DockState.DOCK_STATUS_UNDOCKED)

    def cancel(self, reason: str) -> None:
        """End the active command (a reboot): STATUS_ERROR_SYSTEM."""
        if self.active is not None:
            self._end(self.active, Feedback.STATUS_ERROR_SYSTEM, reason)

    # ------------------------------------------------------------------ physics
    def step(self, robot, now_ns: int) -> None:
        """Advance the active plan and notice a docked robot walking away."""
        task = self.active
        if task is not None:
            self._step_task(robot, task, now_ns)
        if self.docked_id and self.active is None:
            dock = self.docks[self.docked_id]
            body = robot.odom_body()
            if math.hypot(body.x - dock.pose.x, body.y - dock.pose.y) > LEAVE_DISTANCE:
                self.docked_id, self.status = 0, DockState.DOCK_STATUS_UNDOCKED

    def _step_task(self, robot, task: DockingTask, now_ns: int) -> None:
        if now_ns > task.end_ns:
            robot.new_command("stop")
            self._end(task, Feedback.STATUS_ERROR_COMMAND_TIMED_OUT, "end time reached")
            return
        if task.motion is not None and not robot.in_charge(task.motion):
            reason = "motor power lost" if not robot.powered else "overridden by another command"
            self._end(task, Feedback.STATUS_ERROR_SYSTEM, reason)
            return
        name = task.steps[task.step]
        if task.motion is None:
            if task.undocking and task.step == 0:
                self.docked_id, self.status = 0, DockState.DOCK_STATUS_UNDOCKING
            task.motion = self._start(robot, task, name)
        if not self._finished(robot, task, name, now_ns):
            return
        task.step += 1
        task.motion = None
        if task.step < len(task.steps):
            return
        if task.steps[-1] == "prep":
            self._end(task, Feedback.STATUS_AT_PREP_POSE)
            return
        error, _ = mobility.distance_to(robot.odom_body(), task.dock.pose)
        if error > ALIGN_TOLERANCE:
            self._end(task, Feedback.STATUS_MISALIGNED, f"{error:.3f} m off the dock")
        else:
            self._end(task, Feedback.STATUS_DOCKED)

    @staticmethod
    def _start(robot, task: DockingTask, name: str):
        if name == "stand":
            return robot.new_command("stand")
        if name == "sit":
            return robot.new_command("sit")
        return robot.new_command("trajectory", goal=_goal(task, name), end_ns=task.end_ns)

    @staticmethod
    def _finished(robot, task: DockingTask, name: str, now_ns: int) -> bool:
        if name == "stand":
            return robot.standing
        if name == "sit":
            with robot.parts(Legs) as (legs,):
                return not legs.posture.standing and not legs.posture.moving(now_ns)
        return (mobility.goal_reached(robot.odom_body(), _goal(task, name))
                and robot.velocity() == Se2())

    # ------------------------------------------------------------------ reports
    def feedback(self, task_id: int) -> int:
        task = self.tasks.get(task_id)
        return Feedback.STATUS_UNKNOWN if task is None else task.status

    def state(self) -> docking_pb2.DockState:
        dock_id = self.docked_id or (self.active.dock.dock_id if self.active else 0)
        state = docking_pb2.DockState(status=self.status, dock_id=dock_id)
        if dock_id:
            state.dock_type = world.dock_type(dock_id)
        state.power_status = (DockState.LINK_STATUS_CONNECTED
                              if self.status == DockState.DOCK_STATUS_DOCKED
                              else DockState.LINK_STATUS_UNKNOWN)
        return state

    @property
    def charging(self) -> bool:
        return self.status == DockState.DOCK_STATUS_DOCKED


# The docking verbs: the robot's Docking part, through its door.
def _goal(task: DockingTask, step: str):
    """Where the trajectory of ``step`` ("prep" or "dock") takes the body, in odom."""
    return task.dock.prep_pose if step == "prep" else task.dock.pose


def dock(robot, dock_id: int, behavior: int, end_ns: int) -> DockingTask:
    """A docking command (``DockingRejectedError`` if refused; nothing changes then)."""
    with robot.parts(Docking) as (docking,):
        return docking.command(robot, robot.next_id(), dock_id, behavior, end_ns)


def feedback(robot, task_id: int, end_ns: int | None = None) -> int:
    """A docking command's status, after moving its end time to ``end_ns`` if given."""
    with robot.parts(Docking) as (docking,):
        if end_ns is not None:
            docking.update_end_time(task_id, end_ns)
        return docking.feedback(task_id)


def active(robot, task_id: int) -> bool:
    with robot.parts(Docking) as (docking,):
        task = docking.tasks.get(task_id)
        return task is not None and not task.done


def state(robot) -> docking_pb2.DockState:
    with robot.parts(Docking) as (docking,):
        return docking.state()
