"""Manipulation API tasks of the simulated robot: walk to, and pick, an object seen in an image.

A task walks the body within reach of its target (a point in odom found by casting the
pixel's ray into the scene), moves the hand to it with the gripper open, then closes the
gripper on the item. ``ManipulationTasks`` owns the commands: the physics loop steps them (a
step hook) and the feedback RPC reports their state. Whatever halts the arm (motor power cut,
a fall, an arm command, joint mode) ends every task that was running.
"""

import math
from dataclasses import dataclass, field

import numpy as np
from bosdyn.api import manipulation_api_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from transforms3d.euler import euler2mat

from spot_sim.body import mobility
from spot_sim.body.arm import kinematics as ak
from spot_sim.body.arm.model import (
    CARRIABLE_AND_STOWABLE,
    ArmTask,
    GripperTask,
    JointTrajectory,
    plan,
)
from spot_sim.body.mobility import Se2
from spot_sim.body.reading import ArmReading
from spot_sim.body.robot import SimRobot
from spot_sim.core.lock_order import DOMAIN, OrderedLock

State = manipulation_api_pb2.ManipulationFeedbackState
TERMINAL = {State.MANIP_STATE_DONE, State.MANIP_STATE_GRASP_SUCCEEDED,
            State.MANIP_STATE_GRASP_FAILED, State.MANIP_STATE_GRASP_PLANNING_NO_SOLUTION,
            State.MANIP_STATE_GRASP_FAILED_TO_RAYCAST_INTO_MAP}
PICK_STANDOFF = 0.8  # m from the body origin to the object when grasping
WALK_OFFSET = 1.0  # m, default distance walk-to-object stops short of the object
REACH_SECONDS = 2.0
GRASP_HEIGHT = 0.04  # m above the surface hit by the ray
WALK_TIMEOUT_NS = 30 * 1_000_000_000
# Hand orientations tried for a grasp, best first: from above, tilted, then level.
_GRASP_PITCHES = (math.pi / 2, math.pi / 3, math.pi / 4, 0.0)


@dataclass
class Manipulation:
    """One manipulation command and its progress."""

    id: int
    pick: bool  # False: walk to the object only
    target: np.ndarray | None  # object position in odom; None: the ray hit nothing
    standoff: float
    arm_halts: int  # the robot's count of arm halts when it started: another one ends it
    state: int = State.MANIP_STATE_WALKING_TO_OBJECT
    walk_command: int | None = None  # the id of the robot command walking to the object
    walk_goal: Se2 | None = None
    arm_command: int | None = None  # the id of the arm command reaching for the object
    gripper_command: int | None = None  # the id of the gripper command closing on it
    history: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.target is None:
            self.state = State.MANIP_STATE_GRASP_FAILED_TO_RAYCAST_INTO_MAP
        self.history.append(self.state)

    @property
    def finished(self) -> bool:
        return self.state in TERMINAL

    def _set(self, state: int) -> None:
        if state != self.state:
            self.state = state
            self.history.append(state)

    def abort(self) -> None:
        if not self.finished:
            self._set(State.MANIP_STATE_GRASP_FAILED)

    def step(self, robot: SimRobot, now_ns: int) -> None:
        """Advance the task (``ManipulationTasks`` holds its lock)."""
        if self.finished:
            return
        if self.state == State.MANIP_STATE_WALKING_TO_OBJECT:
            self._walk(robot, now_ns)
        else:
            self._grasp(robot, now_ns)

    def _grasp(self, robot: SimRobot, now_ns: int) -> None:
        if self.state == State.MANIP_STATE_MOVING_TO_GRASP:
            mine, done = robot.arm_progress(self.arm_command)
            if not mine:  # another arm command took over
                self._set(State.MANIP_STATE_GRASP_FAILED)
            elif done:
                gripper = GripperTask(robot.next_id(), JointTrajectory(
                    np.array([now_ns + 500_000_000]), np.array([[0.0]])), 5.5)
                self.gripper_command = gripper.command_id
                robot.start_arm(gripper=gripper, holding=True,
                                carry_state=CARRIABLE_AND_STOWABLE)
                self._set(State.MANIP_STATE_GRASPING_OBJECT)
        elif self.state == State.MANIP_STATE_GRASPING_OBJECT:
            mine, closed_on_item = robot.gripper_progress(self.gripper_command)
            if not mine:
                self._set(State.MANIP_STATE_GRASP_FAILED)
            elif closed_on_item:
                self._set(State.MANIP_STATE_GRASP_SUCCEEDED)

    def _walk(self, robot: SimRobot, now_ns: int) -> None:
        body = robot.odom_body()
        dx, dy = self.target[0] - body.x, self.target[1] - body.y
        distance = math.hypot(dx, dy)
        if self.walk_command is None:
            if distance <= self.standoff + 0.1:
                self._arrived(robot, now_ns)
                return
            heading = math.atan2(dy, dx)
            goal = Se2(self.target[0] - self.standoff * math.cos(heading),
                       self.target[1] - self.standoff * math.sin(heading), heading)
            self.walk_goal = goal
            self.walk_command = robot.new_command("trajectory", goal=goal,
                                                  end_ns=now_ns + WALK_TIMEOUT_NS)
            return
        if not robot.command_active(self.walk_command):
            if not mobility.goal_reached(body, self.walk_goal):
                self._set(State.MANIP_STATE_GRASP_FAILED)
                return
        if mobility.goal_reached(body, self.walk_goal) and robot.velocity() == Se2():
            self._arrived(robot, now_ns)

    def _arrived(self, robot: SimRobot, now_ns: int) -> None:
        if not self.pick:
            self._set(State.MANIP_STATE_DONE)
            return
        self._reach(robot, robot.arm_reading(), robot.transforms_snapshot(), now_ns)

    def _reach(self, robot: SimRobot, arm: ArmReading, snapshot, now_ns: int) -> None:
        body_t_odom = get_a_tform_b(snapshot, "body", "odom").to_matrix()
        target = body_t_odom @ np.append(self.target + np.array([0.0, 0.0, GRASP_HEIGHT]), 1.0)
        yaw = math.atan2(target[1], target[0])  # the hand faces away from the body
        for pitch in _GRASP_PITCHES:
            goal = np.eye(4)
            goal[:3, :3] = euler2mat(0.0, pitch, yaw, "sxyz")
            goal[:3, 3] = target[:3]
            q, ok = ak.solve_ik(goal, arm.q)
            if ok:
                break
        else:
            self._set(State.MANIP_STATE_GRASP_PLANNING_NO_SOLUTION)
            return
        trajectory, _ = plan(arm.q, now_ns, [now_ns + int(REACH_SECONDS * 1e9)], q[None])
        task = ArmTask(robot.next_id(), "cartesian", trajectory=trajectory, goal_hand=goal)
        self.arm_command = task.command_id
        robot.start_arm(task, GripperTask(robot.next_id(), JointTrajectory(
            np.array([now_ns + 300_000_000]), np.array([[ak.GRIPPER_LIMITS[0]]])), 5.5),
            holding=False)
        self._set(State.MANIP_STATE_MOVING_TO_GRASP)


class ManipulationTasks:
    """The robot's Manipulation API commands, behind their own lock (taken before the
    robot's): stepped by the physics loop as a step hook, they move the body and the arm
    through the robot's verbs and its door, as any client does."""

    def __init__(self, robot: SimRobot) -> None:
        self._robot = robot
        self._lock = OrderedLock("manipulation tasks", DOMAIN)
        self._tasks: dict[int, Manipulation] = {}
        robot.add_step_hook(self.step)

    def start(self, pick: bool, target: np.ndarray | None, standoff: float) -> int:
        """A walk to an object, or a pick of it; any running one is aborted. ValueError if the
        robot cannot (no arm to pick with, motor power off)."""
        robot = self._robot
        with self._lock:
            if pick and not robot.config.has_arm:
                raise ValueError("this robot has no arm")
            if not robot.powered:
                raise ValueError("motor power is off")
            for task in self._tasks.values():
                task.abort()
            task = Manipulation(robot.next_id(), pick, target, standoff, robot.arm_halts())
            self._tasks[task.id] = task
            return task.id

    def state(self, task_id: int) -> int | None:
        """A command's ManipulationFeedbackState, or None for an unknown id."""
        with self._lock:
            self._end_halted()
            task = self._tasks.get(task_id)
            return None if task is None else task.state

    def step(self, robot: SimRobot, now_ns: int) -> None:
        """Advance every running command (a step hook)."""
        with self._lock:
            self._end_halted()
            if robot.config.has_arm:
                for task in list(self._tasks.values()):
                    task.step(robot, now_ns)

    def _end_halted(self) -> None:
        halts = self._robot.arm_halts()
        for task in self._tasks.values():
            if task.arm_halts != halts:
                task.abort()
