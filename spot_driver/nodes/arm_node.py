"""Arm, gripper and manipulation actions, and MoveIt's FollowJointTrajectory, as ROS actions."""

import math
import time
from collections.abc import Callable

import numpy as np
from bosdyn.api import arm_command_pb2, basic_command_pb2, gripper_command_pb2, manipulation_api_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose
from control_msgs.action import FollowJointTrajectory, GripperCommand
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.time import Time
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectoryPoint

from spot_driver import arm_trajectory as at
from spot_driver import qos
from spot_driver.arm import NO_ARM, ArmCommander, arm_status_name
from spot_driver.arm_trajectory import ARM_JOINTS, TrajectoryError
from spot_driver.connection import RobotConnection
from spot_driver.errors import CommandError, describe
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.triggers import trigger_callback
from spot_driver.state_cache import RobotStateCache
from spot_msgs.action import ArmJointMove, ArmPose, ArmPosture, Gripper, PickObjectInImage
from spot_msgs.srv import OverrideGrasp

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
POSTURES = {ArmPosture.Goal.STOW: "stow", ArmPosture.Goal.UNSTOW: "unstow",
            ArmPosture.Goal.CARRY: "carry"}
POLL_S = 0.05
FJT_LEAD_S = 0.1  # send the next piece of a long trajectory this long before it starts


class CanceledError(Exception):
    """The action's client canceled the goal."""


def _seconds(duration) -> float:
    return duration.sec + duration.nanosec * 1e-9


class ArmNode(Node):
    """Actions and services for Spot's arm. On a robot without an arm every goal fails with
    'this robot has no arm'."""

    def __init__(self, connection: RobotConnection, cache: RobotStateCache,
                 namespace: str = "") -> None:
        super().__init__("spot_arm", namespace=namespace)
        self._cache = cache
        self.arm = ArmCommander(connection)
        self.prefix = declare(self, "frame_prefix", "")
        self.goal_tolerance = declare(self, "arm_goal_tolerance", 0.02)
        self.goal_time = declare(self, "arm_goal_time_tolerance", 1.0)
        group = ReentrantCallbackGroup()

        def server(action_type, name: str, execute: Callable) -> ActionServer:
            return ActionServer(self, action_type, name, execute_callback=execute,
                                goal_callback=lambda goal: GoalResponse.ACCEPT,
                                cancel_callback=lambda goal: CancelResponse.ACCEPT,
                                **qos.ACTION_SERVER, callback_group=group)

        self._servers = [
            server(ArmJointMove, "arm/joint_move", self._joint_move),
            server(ArmPose, "arm/pose", self._pose),
            server(ArmPosture, "arm/posture", self._posture),
            server(Gripper, "gripper", self._gripper),
            server(PickObjectInImage, "manipulation/pick_object_in_image", self._pick),
            server(FollowJointTrajectory, "arm_controller/follow_joint_trajectory",
                   self._follow_joint_trajectory),
            server(GripperCommand, "gripper_controller/gripper_cmd", self._gripper_command),
        ]
        for name, action in (("gripper/open", lambda: self._send_gripper(at.GRIPPER_OPEN)),
                             ("gripper/close", lambda: self._send_gripper(0.0)),
                             ("arm/stop", lambda: (self.arm.stop(), "arm stopped")[1])):
            self.create_service(Trigger, name, trigger_callback(self.get_logger(), name, action),
                                qos_profile=qos.SERVICES, callback_group=group)
        self.create_service(OverrideGrasp, "manipulation/override_grasp", self._override_grasp,
                            qos_profile=qos.SERVICES, callback_group=group)

    # ------------------------------------------------------------------ services

    def _send_gripper(self, angle: float) -> str:
        self.arm.gripper(angle)
        return "gripper opening" if angle < 0 else "gripper closing"

    def _override_grasp(self, request, response):
        try:
            response.success = True
            response.message = self.arm.override_grasp(request.holding, request.carry_state)
        except Exception as exc:
            response.success, response.message = False, describe(exc)
        return response

    # ------------------------------------------------------------------ shared loop
    def _follow(self, goal_handle, command_id: int, judge: Callable, timeout: float,
                on_cancel: Callable[[], object] | None = None) -> tuple[bool, str]:
        """Poll the robot's feedback until ``judge(feedback)`` returns (done, ok, status);
        returns (ok, status). Raises CanceledError after stopping the arm, CommandError on
        timeout."""
        deadline = time.monotonic() + timeout
        while True:
            if goal_handle.is_cancel_requested:
                (on_cancel or self.arm.stop)()
                raise CanceledError()
            done, ok, status = judge(self.arm.feedback(command_id))
            if done:
                return ok, status
            if time.monotonic() > deadline:
                (on_cancel or self.arm.stop)()
                raise CommandError(f"timed out waiting for the robot (last status {status})")
            time.sleep(POLL_S)

    def _finish(self, goal_handle, result, run: Callable[[], tuple[bool, str, str]]):
        """Run an action body; fill ``result`` (success, message, status) and end the goal."""
        try:
            result.success, result.message, status = run()
            if hasattr(result, "status"):
                result.status = status
        except CanceledError:
            result.success, result.message = False, "canceled; arm stopped"
            goal_handle.canceled()
            return result
        except TrajectoryError as exc:
            result.success, result.message = False, str(exc)
        except Exception as exc:
            result.success, result.message = False, describe(exc)
        if result.success:
            goal_handle.succeed()
        else:
            self.get_logger().warning(f"{type(result).__name__}: {result.message}")
            goal_handle.abort()
        return result

    @staticmethod
    def _arm_state(feedback) -> tuple[int, arm_command_pb2.ArmCommand.Feedback]:
        arm = feedback.arm_command_feedback
        return arm.status, arm

    # ------------------------------------------------------------------ arm actions
    def _joint_move(self, goal_handle):
        request = goal_handle.request

        def run():
            names = list(request.joint_names) or list(ARM_JOINTS)
            if len(request.positions) != len(names):
                raise CommandError(f"{len(request.positions)} positions for {len(names)} joints")
            order = at.joint_order(names, self.prefix)
            target = np.asarray(request.positions, dtype=float)[order]
            seconds = _seconds(request.duration)
            command_id = self.arm.joint_move(target, seconds, request.max_velocity)
            feedback = ArmJointMove.Feedback()

            def judge(fb):
                status, arm = self._arm_state(fb)
                move = arm.arm_joint_move_feedback
                feedback.status = arm_status_name(arm)
                feedback.time_to_goal = move.time_to_goal.seconds + move.time_to_goal.nanos * 1e-9
                goal_handle.publish_feedback(feedback)
                if status != PROCESSING:
                    return True, False, feedback.status
                if move.status == JointMoveFb.STATUS_COMPLETE:
                    return True, True, feedback.status
                return move.status == JointMoveFb.STATUS_STALLED, False, feedback.status

            ok, status = self._follow(goal_handle, command_id, judge, seconds + 15.0)
            return ok, "reached the joint target" if ok else f"joint move failed: {status}", status

        return self._finish(goal_handle, ArmJointMove.Result(), run)

    def _pose(self, goal_handle):
        request = goal_handle.request

        def run():
            state = self._cache.latest()
            if state is None:
                raise CommandError("no robot state received yet")
            p, q = request.pose.pose.position, request.pose.pose.orientation
            frame = request.pose.header.frame_id
            if self.prefix and frame.startswith(self.prefix):
                frame = frame[len(self.prefix):]
            seconds = _seconds(request.duration) or 2.0
            command_id = self.arm.pose(
                frame, SE3Pose(p.x, p.y, p.z, Quat(q.w, q.x, q.y, q.z)), seconds,
                state.kinematic_state.transforms_snapshot.child_to_parent_edge_map)
            feedback = ArmPose.Feedback()

            def judge(fb):
                status, arm = self._arm_state(fb)
                cart = arm.arm_cartesian_feedback
                feedback.status = arm_status_name(arm)
                feedback.position_distance = cart.measured_pos_distance_to_goal
                feedback.rotation_distance = cart.measured_rot_distance_to_goal
                goal_handle.publish_feedback(feedback)
                if status != PROCESSING:
                    return True, False, feedback.status
                if cart.status == CartesianFb.STATUS_TRAJECTORY_COMPLETE:
                    return True, True, feedback.status
                return cart.status in (CartesianFb.STATUS_TRAJECTORY_STALLED,
                                       CartesianFb.STATUS_TRAJECTORY_CANCELLED), False, \
                    feedback.status

            ok, status = self._follow(goal_handle, command_id, judge, seconds + 15.0)
            message = "hand reached the pose" if ok else (
                "the pose is out of the arm's reach (the robot stalled)"
                if status == "STATUS_TRAJECTORY_STALLED" else f"arm pose failed: {status}")
            return ok, message, status

        return self._finish(goal_handle, ArmPose.Result(), run)

    def _posture(self, goal_handle):
        request = goal_handle.request

        def run():
            name = POSTURES.get(request.posture)
            if name is None:
                raise CommandError(f"unknown posture {request.posture}; use STOW (1), "
                                   "UNSTOW (2) or CARRY (3)")
            command_id = self.arm.posture(name)
            feedback = ArmPosture.Feedback()

            def judge(fb):
                status, arm = self._arm_state(fb)
                named = arm.named_arm_position_feedback
                feedback.status = arm_status_name(arm)
                goal_handle.publish_feedback(feedback)
                if status != PROCESSING:
                    return True, False, feedback.status
                if named.status == NamedFb.STATUS_COMPLETE:
                    return True, True, feedback.status
                return named.status == NamedFb.STATUS_STALLED_HOLDING_ITEM, False, \
                    feedback.status

            ok, status = self._follow(goal_handle, command_id, judge, 20.0)
            if ok:
                return True, f"arm is in the {name} posture", status
            if status == "STATUS_STALLED_HOLDING_ITEM":
                return False, ("the robot will not stow an item it holds; open the gripper or "
                               "override the carry state"), status
            return False, f"arm {name} failed: {status}", status

        return self._finish(goal_handle, ArmPosture.Result(), run)

    def _gripper(self, goal_handle):
        request = goal_handle.request
        result = Gripper.Result()

        def run():
            if request.command == Gripper.Goal.OPEN:
                angle = at.GRIPPER_OPEN
            elif request.command == Gripper.Goal.CLOSE:
                angle = 0.0
            elif request.command == Gripper.Goal.ANGLE:
                angle = request.angle
            else:
                raise CommandError(f"unknown gripper command {request.command}; use OPEN (0), "
                                   "CLOSE (1) or ANGLE (2)")
            feedback = Gripper.Feedback()

            def publish(status: str) -> None:
                feedback.status = status
                feedback.open_percentage = self._open_percentage()
                goal_handle.publish_feedback(feedback)

            ok, status = self._move_gripper(goal_handle, angle, request.max_torque, publish)
            state = self._cache.wait_newer(1.0) or self._cache.latest()
            result.open_percentage = state.manipulator_state.gripper_open_percentage
            result.holding_item = state.manipulator_state.is_gripper_holding_item
            message = {"STATUS_AT_GOAL": "gripper reached the angle",
                       "STATUS_APPLYING_FORCE": "gripper is holding an object"}.get(
                status, f"gripper failed: {status}")
            return ok, message, status

        return self._finish(goal_handle, result, run)

    def _move_gripper(self, goal_handle, angle: float, torque: float,
                      publish: Callable[[str], None]) -> tuple[bool, str]:
        """Send the claw to ``angle`` and follow it until it is there or holds an object;
        (ok, claw status). A cancel holds the claw where it is."""
        command_id = self.arm.gripper(angle, torque)

        def judge(fb):
            gripper = fb.gripper_command_feedback
            claw = gripper.claw_gripper_feedback.status
            status = ClawFb.Status.Name(claw)
            publish(status)
            if gripper.status != PROCESSING:
                return True, False, status
            done = claw in (ClawFb.STATUS_AT_GOAL, ClawFb.STATUS_APPLYING_FORCE)
            return done, done, status

        return self._follow(goal_handle, command_id, judge, 10.0,
                            on_cancel=lambda: self.arm.gripper(self._gripper_angle()))

    def _gripper_command(self, goal_handle):
        """control_msgs/GripperCommand (MoveIt's gripper controller): position is the arm_f1x
        angle (rad), max_effort the closing torque (N*m)."""
        command = goal_handle.request.command
        result = GripperCommand.Result()
        feedback = GripperCommand.Feedback()

        def publish(status: str) -> None:
            feedback.position = self._gripper_angle()
            feedback.stalled = status == "STATUS_APPLYING_FORCE"
            goal_handle.publish_feedback(feedback)

        try:
            ok, status = self._move_gripper(goal_handle, command.position, command.max_effort,
                                            publish)
        except CanceledError:
            goal_handle.canceled()
            return result
        except Exception as exc:
            self.get_logger().warning(f"gripper_cmd: {describe(exc)}")
            goal_handle.abort()
            return result
        result.position = self._gripper_angle()
        result.stalled = status == "STATUS_APPLYING_FORCE"
        result.reached_goal = status == "STATUS_AT_GOAL"
        if ok:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    def _open_percentage(self) -> float:
        state = self._cache.latest()
        return state.manipulator_state.gripper_open_percentage if state is not None else math.nan

    def _gripper_angle(self) -> float:
        state = self._cache.latest()
        for joint in state.kinematic_state.joint_states:
            if joint.name == at.GRIPPER_JOINT:
                return min(0.0, max(at.GRIPPER_OPEN, joint.position.value))
        return 0.0

    def _pick(self, goal_handle):
        request = goal_handle.request
        result = PickObjectInImage.Result()

        def run():
            command_id = self.arm.pick_object_in_image(
                request.camera, request.pixel.x, request.pixel.y, request.walk_only,
                request.offset_distance)
            feedback = PickObjectInImage.Feedback()
            deadline = time.monotonic() + 60.0
            while True:
                if goal_handle.is_cancel_requested:
                    self.arm.stop_all()
                    raise CanceledError()
                state = self.arm.manipulation_state(command_id)
                feedback.state = Manip.Name(state)
                goal_handle.publish_feedback(feedback)
                if state in MANIP_SUCCESS or state in MANIP_FAILURE:
                    result.final_state = feedback.state
                    ok = state in MANIP_SUCCESS
                    return ok, ("done" if ok else "the robot could not complete it") + \
                        f" ({feedback.state})", feedback.state
                if time.monotonic() > deadline:
                    self.arm.stop_all()
                    raise CommandError(f"timed out in {feedback.state}")
                time.sleep(POLL_S)

        return self._finish(goal_handle, result, run)

    # ------------------------------------------------------------------ MoveIt
    def _follow_joint_trajectory(self, goal_handle):
        goal = goal_handle.request
        result = FollowJointTrajectory.Result()

        def fail(code: int, message: str):
            result.error_code, result.error_string = code, message
            self.get_logger().warning(f"follow_joint_trajectory: {message}")
            goal_handle.abort()
            return result

        try:
            if goal.multi_dof_trajectory.joint_names:
                raise TrajectoryError(at.INVALID_JOINTS, "the arm has no multi-DOF joints")
            points = goal.trajectory.points
            trajectory = at.arm_trajectory(
                goal.trajectory.joint_names, [_seconds(p.time_from_start) for p in points],
                [list(p.positions) for p in points], [list(p.velocities) for p in points],
                self.prefix)
            tolerances = at.Tolerances.from_goal(
                [(t.name, t.position) for t in goal.path_tolerance],
                [(t.name, t.position) for t in goal.goal_tolerance],
                _seconds(goal.goal_time_tolerance), self.goal_tolerance, self.goal_time,
                self.prefix)
            if not self.arm.has_arm:
                raise TrajectoryError(at.INVALID_GOAL, NO_ARM)
            stamp = Time.from_msg(goal.trajectory.header.stamp).nanoseconds / 1e9
            now = time.time()
            start = stamp if stamp > 0 else now
            if start + trajectory.duration < now:
                raise TrajectoryError(at.OLD_HEADER_TIMESTAMP,
                                      "the trajectory ended before it was received")
            pieces = at.segments(len(trajectory.times))
            command_id = self.arm.joint_trajectory(trajectory, *pieces[0], start)
        except TrajectoryError as exc:
            return fail(exc.code, str(exc))
        except CommandError as exc:
            return fail(at.INVALID_GOAL, str(exc))
        return self._execute_trajectory(goal_handle, result, trajectory, tolerances, pieces,
                                        command_id, start, fail)

    def _execute_trajectory(self, goal_handle, result, trajectory, tolerances, pieces,
                            command_id, start, fail):
        feedback = FollowJointTrajectory.Feedback(
            joint_names=[self.prefix + name for name in at.URDF_ARM_JOINTS])
        sent = 1
        try:
            while True:
                if goal_handle.is_cancel_requested:
                    self.arm.stop()
                    goal_handle.canceled()
                    result.error_code, result.error_string = at.SUCCESSFUL, "canceled; arm stopped"
                    return result
                elapsed = time.time() - start
                if sent < len(pieces) and elapsed >= \
                        trajectory.times[pieces[sent][0]] - FJT_LEAD_S:
                    command_id = self.arm.joint_trajectory(trajectory, *pieces[sent], start)
                    sent += 1
                actual = self._arm_joints()
                desired = trajectory.desired(elapsed)
                error = actual - desired
                self._publish_trajectory_feedback(goal_handle, feedback, desired, actual, error)
                arm = self.arm.feedback(command_id).arm_command_feedback
                if arm.status != PROCESSING:
                    self.arm.stop()
                    return fail(at.INVALID_GOAL, "the robot stopped the trajectory: " +
                                basic_command_pb2.RobotCommandFeedbackStatus.Status.Name(
                                    arm.status))
                if 0 <= elapsed <= trajectory.duration:
                    broken = at.violation(error, tolerances.path)
                    if broken:
                        self.arm.stop()
                        return fail(at.PATH_TOLERANCE_VIOLATED, broken)
                if elapsed >= trajectory.duration and sent == len(pieces):
                    final_error = actual - trajectory.positions[-1]
                    broken = at.violation(final_error, tolerances.goal)
                    if broken is None:
                        result.error_code = at.SUCCESSFUL
                        result.error_string = ""
                        goal_handle.succeed()
                        return result
                    if elapsed > trajectory.duration + tolerances.goal_time:
                        self.arm.stop()
                        return fail(at.GOAL_TOLERANCE_VIOLATED, broken)
                time.sleep(POLL_S)
        except CommandError as exc:
            return fail(at.INVALID_GOAL, str(exc))

    def _arm_joints(self) -> np.ndarray:
        state = self._cache.wait_newer(0.2) or self._cache.latest()
        positions = {j.name: j.position.value for j in state.kinematic_state.joint_states}
        return np.array([positions[name] for name in ARM_JOINTS])

    def _publish_trajectory_feedback(self, goal_handle, feedback, desired, actual, error):
        feedback.header.stamp = self.get_clock().now().to_msg()
        feedback.desired = JointTrajectoryPoint(positions=desired.tolist())
        feedback.actual = JointTrajectoryPoint(positions=actual.tolist())
        feedback.error = JointTrajectoryPoint(positions=error.tolist())
        goal_handle.publish_feedback(feedback)
