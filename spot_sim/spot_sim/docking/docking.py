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
from spot_sim.body.mobility import Se2
from spot_sim.body.robot import SimRobot
from spot_sim.core.lock_order import DOMAIN, OrderedLock
from spot_sim.docking import world

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
    """The robot's docking: the docked state and the docking commands. It owns them behind its
    own lock, is stepped by the robot's physics loop (a step hook, outside the robot's lock)
    and moves the body only through the robot's verbs, as any client does."""

    def __init__(self, robot: SimRobot, dock_world: world.DockWorld, docked_id: int = 0) -> None:
        self._robot, self._world = robot, dock_world
        self._lock = OrderedLock("docking", DOMAIN)
        self._docked_id = docked_id
        self._status = (DockState.DOCK_STATUS_DOCKED if docked_id
                        else DockState.DOCK_STATUS_UNDOCKED)
        self._tasks: dict[int, DockingTask] = {}
        self._active: DockingTask | None = None
        if docked_id:
            robot.place(dock_world.docks[docked_id].pose)
        robot.set_shore_power(bool(docked_id))
        robot.add_step_hook(self.step)

    # ------------------------------------------------------------------ commands
    def command(self, dock_id: int, behavior: int, end_ns: int) -> int:
        """Accept a docking command, its id, or raise DockingRejectedError (nothing changes
        then)."""
        if behavior == docking_pb2.PREP_POSE_UNKNOWN:
            behavior = docking_pb2.PREP_POSE_USE_POSE
        if behavior not in _PLANS:
            raise DockingRejectedError(Response.STATUS_ERROR_SYSTEM,
                                       f"unknown prep pose behavior {behavior}")
        with self._lock:
            dock = self._target(dock_id, behavior)
            self._check_ready()
            if self._active is not None and not self._active.done:
                self._end(self._active, Feedback.STATUS_OLD_DOCKING_COMMAND)
            task = DockingTask(self._robot.next_id(), dock, behavior, end_ns, _PLANS[behavior])
            self._tasks[task.id] = task
            if self._docked_id == dock.dock_id and not task.undocking and task.steps[-1] == "sit":
                task.status = Feedback.STATUS_DOCKED  # already there
                return task.id
            self._active = task
            self._status = (DockState.DOCK_STATUS_UNDOCKING if task.undocking
                            else DockState.DOCK_STATUS_DOCKING)
            return task.id

    def _check_ready(self) -> None:
        """Raise DockingRejectedError unless the robot can dock now: power on, no behaviour
        fault, nothing in the gripper."""
        refusal = self._robot.motion_refusal()
        if refusal is not None:
            raise DockingRejectedError(Response.STATUS_ERROR_NOT_AVAILABLE, refusal)
        if self._robot.gripper_holding():
            raise DockingRejectedError(Response.STATUS_ERROR_GRIPPER_HOLDING_ITEM,
                                       "the gripper is holding an item")

    def _target(self, dock_id: int, behavior: int) -> world.Dock:
        """The dock a command of ``behavior`` acts on: the one docked at to undock, else
        ``dock_id``, which must exist, be in view (or docked at) and not be another dock."""
        docks = self._world.docks
        if behavior == docking_pb2.PREP_POSE_UNDOCK:
            if not self._docked_id:
                raise DockingRejectedError(Response.STATUS_ERROR_NOT_DOCKED,
                                           "the robot is not docked")
            return docks[self._docked_id]
        dock = docks.get(dock_id)
        if dock is None or world.dock_type(dock_id) == docking_pb2.DOCK_TYPE_UNKNOWN:
            raise DockingRejectedError(Response.STATUS_ERROR_DOCK_NOT_FOUND,
                                       f"no dock with id {dock_id}")
        if not world.in_view(self._robot.odom_body(), dock) and self._docked_id != dock_id:
            raise DockingRejectedError(Response.STATUS_ERROR_DOCK_NOT_FOUND,
                                       f"dock {dock_id} is not in view")
        if self._docked_id and self._docked_id != dock_id:
            raise DockingRejectedError(Response.STATUS_ERROR_NOT_AVAILABLE,
                                       f"the robot is docked at {self._docked_id}")
        return dock

    def feedback(self, task_id: int, end_ns: int | None = None) -> int:
        """A docking command's status, after moving its end time to ``end_ns`` if given."""
        with self._lock:
            task = self._tasks.get(task_id)
            if task is None:
                return Feedback.STATUS_UNKNOWN
            if end_ns is not None and not task.done:
                task.end_ns = end_ns
            return task.status

    def active(self, task_id: int) -> bool:
        with self._lock:
            task = self._tasks.get(task_id)
            return task is not None and not task.done

    def accepted(self) -> int:
        """How many docking commands it has accepted."""
        with self._lock:
            return len(self._tasks)

    def cancel(self, reason: str) -> None:
        """End the active command (a reboot): STATUS_ERROR_SYSTEM."""
        with self._lock:
            if self._active is not None:
                self._end(self._active, Feedback.STATUS_ERROR_SYSTEM, reason)

    def _end(self, task: DockingTask, status: int, error: str = "") -> None:
        task.status, task.error = status, error
        if self._active is task:
            self._active = None
        if status == Feedback.STATUS_DOCKED:
            self._docked_id = task.dock.dock_id
        if status != Feedback.STATUS_OLD_DOCKING_COMMAND:  # else the newer command owns it
            self._status = (DockState.DOCK_STATUS_DOCKED if self._docked_id
                            else DockState.DOCK_STATUS_UNDOCKED)
        self._robot.set_shore_power(self._status == DockState.DOCK_STATUS_DOCKED)

    # ------------------------------------------------------------------ physics
    def step(self, robot: SimRobot, now_ns: int) -> None:
        """Advance the active plan and notice a docked robot walking away (a step hook)."""
        with self._lock:
            task = self._active
            if task is not None:
                self._step_task(task, now_ns)
            if self._docked_id and self._active is None:
                dock = self._world.docks[self._docked_id]
                body = robot.odom_body()
                if math.hypot(body.x - dock.pose.x, body.y - dock.pose.y) > LEAVE_DISTANCE:
                    self._docked_id, self._status = 0, DockState.DOCK_STATUS_UNDOCKED
                    robot.set_shore_power(False)

    def _step_task(self, task: DockingTask, now_ns: int) -> None:
        robot = self._robot
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
                self._docked_id, self._status = 0, DockState.DOCK_STATUS_UNDOCKING
                robot.set_shore_power(False)
            task.motion = _start(robot, task, name)
        if not _finished(robot, task, name):
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

    # ------------------------------------------------------------------ reports
    def state(self) -> docking_pb2.DockState:
        with self._lock:
            dock_id = self._docked_id or (self._active.dock.dock_id if self._active else 0)
            state = docking_pb2.DockState(status=self._status, dock_id=dock_id)
            if dock_id:
                state.dock_type = world.dock_type(dock_id)
            state.power_status = (DockState.LINK_STATUS_CONNECTED
                                  if self._status == DockState.DOCK_STATUS_DOCKED
                                  else DockState.LINK_STATUS_UNKNOWN)
            return state


def _goal(task: DockingTask, step: str) -> Se2:
    """Where the trajectory of ``step`` ("prep" or "dock") takes the body, in odom."""
    return task.dock.prep_pose if step == "prep" else task.dock.pose


def _start(robot: SimRobot, task: DockingTask, name: str) -> int:
    """The robot command that carries out plan step ``name``: its id."""
    if name == "stand":
        return robot.new_command("stand")
    if name == "sit":
        return robot.new_command("sit")
    return robot.new_command("trajectory", goal=_goal(task, name), end_ns=task.end_ns)


def _finished(robot: SimRobot, task: DockingTask, name: str) -> bool:
    if name == "stand":
        return robot.standing
    if name == "sit":
        return robot.seated()
    return (mobility.goal_reached(robot.odom_body(), _goal(task, name))
            and robot.velocity() == Se2())
