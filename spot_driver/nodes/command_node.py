"""Commands to the robot: lease/power/posture services, body pose, trajectory action.

cmd_vel, stop and the e-stop services live in ``MotionNode``, which has an executor of its
own so that they are served whatever these (slower) services are doing.
"""

import math
import threading
import time
from collections.abc import Callable

from bosdyn.api import basic_command_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose
from geometry_msgs.msg import Pose
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Header
from std_srvs.srv import Trigger

from spot_driver import qos
from spot_driver.commander import (
    Commander,
    se2_goal_from_pose,
    trajectory_duration,
    trajectory_status_name,
)
from spot_driver.connection import RobotConnection
from spot_driver.errors import CommandError, describe
from spot_driver.nodes.parameters import declare, on_change
from spot_driver.state_cache import RobotStateCache
from spot_msgs.action import Trajectory
from spot_msgs.msg import CommandFeedback, MobilityParams
from spot_msgs.srv import Claim, SetLocomotion, SetStairsMode, SetStandHeight, SetVelocityLimit

# cmd_vel clamps: (parameter, default, the robot's own maximum) in m/s and rad/s.
VELOCITY_LIMITS = (("max_linear_velocity_x", 1.0, 1.6), ("max_linear_velocity_y", 0.5, 0.5),
                   ("max_angular_velocity_z", 1.0, 1.5))
_TRAJ = basic_command_pb2.SE2TrajectoryCommand.Feedback
_PROCESSING = basic_command_pb2.RobotCommandFeedbackStatus.STATUS_PROCESSING


class CommandNode(Node):
    """Lease, power and posture services, mobility settings and the trajectory action."""

    def __init__(self, connection: RobotConnection, cache: RobotStateCache,
                 namespace: str = "") -> None:
        super().__init__("spot_commands", namespace=namespace)
        self._connection = connection
        self._cache = cache
        self.commander = Commander(connection)
        self._mobility_lock = threading.Lock()
        self.prefix = declare(self, "frame_prefix", "")
        self._limits = [declare(self, name, default, read_only=False, bounds=(0.0, top))
                        for name, default, top in VELOCITY_LIMITS]
        self.commander.mobility = self.commander.mobility.with_max_velocity(*self._limits)
        on_change(self, {name: (None, lambda value, i=i: self._set_limit(i, value))
                         for i, (name, _, _) in enumerate(VELOCITY_LIMITS)})

        services = ReentrantCallbackGroup()
        self._services_group = services
        for name, action in (
                ("release", self._connection.release),
                ("power_on", self.commander.power_on),
                ("power_off", self.commander.power_off),
                ("stand", self.commander.stand),
                ("sit", self.commander.sit),
                ("self_right", self.commander.self_right),
                ("rollover", self.commander.rollover),
                ("clear_behavior_fault", self.commander.clear_behavior_faults)):
            self._trigger(name, action)
        self._trigger("claim", lambda: self._connection.claim(take=False))
        typed = (
            (Claim, "claim_lease", lambda r: self._connection.claim(take=r.take)),
            (SetLocomotion, "locomotion_mode", lambda r: self._update_mobility(
                lambda m: m.with_locomotion_hint(r.locomotion_hint))),
            (SetStairsMode, "stairs_mode", lambda r: self._update_mobility(
                lambda m: m.with_stairs_mode(r.stairs_mode))),
            (SetStandHeight, "stand_height", lambda r: self._update_mobility(
                lambda m: m.with_body_pose(r.height, m.body_orientation), restand=True)),
            (SetVelocityLimit, "max_velocity", lambda r: self._update_mobility(
                lambda m: m.with_max_velocity(r.velocity_limit.linear.x,
                                              r.velocity_limit.linear.y,
                                              r.velocity_limit.angular.z))))
        for srv_type, name, action in typed:
            self.create_service(srv_type, name, self._typed(name, action),
                                qos_profile=qos.SERVICES, callback_group=services)

        self.create_subscription(Pose, "body_pose", self._on_body_pose, qos.STATE,
                                 callback_group=services)

        self._mobility_pub = self.create_publisher(MobilityParams, "status/mobility_params",
                                                   qos.LATCHED)
        self._feedback_pub = self.create_publisher(CommandFeedback, "status/command_feedback",
                                                   qos.STATE)
        self.create_timer(0.2, self._publish_command_feedback,
                          callback_group=MutuallyExclusiveCallbackGroup())
        self._publish_mobility()

        self._trajectory_server = ActionServer(
            self, Trajectory, "trajectory", execute_callback=self._execute_trajectory,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=lambda goal: CancelResponse.ACCEPT,
            **qos.ACTION_SERVER, callback_group=ReentrantCallbackGroup())

    def _set_limit(self, index: int, value: float) -> None:
        self._limits[index] = value
        self._update_mobility(lambda m: m.with_max_velocity(*self._limits))

    # ------------------------------------------------------------------ services
    def _trigger(self, name: str, action: Callable[[], str]) -> None:
        def callback(request, response):
            response.success, response.message = self._attempt(name, action)
            return response

        self.create_service(Trigger, name, callback, qos_profile=qos.SERVICES,
                            callback_group=self._services_group)

    def _typed(self, name: str, action: Callable[[object], str]):
        def callback(request, response):
            response.success, response.message = self._attempt(name, lambda: action(request))
            return response

        return callback

    def _attempt(self, name: str, action: Callable[[], str]) -> tuple[bool, str]:
        try:
            return True, action()
        except Exception as exc:
            message = describe(exc)
            self.get_logger().warning(f"{name}: {message}")
            return False, message

    def _update_mobility(self, change, restand: bool = False) -> str:
        with self._mobility_lock:
            self.commander.mobility = change(self.commander.mobility)
        self._publish_mobility()
        if restand:
            self.commander.restand_if_standing()
        return "mobility parameters updated"

    def _publish_mobility(self) -> None:
        m = self.commander.mobility
        msg = MobilityParams(header=Header(stamp=self.get_clock().now().to_msg()),
                             locomotion_hint=m.locomotion_hint, stair_hint=m.stair_hint,
                             stairs_mode=m.stairs_mode)
        msg.body_pose_offset.position.z = m.body_height
        o = msg.body_pose_offset.orientation
        o.w, o.x, o.y, o.z = m.body_orientation
        v = msg.velocity_limit
        v.linear.x, v.linear.y, v.angular.z = m.max_velocity
        self._mobility_pub.publish(msg)

    def _on_body_pose(self, pose: Pose) -> None:
        q = pose.orientation
        ok, message = self._attempt("body_pose", lambda: self._update_mobility(
            lambda m: m.with_body_pose(pose.position.z, (q.w, q.x, q.y, q.z)), restand=True))
        if not ok:
            self.get_logger().warning(f"body_pose ignored: {message}", throttle_duration_sec=2.0)

    # ------------------------------------------------------------------ feedback
    def _publish_command_feedback(self) -> None:
        last = self.commander.last_command
        if last is None or last[1] == 0:
            return
        name, command_id = last
        try:
            feedback = self.commander.feedback(command_id)
        except CommandError:
            return
        msg = CommandFeedback(header=Header(stamp=self.get_clock().now().to_msg()),
                              command_id=command_id, command=name)
        which = feedback.WhichOneof("command")
        if which == "full_body_feedback":
            msg.status = feedback.full_body_feedback.status
        elif which == "synchronized_feedback":
            mobility = feedback.synchronized_feedback.mobility_command_feedback
            msg.status = mobility.status
            if mobility.HasField("se2_trajectory_feedback"):
                msg.detail = trajectory_status_name(mobility.se2_trajectory_feedback)
        self._feedback_pub.publish(msg)

    # ------------------------------------------------------------------ trajectory
    def _strip_prefix(self, frame: str) -> str:
        if self.prefix and frame.startswith(self.prefix):
            return frame[len(self.prefix):]
        return frame

    def _execute_trajectory(self, goal_handle):
        request = goal_handle.request
        result = Trajectory.Result()
        state = self._cache.latest()
        try:
            if state is None:
                raise CommandError("no robot state received yet")
            self._connection.require_lease()
            pose_msg = request.target_pose.pose
            pose = SE3Pose(pose_msg.position.x, pose_msg.position.y, pose_msg.position.z,
                           Quat(pose_msg.orientation.w, pose_msg.orientation.x,
                                pose_msg.orientation.y, pose_msg.orientation.z))
            frame = self._strip_prefix(request.target_pose.header.frame_id)
            snapshot = state.kinematic_state.transforms_snapshot
            goal = se2_goal_from_pose(snapshot, frame, pose)
            distance, angle = _remaining(snapshot, goal)
            duration = trajectory_duration(
                distance, angle, request.duration.sec + request.duration.nanosec * 1e-9)
            command_id = self.commander.trajectory(goal, duration)
        except Exception as exc:
            result.success, result.message = False, describe(exc)
            self.get_logger().warning(f"trajectory refused: {result.message}")
            goal_handle.abort()
            return result
        deadline = time.monotonic() + duration + 2.0
        feedback = Trajectory.Feedback()
        while True:
            if goal_handle.is_cancel_requested:
                self._attempt("stop", self.commander.stop)
                goal_handle.canceled()
                result.success, result.message = False, "canceled; robot stopped"
                return result
            try:
                robot_feedback = self.commander.feedback(command_id)
            except CommandError as exc:
                goal_handle.abort()
                result.success, result.message = False, str(exc)
                return result
            mobility = robot_feedback.synchronized_feedback.mobility_command_feedback
            traj = mobility.se2_trajectory_feedback
            latest = self._cache.latest()
            feedback.distance_remaining, feedback.angle_remaining = _remaining(
                latest.kinematic_state.transforms_snapshot, goal)
            feedback.status = trajectory_status_name(traj)
            goal_handle.publish_feedback(feedback)
            if traj.status == _TRAJ.STATUS_AT_GOAL and \
                    traj.body_movement_status == _TRAJ.BODY_STATUS_SETTLED:
                goal_handle.succeed()
                result.success, result.message = True, "reached the goal"
                return result
            if mobility.status != _PROCESSING:
                goal_handle.abort()
                status = basic_command_pb2.RobotCommandFeedbackStatus.Status.Name(mobility.status)
                result.success, result.message = False, f"robot stopped the trajectory: {status}"
                return result
            if time.monotonic() > deadline:
                self._attempt("stop", self.commander.stop)
                goal_handle.abort()
                result.success, result.message = False, "timed out before reaching the goal"
                return result
            time.sleep(0.05)


def _remaining(snapshot, goal) -> tuple[float, float]:
    """Distance (m) and heading error (rad) from the body to a planar goal."""
    frame_tform_body = get_a_tform_b(snapshot, goal.frame, "body")
    if frame_tform_body is None:
        return math.nan, math.nan
    se2 = frame_tform_body.get_closest_se2_transform()
    dyaw = math.atan2(math.sin(goal.yaw - se2.angle), math.cos(goal.yaw - se2.angle))
    return math.hypot(goal.x - se2.x, goal.y - se2.y), abs(dyaw)
