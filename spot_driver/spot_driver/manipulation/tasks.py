"""Arm, gripper and manipulation commands followed to their end (``follower.RobotTask``s).

Each task judges the robot's feedback for its command; feedback values are plain numbers and
strings named like the action's feedback fields. No ROS here: ``node.py`` turns goals into
tasks and endings into results.
"""

import time
from collections.abc import Callable

import numpy as np
from bosdyn.api import (
    arm_command_pb2,
    basic_command_pb2,
    gripper_command_pb2,
    manipulation_api_pb2,
)

from spot_driver.core.errors import CommandError
from spot_driver.core.follower import Progress, RobotTask
from spot_driver.manipulation import arm_trajectory as at
from spot_driver.manipulation.arm import ArmCommander, arm_status_name

PROCESSING = basic_command_pb2.RobotCommandFeedbackStatus.STATUS_PROCESSING
JointMoveFb = arm_command_pb2.ArmJointMoveCommand.Feedback
CartesianFb = arm_command_pb2.ArmCartesianCommand.Feedback
NamedFb = arm_command_pb2.NamedArmPositionsCommand.Feedback
ClawFb = gripper_command_pb2.ClawGripperCommand.Feedback
Manip = manipulation_api_pb2.ManipulationFeedbackState
MANIP_SUCCESS = {Manip.MANIP_STATE_GRASP_SUCCEEDED, Manip.MANIP_STATE_DONE,
                 Manip.MANIP_STATE_PLACE_SUCCEEDED}
MANIP_FAILURE = {Manip.MANIP_STATE_GRASP_FAILED, Manip.MANIP_STATE_GRASP_PLANNING_NO_SOLUTION,
                 Manip.MANIP_STATE_GRASP_FAILED_TO_RAYCAST_INTO_MAP,
                 Manip.MANIP_STATE_PLACE_FAILED_TO_RAYCAST_INTO_MAP,
                 Manip.MANIP_STATE_PLACE_FAILED}
POLL_S = 0.05
FJT_LEAD_S = 0.1  # send the next piece of a long trajectory this long before it starts
GRIPPER_MESSAGES = {"STATUS_AT_GOAL": "gripper reached the angle",
                    "STATUS_APPLYING_FORCE": "gripper is holding an object"}


class ArmCommandTask(RobotTask):
    """One arm or gripper command: ``send()`` starts it, ``judge(robot feedback)`` reads each
    feedback into a ``Progress``; a cancel or timeout runs ``on_stop`` (default: stop the
    arm)."""

    poll_s = POLL_S
    canceled_message = "canceled; arm stopped"

    def __init__(self, arm: ArmCommander, name: str, send: Callable[[], int],
                 judge: Callable[[object], Progress], timeout: float,
                 on_stop: Callable[[], object] | None = None) -> None:
        self.name, self.timeout = name, timeout
        self._arm, self._send, self._judge = arm, send, judge
        self._on_stop = on_stop or arm.stop
        self._command_id = 0

    def start(self) -> None:
        self._command_id = self._send()

    def poll(self) -> Progress:
        return self._judge(self._arm.feedback(self._command_id))

    def stop(self) -> None:
        self._on_stop()


def _arm(feedback) -> tuple[int, arm_command_pb2.ArmCommand.Feedback]:
    arm = feedback.arm_command_feedback
    return arm.status, arm


def _progress(done: bool, ok: bool, status: str, feedback: dict) -> Progress:
    return Progress(done=done, ok=ok, status=status, feedback=feedback)


def judge_joint_move(feedback) -> Progress:
    status, arm = _arm(feedback)
    move = arm.arm_joint_move_feedback
    name = arm_status_name(arm)
    values = {"status": name, "time_to_goal": move.time_to_goal.seconds
              + move.time_to_goal.nanos * 1e-9}
    progress = _progress(status != PROCESSING or move.status in (
        JointMoveFb.STATUS_COMPLETE, JointMoveFb.STATUS_STALLED),
        status == PROCESSING and move.status == JointMoveFb.STATUS_COMPLETE, name, values)
    progress.message = "reached the joint target" if progress.ok else \
        f"joint move failed: {name}"
    return progress


def judge_pose(feedback) -> Progress:
    status, arm = _arm(feedback)
    cart = arm.arm_cartesian_feedback
    name = arm_status_name(arm)
    values = {"status": name, "position_distance": cart.measured_pos_distance_to_goal,
              "rotation_distance": cart.measured_rot_distance_to_goal}
    stalled = cart.status in (CartesianFb.STATUS_TRAJECTORY_STALLED,
                              CartesianFb.STATUS_TRAJECTORY_CANCELLED)
    ok = status == PROCESSING and cart.status == CartesianFb.STATUS_TRAJECTORY_COMPLETE
    progress = _progress(status != PROCESSING or ok or stalled, ok, name, values)
    progress.message = "hand reached the pose" if ok else (
        "the pose is out of the arm's reach (the robot stalled)"
        if name == "STATUS_TRAJECTORY_STALLED" else f"arm pose failed: {name}")
    return progress


def judge_posture(posture: str) -> Callable[[object], Progress]:
    def judge(feedback) -> Progress:
        status, arm = _arm(feedback)
        named = arm.named_arm_position_feedback
        name = arm_status_name(arm)
        ok = status == PROCESSING and named.status == NamedFb.STATUS_COMPLETE
        holding = named.status == NamedFb.STATUS_STALLED_HOLDING_ITEM
        progress = _progress(status != PROCESSING or ok or holding, ok, name, {"status": name})
        progress.message = f"arm is in the {posture} posture" if ok else (
            "the robot will not stow an item it holds; open the gripper or override the carry "
            "state" if name == "STATUS_STALLED_HOLDING_ITEM" else f"arm {posture} failed: {name}")
        return progress

    return judge


def judge_gripper(values: Callable[[str], dict]) -> Callable[[object], Progress]:
    """Judge a claw command; ``values(claw status)`` gives the feedback fields."""

    def judge(feedback) -> Progress:
        gripper = feedback.gripper_command_feedback
        claw = gripper.claw_gripper_feedback.status
        name = ClawFb.Status.Name(claw)
        done = claw in (ClawFb.STATUS_AT_GOAL, ClawFb.STATUS_APPLYING_FORCE)
        progress = _progress(gripper.status != PROCESSING or done,
                             gripper.status == PROCESSING and done, name, values(name))
        progress.message = GRIPPER_MESSAGES.get(name, f"gripper failed: {name}")
        return progress

    return judge


class PickTask(RobotTask):
    """A manipulation API command (pick or walk to an object), followed on its state."""

    name = "pick"
    poll_s = POLL_S
    timeout = 60.0
    canceled_message = "canceled; arm stopped"

    def __init__(self, arm: ArmCommander, send: Callable[[], int],
                 timeout: float = 60.0) -> None:
        self._arm, self._send = arm, send
        self._command_id = 0
        self.timeout = timeout

    def start(self) -> None:
        self._command_id = self._send()

    def poll(self) -> Progress:
        state = self._arm.manipulation_state(self._command_id)
        name = Manip.Name(state)
        progress = Progress(status=name, feedback={"state": name})
        if state in MANIP_SUCCESS or state in MANIP_FAILURE:
            progress.done, progress.ok = True, state in MANIP_SUCCESS
            progress.message = ("done" if progress.ok else "the robot could not complete it") \
                + f" ({name})"
            progress.values = {"final_state": name}
        return progress

    def stop(self) -> None:
        self._arm.stop_all()


class SurfaceContactTask(RobotTask):
    """An arm surface contact request, followed for the time it runs (``seconds``): the robot
    reports no progress for it. ``force()`` reads the robot's estimate of the force on the
    hand (hand frame, N). A cancel or timeout stops the arm. Its values name the request's
    ``root`` frame (where the result gives the hand)."""

    name = "arm_surface_contact"
    poll_s = POLL_S
    canceled_message = "canceled; arm stopped"

    def __init__(self, arm: ArmCommander, send: Callable[[], None], seconds: float, root: str,
                 force: Callable[[], tuple[float, float, float]],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._arm, self._send, self._seconds, self._root = arm, send, seconds, root
        self._force, self._clock = force, clock
        self._started = 0.0
        self.timeout = seconds + 10.0

    def start(self) -> None:
        self._send()
        self._started = self._clock()

    def poll(self) -> Progress:
        remaining = max(0.0, self._seconds - (self._clock() - self._started))
        force = self._force()
        progress = Progress(feedback={"time_remaining": remaining, "force_in_hand": force},
                            values={"root": self._root})
        if remaining <= 0.0:
            progress.done = progress.ok = True
            progress.message = (f"trajectory done; the robot estimates "
                                f"{float(np.linalg.norm(force)):.1f} N on the hand")
        return progress

    def stop(self) -> None:
        self._arm.stop()


class JointTrajectoryTask(RobotTask):
    """A FollowJointTrajectory goal: the trajectory sent in pieces of at most
    ``at.MAX_POINTS`` points (each shortly before it starts), the arm's joints checked against
    the path tolerances while it runs and against the goal tolerances at its end.

    ``joints()`` reads the arm's measured joint positions (ARM_JOINTS order). Results carry
    FollowJointTrajectory's ``error_code``."""

    name = "follow_joint_trajectory"
    poll_s = POLL_S
    canceled_message = "canceled; arm stopped"

    def __init__(self, arm: ArmCommander, trajectory: at.ArmTrajectory,
                 tolerances: at.Tolerances, start_time: float,
                 joints: Callable[[], np.ndarray]) -> None:
        self._arm, self._trajectory, self._tolerances = arm, trajectory, tolerances
        self._start, self._joints = start_time, joints
        self._pieces = at.segments(len(trajectory.times))
        self._sent = 0
        self._command_id = 0
        self.timeout = max(0.0, start_time - time.time()) + trajectory.duration \
            + tolerances.goal_time + 5.0

    def start(self) -> None:
        self._send_piece()

    def _send_piece(self) -> None:
        self._command_id = self._arm.joint_trajectory(self._trajectory, *self._pieces[self._sent],
                                                      self._start)
        self._sent += 1

    def poll(self) -> Progress:
        trajectory = self._trajectory
        elapsed = time.time() - self._start
        if self._sent < len(self._pieces) and \
                elapsed >= trajectory.times[self._pieces[self._sent][0]] - FJT_LEAD_S:
            self._send_piece()
        actual = self._joints()
        desired = trajectory.desired(elapsed)
        error = actual - desired
        progress = Progress(feedback={"desired": desired, "actual": actual, "error": error})
        arm = self._arm.feedback(self._command_id).arm_command_feedback
        if arm.status != PROCESSING:
            status = basic_command_pb2.RobotCommandFeedbackStatus.Status.Name(arm.status)
            return self._failed(progress, at.INVALID_GOAL,
                                f"the robot stopped the trajectory: {status}")
        if 0 <= elapsed <= trajectory.duration:
            broken = at.violation(error, self._tolerances.path)
            if broken:
                return self._failed(progress, at.PATH_TOLERANCE_VIOLATED, broken)
        if elapsed >= trajectory.duration and self._sent == len(self._pieces):
            broken = at.violation(actual - trajectory.positions[-1], self._tolerances.goal)
            if broken is None:
                progress.done = progress.ok = True
                progress.values = {"error_code": at.SUCCESSFUL}
            elif elapsed > trajectory.duration + self._tolerances.goal_time:
                return self._failed(progress, at.GOAL_TOLERANCE_VIOLATED, broken)
        return progress

    def _failed(self, progress: Progress, code: int, message: str) -> Progress:
        self._arm.stop()
        progress.done, progress.ok, progress.message = True, False, message
        progress.values = {"error_code": code}
        return progress

    def stop(self) -> None:
        self._arm.stop()


def require_state(state) -> None:
    if state is None:
        raise CommandError("no robot state received yet")
