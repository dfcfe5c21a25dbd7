"""The simulated arm and gripper: joint trajectories over time, commands and their progress."""

from dataclasses import dataclass, field

import numpy as np
from bosdyn.api import robot_state_pb2

from spot_sim.body import mobility
from spot_sim.body.arm import kinematics as ak
from spot_sim.body.mobility import Se2

GRIPPER_SPEED = 3.0  # rad/s
ITEM_ANGLE = -0.35  # rad: where the claw stops when it closes on a held item
STOWED_TOLERANCE = 0.05  # rad
CARRIABLE_AND_STOWABLE = robot_state_pb2.ManipulatorState.CARRY_STATE_CARRIABLE_AND_STOWABLE


@dataclass
class JointTrajectory:
    """Joint positions (N, 6) at absolute robot times (N,) ns, optionally with velocities.

    Sampling interpolates cubically where velocities are given and linearly otherwise, and
    holds the first / last point outside the time span.
    """

    times_ns: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None = None

    @property
    def end_ns(self) -> int:
        return int(self.times_ns[-1])

    def sample(self, now_ns: int) -> np.ndarray:
        times, positions = self.times_ns, self.positions
        if now_ns <= times[0]:
            return positions[0].copy()
        if now_ns >= times[-1]:
            return positions[-1].copy()
        i = int(np.searchsorted(times, now_ns, side="right")) - 1
        span = (times[i + 1] - times[i]) / 1e9
        s = (now_ns - times[i]) / 1e9 / span
        p0, p1 = positions[i], positions[i + 1]
        if self.velocities is None:
            return p0 + (p1 - p0) * s
        v0, v1 = self.velocities[i] * span, self.velocities[i + 1] * span
        s2, s3 = s * s, s * s * s
        return ((2 * s3 - 3 * s2 + 1) * p0 + (s3 - 2 * s2 + s) * v0
                + (-2 * s3 + 3 * s2) * p1 + (s3 - s2) * v1)


def plan(start_q: np.ndarray, start_ns: int, times_ns: np.ndarray, positions: np.ndarray,
         velocities: np.ndarray | None = None,
         max_speed: float = ak.MAX_JOINT_SPEED) -> tuple[JointTrajectory, bool]:
    """A trajectory from the arm's current joints through the given points.

    Segments that would need more than ``max_speed`` are slowed down (and every later point
    shifted); returns the trajectory and whether it had to be modified.
    """
    times = np.concatenate([[start_ns], np.asarray(times_ns, dtype=np.int64)])
    points = np.vstack([start_q[:6], positions])
    vels = None
    if velocities is not None:
        vels = np.vstack([np.zeros(6), velocities])
    if times[1] < start_ns:  # points already in the past start now
        times[1:] += start_ns - times[1]
    modified = False
    for i in range(1, len(times)):
        needed = float(np.max(np.abs(points[i] - points[i - 1]))) / max_speed
        have = (times[i] - times[i - 1]) / 1e9
        if have < needed - 1e-6:
            times[i:] += int((needed - have) * 1e9)
            modified = True
    keep = np.concatenate([[True], np.diff(times) > 0])  # a zero-length first segment
    return JointTrajectory(times[keep], points[keep],
                           None if vels is None else vels[keep]), modified


@dataclass
class ArmTask:
    """One accepted arm command and what is needed to report its progress."""

    command_id: int
    kind: str  # joint_move, cartesian, named, velocity, gaze, stop, surface_contact,
    # impedance, constrained
    trajectory: JointTrajectory | None = None
    goal_hand: np.ndarray | None = None  # body_T_hand the command aims for
    reachable: bool = True
    planner_modified: bool = False
    named: int = 0
    stalled_holding: bool = False
    end_ns: int | None = None  # velocity commands
    hand_twist: np.ndarray | None = None  # (6,) in body: linear, angular
    press_force: np.ndarray | None = None  # surface contact: the surface's reaction (body, N)
    press_from_ns: int = 0  # ... felt from this time on
    world_anchor: Se2 | None = None  # odom_T_body when a goal fixed in the world was given
    world_goal_hand: np.ndarray | None = None  # ... and the goal (body_T_hand) then
    body_still: bool = True  # the body stood still at the last step
    solved_for: Se2 | None = None  # where the body stood when the held goal was last solved
    solved_q: np.ndarray | None = None  # ... and the joints it was solved into
    mode: object | None = None  # an impedance or constrained manipulation command's state
    overridden: bool = False
    done: bool = False


@dataclass
class GripperTask:
    command_id: int
    trajectory: JointTrajectory  # single joint, stored in column 0
    max_torque: float
    overridden: bool = False


@dataclass
class Arm:
    """Joint state of the arm and gripper, and the commands moving them."""

    q: np.ndarray = field(default_factory=lambda: ak.STOW.copy())
    qd: np.ndarray = field(default_factory=lambda: np.zeros(6))
    gripper: float = 0.0
    gripper_velocity: float = 0.0
    holding: bool = False
    carry_state: int = CARRIABLE_AND_STOWABLE  # what the operator said of a held item
    task: ArmTask | None = None
    gripper_task: GripperTask | None = None
    tasks: dict = field(default_factory=dict)
    gripper_tasks: dict = field(default_factory=dict)
    hand_velocity: np.ndarray = field(default_factory=lambda: np.zeros(6))  # in body

    @property
    def joints(self) -> np.ndarray:
        """The seven joint angles in ARM_JOINTS order (f1x last)."""
        return np.concatenate([self.q, [self.gripper]])

    @property
    def velocities(self) -> np.ndarray:
        return np.concatenate([self.qd, [self.gripper_velocity]])

    @property
    def carry_stowable(self) -> bool:
        return self.carry_state == CARRIABLE_AND_STOWABLE

    @property
    def stowed(self) -> bool:
        return bool(np.max(np.abs(self.q - ak.STOW)) < STOWED_TOLERANCE)

    @property
    def open_percentage(self) -> float:
        return float(100.0 * self.gripper / ak.GRIPPER_LIMITS[0])

    def hand(self) -> np.ndarray:
        return ak.hand_pose(self.q)

    def contact_force(self, now_ns: int) -> np.ndarray:
        """The force (body, N) a surface the hand presses on exerts on it: while a surface
        contact command is the arm's command and has reached its first point."""
        task = self.task
        if task is None or task.press_force is None or task.overridden or \
                now_ns < task.press_from_ns:
            return np.zeros(3)
        return task.press_force

    def start(self, task: ArmTask) -> None:
        if self.task is not None and not self.task.done:
            self.task.overridden = True
            self.task.done = True
        self.task = task
        self.tasks[task.command_id] = task

    def start_gripper(self, task: GripperTask) -> None:
        if self.gripper_task is not None:
            self.gripper_task.overridden = True
        self.gripper_task = task
        self.gripper_tasks[task.command_id] = task

    def halt(self) -> None:
        """Motors off or a fault: every arm and gripper command ends where the arm is."""
        if self.task is not None and not self.task.done:
            self.task.overridden = self.task.done = True
        if self.gripper_task is not None:
            self.gripper_task.overridden = True
        self.task = self.gripper_task = None
        self.qd[:] = 0.0

    def gripper_blocked(self) -> bool:
        """The claw is closing on a held item and cannot close further."""
        task = self.gripper_task
        return (self.holding and task is not None and
                float(task.trajectory.positions[-1, 0]) > ITEM_ANGLE and
                abs(self.gripper - ITEM_ANGLE) < 1e-3)

    def step(self, now_ns: int, dt: float, odom_body: Se2 | None = None,
             body_still: bool = True) -> None:
        """Move the arm and gripper by ``dt`` s to ``now_ns``; ``odom_body`` (where the body
        is) lets a goal given in a world frame stay put in the world as the body walks."""
        before_q = self.q.copy()
        task = self.task
        if task is not None and task.world_anchor is not None and odom_body is not None and \
                not task.overridden:
            self._hold_in_world(task, now_ns, dt, odom_body, body_still)
        elif task is not None and not task.done:
            self._run(task, now_ns, dt)
        self._step_gripper(now_ns, dt)
        if dt <= 0:
            return
        self.qd = (self.q - before_q) / dt
        if not self.qd.any():  # an arm at rest: no kinematics to run
            self.hand_velocity = np.zeros(6)
            return
        before, after = ak.hand_pose(before_q), self.hand()
        linear = (after[:3, 3] - before[:3, 3]) / dt
        rotation = ak.pose_error(before, after)[3:] / dt
        self.hand_velocity = np.concatenate([linear, rotation])

    def _run(self, task: ArmTask, now_ns: int, dt: float) -> None:
        if task.trajectory is not None:
            self.q = task.trajectory.sample(now_ns)
            if now_ns >= task.trajectory.end_ns:
                task.done = True
        elif task.end_ns is not None and now_ns > task.end_ns:
            task.done = True
        elif task.kind == "velocity":
            self.follow_twist(task.hand_twist, dt)
        elif task.mode is not None:
            task.mode.step(self, dt)

    def follow_twist(self, twist: np.ndarray, dt: float) -> float:
        """Move the hand by ``twist`` (body: linear, angular) for ``dt`` s as far as joint
        speeds and limits allow; the fraction of the commanded motion achieved."""
        jac, _ = ak.jacobian(self.q)
        rate = np.linalg.lstsq(jac, twist, rcond=1e-3)[0]
        rate = np.clip(rate, -ak.MAX_JOINT_SPEED, ak.MAX_JOINT_SPEED)
        before = self.q
        self.q = np.clip(self.q + rate * dt, ak.JOINT_LIMITS[:, 0], ak.JOINT_LIMITS[:, 1])
        wanted = float(twist @ twist)
        if wanted < 1e-12 or dt <= 0:
            return 1.0
        achieved = jac @ ((self.q - before) / dt)
        return float(achieved @ twist) / wanted

    def _hold_in_world(self, task: ArmTask, now_ns: int, dt: float, odom_body: Se2,
                       body_still: bool) -> None:
        """A goal fixed in the world: the hand follows the planned motion as seen from where
        the body was, then holds the goal, re-aimed as the body moves (joint speeds
        limited)."""
        moved = planar(mobility.compose(mobility.inverse(odom_body), task.world_anchor))
        task.goal_hand = moved @ task.world_goal_hand
        task.body_still = body_still
        done = now_ns >= task.trajectory.end_ns
        if np.allclose(moved, np.eye(4), atol=1e-9) and not done:
            self.q = task.trajectory.sample(now_ns)
        elif done and body_still:  # solved once where the body stopped, then moved to
            if task.solved_for is None or task.solved_for != odom_body:
                task.solved_q, _ = ak.solve_ik(task.goal_hand, self.q)
                task.solved_for = odom_body
            limit = ak.MAX_JOINT_SPEED * dt
            self.q = self.q + np.clip(task.solved_q - self.q, -limit, limit)
        else:
            wanted = task.goal_hand if done else moved @ ak.hand_pose(
                task.trajectory.sample(now_ns))
            self.q = ak.track(wanted, self.q, ak.MAX_JOINT_SPEED * dt)
        task.done = task.done or done

    def _step_gripper(self, now_ns: int, dt: float) -> None:
        task = self.gripper_task
        before = self.gripper
        if task is not None:
            wanted = float(task.trajectory.sample(now_ns)[0])
            limit = GRIPPER_SPEED * dt
            position = before + max(-limit, min(limit, wanted - before))
            if self.holding:
                if position > ITEM_ANGLE:  # closing on the item: the claw stops on it
                    position = min(position, max(before, ITEM_ANGLE))
                elif position < min(before, ITEM_ANGLE - 0.05):  # opening: the item falls out
                    self.holding = False
            self.gripper = position
        self.gripper_velocity = (self.gripper - before) / dt if dt > 0 else 0.0


def named_target(position: str) -> np.ndarray:
    return {"stow": ak.STOW, "ready": ak.READY, "carry": ak.CARRY}[position]


def planar(pose: Se2) -> np.ndarray:
    """A planar pose as a 4x4 matrix."""
    c, s = np.cos(pose.yaw), np.sin(pose.yaw)
    matrix = np.eye(4)
    matrix[:2, :2] = ((c, -s), (s, c))
    matrix[:2, 3] = (pose.x, pose.y)
    return matrix
