"""The arm and gripper tracks of a dance: each arm move, when it starts, becomes a joint
trajectory for the simulated arm (through the same planner as arm commands, so its speed
limits hold), and each gripper move a gripper trajectory.

Hand paths (workspace moves, figure 8, chicken head) are sampled eight times a beat and solved
with the arm's inverse kinematics; a point the arm cannot reach keeps the best solution found,
as the robot does its best. The nod and shoulder swing amplitudes are the simulator's own.
"""

import math

import numpy as np
from bosdyn.api.spot import choreography_params_pb2
from transforms3d.euler import euler2mat

from spot_sim.body.arm import kinematics as ak
from spot_sim.body.arm.model import ArmTask, GripperTask, JointTrajectory, plan
from spot_sim.body.reading import ArmReading
from spot_sim.choreography.placed import SLICES_PER_BEAT, Placed

Frame = choreography_params_pb2.WorkspaceArmMoveParams
_NOD = np.array([0.0, 0.0, 0.0, 0.0, -0.6, 0.0])  # wr0 up, then back
_SHOULDER = 0.8  # rad of sh0 for shoulder_left / shoulder_right
_SAMPLES_PER_BEAT = 8
_ARM_JOINTS = ("shoulder_0", "shoulder_1", "elbow_0", "elbow_1", "wrist_0", "wrist_1")


def _clip(q: np.ndarray) -> np.ndarray:
    return np.clip(q, ak.JOINT_LIMITS[:, 0], ak.JOINT_LIMITS[:, 1])


def _hand_path(arm: ArmReading, placed: Placed, seconds: float, offset) -> tuple[np.ndarray, ...]:
    """Times (s from the start) and joints following ``offset(t) -> hand translation`` added
    to the hand's pose at the move's start."""
    start = arm.hand()
    beats = (placed.end - placed.start) / SLICES_PER_BEAT
    count = max(2, math.ceil(beats * _SAMPLES_PER_BEAT))
    times = np.linspace(seconds / count, seconds, count)
    joints, seed = [], arm.q
    for t in times:
        target = start.copy()
        target[:3, 3] += offset(t)
        seed, _ = ak.solve_ik(target, seed)
        joints.append(seed)
    return times, np.array(joints)


def _workspace_target(arm: ArmReading, placed: Placed, body_height: float) -> np.ndarray:
    v = placed.value
    params = placed.move.workspace_arm_move_params
    rotation = euler2mat(v("rotation.yaw"), v("rotation.pitch"), v("rotation.roll"), "rzyx")
    translation = np.array([v("translation.x"), v("translation.y"), v("translation.z")])
    hand = arm.hand()
    if params.frame == Frame.ARM_MOVE_FRAME_HAND:
        step = np.eye(4)
        step[:3, :3], step[:3, 3] = rotation, translation
        return hand @ step
    origin = np.zeros(3)
    if params.frame == Frame.ARM_MOVE_FRAME_CENTER_OF_FOOTPRINT:
        origin[2] = -body_height
    target = np.eye(4)
    if placed.flag("absolute", False):
        target[:3, :3], target[:3, 3] = rotation, origin + translation
    else:
        target[:3, :3], target[:3, 3] = rotation @ hand[:3, :3], hand[:3, 3] + translation
    return target


_JOINT_TARGET_MOVES = ("stow", "unstow", "shoulder_left", "shoulder_right", "arm_move",
                       "arm_move_no_gripper", "arm_move_relative", "workspace_arm_move")


def _joint_target(placed: Placed, arm: ArmReading, body_height: float) -> np.ndarray:
    """The arm joints a move that goes to one pose (one of _JOINT_TARGET_MOVES) ends at."""
    name, v, q = placed.spec.name, placed.value, arm.q
    if name in ("stow", "unstow"):
        return ak.STOW if name == "stow" else ak.READY
    if name.startswith("shoulder_"):
        return q + np.array([_SHOULDER if name == "shoulder_left" else -_SHOULDER,
                             0, 0, 0, 0, 0])
    if name == "arm_move_relative":
        return q + np.array([v(joint) for joint in _ARM_JOINTS])
    if name == "workspace_arm_move":
        return ak.solve_ik(_workspace_target(arm, placed, body_height), q)[0]
    return np.array([v(joint) for joint in _ARM_JOINTS])


def arm_trajectory(placed: Placed, arm: ArmReading, start_ns: int, body_height: float
                   ) -> JointTrajectory | None:
    """The arm's joint trajectory for an arm-track move starting now (None: no arm motion)."""
    name, v = placed.spec.name, placed.value
    seconds = placed.seconds
    end_ns = start_ns + int(seconds * 1e9)
    q = arm.q.copy()
    if name == "nod":
        mid = start_ns + int(seconds * 5e8)
        return plan(q, start_ns, np.array([mid, end_ns]), np.array([_clip(q + _NOD), q]))[0]
    if name in _JOINT_TARGET_MOVES:
        target = _joint_target(placed, arm, body_height)
        return plan(q, start_ns, np.array([end_ns]), _clip(target)[None])[0]
    if name in ("figure8_move", "chicken_head"):
        beat_seconds = 60.0 / placed.slices_per_minute * SLICES_PER_BEAT
        cycle = v("beats_per_cycle") * beat_seconds
        if name == "figure8_move":
            def offset(t):
                angle = 2.0 * math.pi * t / cycle
                return np.array([0.0, v("width") / 2 * math.sin(angle),
                                 v("height") / 2 * math.sin(2 * angle)])
        else:
            def offset(t):
                bob = math.sin(2.0 * math.pi * t / cycle)
                return bob * np.array([v("bob_magnitude.x"), v("bob_magnitude.y"),
                                       v("bob_magnitude.z")])
        times, joints = _hand_path(arm, placed, seconds, offset)
        return plan(q, start_ns, start_ns + (times * 1e9).astype(np.int64), joints)[0]
    return None


def gripper_target(placed: Placed, arm: ArmReading) -> tuple[float, float] | None:
    """(angle, speed rad/s) a gripper-track move drives the claw to (None: no claw motion)."""
    name, v = placed.spec.name, placed.value
    low, high = ak.GRIPPER_LIMITS
    if name == "gripper":
        return min(max(v("angle"), low), high), v("speed")
    if name == "arm_move" and placed.is_set("gripper"):
        return min(max(v("gripper"), low), high), 0.0
    if name == "arm_move_relative" and placed.is_set("gripper"):
        return min(max(arm.gripper + v("gripper"), low), high), 0.0
    return None


def arm_move(placed: Placed, arm: ArmReading, command_id: int, start_ns: int,
             body_height: float) -> tuple[ArmTask | None, GripperTask | None]:
    """The arm and gripper tasks of an arm move starting now (the dance's command owns them;
    None for a track it leaves alone)."""
    trajectory = arm_trajectory(placed, arm, start_ns, body_height)
    task = None if trajectory is None else ArmTask(command_id, "choreography",
                                                   trajectory=trajectory)
    target = gripper_target(placed, arm)
    gripper = None
    if target is not None:
        angle, speed = target
        seconds = abs(angle - arm.gripper) / speed if speed > 0 else placed.seconds
        if seconds > placed.seconds:  # too slow for the move: it stops where it got to
            angle = arm.gripper + (angle - arm.gripper) * placed.seconds / seconds
            seconds = placed.seconds
        end_ns = start_ns + max(int(seconds * 1e9), 1)
        gripper = GripperTask(command_id, JointTrajectory(
            np.array([start_ns, end_ns]), np.array([[arm.gripper], [angle]])), 5.5)
    return task, gripper
