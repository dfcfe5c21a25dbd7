"""Arm, gripper and manipulation actions, and MoveIt's FollowJointTrajectory, as ROS actions.

Goal policy: PREEMPT. A new arm goal (joint move, pose, posture, pick, trajectory) replaces
the running one, and a new gripper goal the running gripper goal, as ros2_control's
controllers do.
"""

import math
import time

import numpy as np
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose
from control_msgs.action import FollowJointTrajectory, GripperCommand
from geometry_msgs.msg import Twist, Vector3
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.time import Time
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectoryPoint

from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import CommandError, describe
from spot_driver.core.follower import Ending, Outcome
from spot_driver.description import frame_names as naming
from spot_driver.manipulation import api_request, arm_velocity, surface_contact, tasks
from spot_driver.manipulation import arm_trajectory as at
from spot_driver.manipulation.arm import NO_ARM, ArmCommander
from spot_driver.manipulation.arm_trajectory import ARM_JOINTS, TrajectoryError
from spot_driver.manipulation.inverse_kinematics import (
    InverseKinematics,
    build_request,
    checked_pose,
)
from spot_driver.nodes.actions import GoalPolicy, GoalSlot, fill_result, serve
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.triggers import answer, answer_callback, trigger_callback
from spot_driver.state.joint_states import urdf_joint_name
from spot_msgs.action import (
    ArmJointMove,
    ArmPose,
    ArmPosture,
    ArmSurfaceContact,
    Gripper,
    Manipulation,
    PickObjectInImage,
)
from spot_msgs.srv import GetInverseKinematics, OverrideGrasp

# A wrist_tform_tool left at its default (identity, or all zeros) means the hand frame.
ARM_CMD_DURATION_S = 0.25  # each arm/cmd_vel message holds this long (as cmd_vel's default)
HAND_OFFSETS = ((0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0), (0.0,) * 7)
POSTURES = {ArmPosture.Goal.STOW: "stow", ArmPosture.Goal.UNSTOW: "unstow",
            ArmPosture.Goal.CARRY: "carry"}


def _seconds(duration) -> float:
    return duration.sec + duration.nanosec * 1e-9


class ArmNode(Node):
    """Actions and services for Spot's arm. On a robot without an arm every goal fails with
    'this robot has no arm'."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_arm", namespace=context.namespace)
        self._cache, self._connection = context.cache, context.connection
        self.arm = ArmCommander(context.connection)
        self.prefix = declare(self, "frame_prefix", "")
        self.frame_names = naming.check(declare(self, "frame_names", "spot"))
        self.goal_tolerance = declare(self, "arm_goal_tolerance", 0.02)
        self.goal_time = declare(self, "arm_goal_time_tolerance", 1.0)
        group = ReentrantCallbackGroup()
        arm = GoalSlot("arm", GoalPolicy.PREEMPT)
        gripper = GoalSlot("gripper", GoalPolicy.PREEMPT)
        self._servers = [
            serve(self, ArmJointMove, "arm/joint_move", self._joint_move, arm, group),
            serve(self, ArmPose, "arm/pose", self._pose, arm, group),
            serve(self, ArmPosture, "arm/posture", self._posture, arm, group),
            serve(self, Manipulation, "manipulation", self._manipulation, arm, group),
            serve(self, ArmSurfaceContact, "arm_surface_contact", self._surface_contact, arm,
                  group, result_for=self._surface_contact_result,
                  feedback_for=lambda values: ArmSurfaceContact.Feedback(
                      time_remaining=values["time_remaining"],
                      force_in_hand=Vector3(**dict(zip("xyz", values["force_in_hand"],
                                                       strict=True))))),
            serve(self, PickObjectInImage, "manipulation/pick_object_in_image", self._pick,
                  arm, group),
            serve(self, FollowJointTrajectory, "arm_controller/follow_joint_trajectory",
                  self._follow_joint_trajectory, arm, group, result_for=self._fjt_result,
                  feedback_for=self._fjt_feedback),
            serve(self, Gripper, "gripper", self._gripper, gripper, group,
                  result_for=self._gripper_result),
            serve(self, GripperCommand, "gripper_controller/gripper_cmd", self._gripper_command,
                  gripper, group, result_for=self._gripper_command_result),
        ]
        for name, action in (("gripper/open", lambda: self._send_gripper(at.GRIPPER_OPEN)),
                             ("gripper/close", lambda: self._send_gripper(0.0)),
                             ("arm/stop", lambda: (self.arm.stop(), "arm stopped")[1])):
            self.create_service(Trigger, name, trigger_callback(self.get_logger(), name, action),
                                qos_profile=qos.SERVICES, callback_group=group)
        self.create_service(OverrideGrasp, "manipulation/override_grasp", self._override_grasp,
                            qos_profile=qos.SERVICES, callback_group=group)
        self.create_subscription(Twist, "arm/cmd_vel", self._on_arm_cmd_vel, qos.VELOCITY_COMMAND,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        self.ik = InverseKinematics(context.connection)
        self.create_service(GetInverseKinematics, "arm/inverse_kinematics", answer_callback(
            self.get_logger(), "arm/inverse_kinematics", self._inverse_kinematics),
            qos_profile=qos.SERVICES, callback_group=group)

    # ------------------------------------------------------------------ arm velocity
    def _on_arm_cmd_vel(self, msg: Twist) -> None:
        """The hand's velocity (linear in ``body``, angular about the hand's axes), held for
        ARM_CMD_DURATION_S: the arm stops when messages stop. Bad input sends nothing."""
        try:
            command, clamped = arm_velocity.arm_velocity(
                (msg.linear.x, msg.linear.y, msg.linear.z),
                (msg.angular.x, msg.angular.y, msg.angular.z))
            self.arm.velocity(command, ARM_CMD_DURATION_S)
        except Exception as exc:
            self.get_logger().warning(f"arm/cmd_vel ignored: {describe(exc)}",
                                      throttle_duration_sec=2.0)
            return
        if clamped:
            self.get_logger().warning(
                f"arm/cmd_vel clamped to {arm_velocity.MAX_LINEAR} m/s, "
                f"{arm_velocity.MAX_ANGULAR} rad/s", throttle_duration_sec=5.0)

    # ------------------------------------------------------------------ services
    def _send_gripper(self, angle: float) -> str:
        self.arm.gripper(angle)
        return "gripper opening" if angle < 0 else "gripper closing"

    def _override_grasp(self, request, response):
        return answer(self.get_logger(), "manipulation/override_grasp", response,
                      lambda: self.arm.override_grasp(request.holding, request.carry_state))

    def _inverse_kinematics(self, request, response) -> str:
        self.arm.require_arm()
        state = self._cache.latest()
        tasks.require_state(state)
        p, q = request.target_pose.pose.position, request.target_pose.pose.orientation
        target = checked_pose((p.x, p.y, p.z, q.w, q.x, q.y, q.z), "target_pose")
        t, r = request.wrist_tform_tool.position, request.wrist_tform_tool.orientation
        offset = (t.x, t.y, t.z, r.w, r.x, r.y, r.z)
        tool = None if offset in HAND_OFFSETS else checked_pose(offset, "wrist_tform_tool")
        frame = naming.robot_frame(request.target_pose.header.frame_id, self.prefix,
                                   self.frame_names)
        answer = self.ik.solve(build_request(state.kinematic_state.transforms_snapshot, frame,
                                             target, tool, request.from_ready))
        response.reachable, response.status = answer.reachable, answer.status
        response.joint_names = [f"{self.prefix}{urdf_joint_name(name)}" for name in answer.joints]
        response.joint_positions = list(answer.joints.values())
        for out, pose in ((response.odom_tform_body, answer.odom_tform_body),
                          (response.body_tform_hand, answer.body_tform_hand)):
            if pose is not None:
                out.position.x, out.position.y, out.position.z = pose.x, pose.y, pose.z
                o = out.orientation
                o.w, o.x, o.y, o.z = pose.rot.w, pose.rot.x, pose.rot.y, pose.rot.z
        return "reachable" if answer.reachable else f"not reachable: {answer.status}"

    # ------------------------------------------------------------------ arm goals -> tasks
    def _joint_move(self, goal) -> tasks.ArmCommandTask:
        names = list(goal.joint_names) or list(ARM_JOINTS)
        if len(goal.positions) != len(names):
            raise CommandError(f"{len(goal.positions)} positions for {len(names)} joint_names")
        target = np.asarray(goal.positions, dtype=float)[at.joint_order(names, self.prefix)]
        seconds = _seconds(goal.duration)
        return tasks.ArmCommandTask(
            self.arm, "joint move", lambda: self.arm.joint_move(target, seconds,
                                                                goal.max_velocity),
            tasks.judge_joint_move, seconds + 15.0)

    def _pose(self, goal) -> tasks.ArmCommandTask:
        state = self._cache.latest()
        tasks.require_state(state)
        p, q = goal.pose.pose.position, goal.pose.pose.orientation
        frame = naming.robot_frame(goal.pose.header.frame_id, self.prefix, self.frame_names)
        seconds = _seconds(goal.duration) or 2.0
        pose = SE3Pose(p.x, p.y, p.z, Quat(q.w, q.x, q.y, q.z))
        frames = state.kinematic_state.transforms_snapshot.child_to_parent_edge_map
        return tasks.ArmCommandTask(
            self.arm, "arm pose", lambda: self.arm.pose(frame, pose, seconds, frames),
            tasks.judge_pose, seconds + 15.0)

    def _posture(self, goal) -> tasks.ArmCommandTask:
        name = POSTURES.get(goal.posture)
        if name is None:
            raise CommandError(f"unknown posture {goal.posture}; use STOW (1), UNSTOW (2) or "
                               "CARRY (3)")
        return tasks.ArmCommandTask(self.arm, f"arm {name}", lambda: self.arm.posture(name),
                                    tasks.judge_posture(name), 20.0)

    def _manipulation(self, goal) -> tasks.PickTask:
        self.arm.require_arm()
        state = self._cache.latest()
        if state is None:
            raise CommandError("no robot state received yet")
        frames = set(state.kinematic_state.transforms_snapshot.child_to_parent_edge_map)
        request = api_request.parse(bytes(goal.request), goal.request_text, frames)
        return tasks.PickTask(self.arm, lambda: self.arm.manipulation_request(request),
                              api_request.timeout(goal.timeout))

    def _surface_contact(self, goal) -> tasks.SurfaceContactTask:
        self.arm.require_arm()
        state = self._cache.latest()
        tasks.require_state(state)
        frames = set(state.kinematic_state.transforms_snapshot.child_to_parent_edge_map)
        request = surface_contact.parse(bytes(goal.request), goal.request_text, frames)
        return tasks.SurfaceContactTask(
            self.arm, lambda: self.arm.surface_contact(request),
            surface_contact.seconds(request, time.time()), request.root_frame_name,
            self._hand_force)

    def _hand_force(self) -> tuple[float, float, float]:
        state = self._cache.latest()
        f = state.manipulator_state.estimated_end_effector_force_in_hand
        return (f.x, f.y, f.z)

    def _surface_contact_result(self, result, ending: Ending):
        state = self._state_now()
        root = ending.values.get("root")
        if state is None or root is None:  # refused before anything was sent
            return fill_result(result, ending)
        result.force_in_hand = Vector3(**dict(zip("xyz", self._hand_force(), strict=True)))
        hand = get_a_tform_b(state.kinematic_state.transforms_snapshot, root, "hand")
        if hand is not None:
            result.hand.header.frame_id = self.prefix + root
            result.hand.header.stamp = self.get_clock().now().to_msg()
            p, o = result.hand.pose.position, result.hand.pose.orientation
            p.x, p.y, p.z = hand.x, hand.y, hand.z
            o.w, o.x, o.y, o.z = hand.rot.w, hand.rot.x, hand.rot.y, hand.rot.z
        return fill_result(result, ending)

    def _pick(self, goal) -> tasks.PickTask:
        return tasks.PickTask(self.arm, lambda: self.arm.pick_object_in_image(
            goal.camera, goal.pixel.x, goal.pixel.y, goal.walk_only, goal.offset_distance))

    # ------------------------------------------------------------------ gripper
    def _gripper_task(self, angle: float, torque: float, values,
                      fields: tuple[str, str] = ("angle", "max_torque")) -> tasks.ArmCommandTask:
        """The claw to ``angle`` until it is there or holds an object; a cancel holds the
        claw where it is. A refusal names the goal's ``fields``."""
        return tasks.ArmCommandTask(
            self.arm, "gripper", lambda: self.arm.gripper(angle, torque, fields),
            tasks.judge_gripper(values), 10.0,
            on_stop=lambda: self.arm.gripper(self._gripper_angle()))

    def _gripper(self, goal) -> tasks.ArmCommandTask:
        if goal.command == Gripper.Goal.OPEN:
            angle = at.GRIPPER_OPEN
        elif goal.command == Gripper.Goal.CLOSE:
            angle = 0.0
        elif goal.command == Gripper.Goal.ANGLE:
            angle = goal.angle
        else:
            raise CommandError(f"unknown gripper command {goal.command}; use OPEN (0), CLOSE "
                               "(1) or ANGLE (2)")
        return self._gripper_task(angle, goal.max_torque, lambda status: {
            "status": status, "open_percentage": self._open_percentage()})

    def _gripper_result(self, result, ending: Ending):
        state = self._state_now()
        if state is not None:
            result.open_percentage = state.manipulator_state.gripper_open_percentage
            result.holding_item = state.manipulator_state.is_gripper_holding_item
        return fill_result(result, ending)

    def _gripper_command(self, goal) -> tasks.ArmCommandTask:
        """control_msgs/GripperCommand (MoveIt's gripper controller): position is the arm_f1x
        angle (rad), max_effort the closing torque (N*m)."""
        command = goal.command
        return self._gripper_task(command.position, command.max_effort, lambda status: {
            "position": self._gripper_angle(), "stalled": status == "STATUS_APPLYING_FORCE"},
            ("command.position", "command.max_effort"))

    def _gripper_command_result(self, result, ending: Ending):
        result.position = self._gripper_angle(self._state_now())
        result.stalled = ending.status == "STATUS_APPLYING_FORCE"
        result.reached_goal = ending.status == "STATUS_AT_GOAL"
        return result

    def _open_percentage(self) -> float:
        state = self._cache.latest()
        return state.manipulator_state.gripper_open_percentage if state is not None else math.nan

    def _state_now(self, timeout: float = 1.0):
        """A robot state taken after now (robot clock): where a finished command left it."""
        return self._cache.wait_acquired_after(time.time_ns() + self._connection.skew_nsec,
                                               timeout)

    def _gripper_angle(self, state=None) -> float:
        if state is None:
            state = self._cache.latest()
        for joint in state.kinematic_state.joint_states if state is not None else ():
            if joint.name == at.GRIPPER_JOINT:
                return min(0.0, max(at.GRIPPER_OPEN, joint.position.value))
        return 0.0

    # ------------------------------------------------------------------ MoveIt
    def _follow_joint_trajectory(self, goal) -> tasks.JointTrajectoryTask:
        if goal.multi_dof_trajectory.joint_names:
            raise TrajectoryError(at.INVALID_JOINTS, "the arm has no multi-DOF joints "
                                 "(multi_dof_trajectory must be empty)")
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
        return tasks.JointTrajectoryTask(self.arm, trajectory, tolerances, start,
                                         self._arm_joints)

    @staticmethod
    def _fjt_result(result, ending: Ending):
        if ending.outcome is Outcome.ABORTED:
            result.error_code = ending.values.get("error_code", at.INVALID_GOAL)
            result.error_string = ending.message
        else:  # succeeded, or canceled (not an error for FollowJointTrajectory)
            result.error_code = at.SUCCESSFUL
            result.error_string = "" if ending.ok else ending.message
        return result

    def _fjt_feedback(self, values: dict) -> FollowJointTrajectory.Feedback:
        feedback = FollowJointTrajectory.Feedback(
            joint_names=[self.prefix + name for name in at.URDF_ARM_JOINTS])
        feedback.header.stamp = self.get_clock().now().to_msg()
        for name in ("desired", "actual", "error"):
            setattr(feedback, name, JointTrajectoryPoint(positions=values[name].tolist()))
        return feedback

    def _arm_joints(self) -> np.ndarray:
        state = self._cache.wait_newer(0.2) or self._cache.latest()
        positions = {j.name: j.position.value for j in state.kinematic_state.joint_states}
        return np.array([positions[name] for name in ARM_JOINTS])
