"""Commands to the robot: lease/power/posture services, body pose, trajectory action.

cmd_vel, stop and the e-stop services live in ``MotionNode``, which has an executor of its
own so that they are served whatever these (slower) services are doing.
"""

import math
import threading
from collections.abc import Callable

from bosdyn.api import basic_command_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose
from geometry_msgs.msg import Pose
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Header
from std_srvs.srv import Trigger

from spot_driver.body.any_command import AnyCommandTask
from spot_driver.body.commander import (
    trajectory_status_name,
)
from spot_driver.body.spot_check import SpotCheckTask
from spot_driver.body.trajectory import TrajectoryTask
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import CommandError, describe
from spot_driver.description import frame_names as naming
from spot_driver.nodes.actions import GoalPolicy, GoalSlot, serve
from spot_driver.nodes.parameters import declare, on_change
from spot_driver.nodes.periodic import PeriodicWork
from spot_msgs.action import RobotCommand, SpotCheck, Trajectory
from spot_msgs.msg import CommandFeedback, MobilityParams
from spot_msgs.srv import (
    Claim,
    ClearBehaviorFault,
    SetLocomotion,
    SetStairsMode,
    SetStandHeight,
    SetVelocityLimit,
)

# cmd_vel clamps: (parameter, default, the robot's own maximum) in m/s and rad/s.
VELOCITY_LIMITS = (("max_linear_velocity_x", 1.0, 1.6), ("max_linear_velocity_y", 0.5, 0.5),
                   ("max_angular_velocity_z", 1.0, 1.5))
_TRAJ = basic_command_pb2.SE2TrajectoryCommand.Feedback
_PROCESSING = basic_command_pb2.RobotCommandFeedbackStatus.STATUS_PROCESSING


class CommandNode(PeriodicWork, Node):
    """Lease, power and posture services, mobility settings and the trajectory action."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_commands", namespace=context.namespace)
        self._connection = context.connection
        self._cache = context.cache
        self.commander = context.commander
        self._mobility_lock = threading.Lock()
        self.prefix = declare(self, "frame_prefix", "")
        self.frame_names = naming.check(declare(self, "frame_names", "spot"))
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
            (ClearBehaviorFault, "clear_behavior_fault_by_id",
             lambda r: self.commander.clear_behavior_fault(r.id)),
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
        self.every(0.2, self._publish_command_feedback)
        self._publish_mobility()

        # A new trajectory goal replaces the running one (the robot follows the newest).
        self._trajectory_server = serve(self, Trajectory, "trajectory", self._trajectory_task,
                                        GoalSlot("trajectory", GoalPolicy.PREEMPT),
                                        ReentrantCallbackGroup())
        self._spot_check_server = serve(self, SpotCheck, "spot_check",
                                        lambda goal: SpotCheckTask(self._connection),
                                        GoalSlot("spot_check", GoalPolicy.REJECT),
                                        ReentrantCallbackGroup())
        # Any RobotCommand; the robot itself overrides an older command with a newer one.
        self._any_command_server = serve(self, RobotCommand, "robot_command",
                                         self._any_command_task,
                                         GoalSlot("robot_command", GoalPolicy.PREEMPT),
                                         ReentrantCallbackGroup())

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
        if not (math.isfinite(pose.position.x) and math.isfinite(pose.position.y)):
            self.get_logger().warning("body_pose ignored: position must be finite",
                                      throttle_duration_sec=2.0)
            return
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
    def _trajectory_task(self, goal) -> TrajectoryTask:
        if self._cache.latest() is None:
            raise CommandError("no robot state received yet")
        self._connection.require_lease()
        p, q = goal.target_pose.pose.position, goal.target_pose.pose.orientation
        frame = naming.robot_frame(goal.target_pose.header.frame_id, self.prefix,
                                   self.frame_names)
        return TrajectoryTask(
            self.commander, lambda: self._cache.latest().kinematic_state.transforms_snapshot,
            frame, SE3Pose(p.x, p.y, p.z, Quat(q.w, q.x, q.y, q.z)),
            goal.duration.sec + goal.duration.nanosec * 1e-9,
            precise=goal.precise_positioning,
            avoid_obstacles=not goal.disable_obstacle_avoidance)

    # ------------------------------------------------------------------ any command
    def _any_command_task(self, goal) -> AnyCommandTask:
        state = self._cache.latest()
        if state is None:
            raise CommandError("no robot state received yet")
        self._connection.require_lease()
        return AnyCommandTask(self.commander, lambda: set(
            state.kinematic_state.transforms_snapshot.child_to_parent_edge_map), goal)
