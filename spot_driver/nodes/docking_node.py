"""Dock and undock actions, the docking state and the docks and fiducials the robot sees."""

import threading
import time

from bosdyn.api import world_object_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.client.world_object import WorldObjectClient
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from tf2_msgs.msg import TFMessage

from spot_driver import qos
from spot_driver.connection import RobotConnection
from spot_driver.conversions import autonomy
from spot_driver.docking import IN_PROGRESS, DockingCommander, feedback_name
from spot_driver.errors import describe
from spot_driver.nodes.parameters import declare
from spot_driver.state_cache import RobotStateCache
from spot_msgs.action import Dock, Undock
from spot_msgs.msg import DockState, WorldObjectArray

POLL_S = 0.1
_OBJECT_TYPES = [world_object_pb2.WORLD_OBJECT_DOCK, world_object_pb2.WORLD_OBJECT_APRILTAG]


class DockingNode(Node):
    """``dock`` / ``undock`` actions, latched ``status/docking``, ``world_objects`` and the
    ``dock_<id>`` / ``fiducial_<id>`` frames on /tf (children of ``tf_root``)."""

    def __init__(self, connection: RobotConnection, cache: RobotStateCache,
                 namespace: str = "") -> None:
        super().__init__("spot_docking", namespace=namespace)
        self._connection = connection
        self.docking = DockingCommander(connection, cache)
        self.timeout = declare(self, "docking_timeout", 60.0)
        state_rate = declare(self, "docking_state_rate", 1.0)
        objects_rate = declare(self, "world_objects_rate", 1.0)
        self.root = declare(self, "tf_root", "odom")
        self.prefix = declare(self, "frame_prefix", "")
        self._state_pub = self.create_publisher(DockState, "status/docking", qos.LATCHED)
        self._objects_pub = self.create_publisher(WorldObjectArray, "world_objects", qos.STREAM)
        self._tf_pub = self.create_publisher(TFMessage, "/tf", qos.STATE)
        self._last_state: docking_pb2.DockState | None = None
        self._state_lock = threading.Lock()
        group = ReentrantCallbackGroup()
        self._servers = [
            ActionServer(self, action_type, name, execute_callback=execute,
                         goal_callback=lambda goal: GoalResponse.ACCEPT,
                         cancel_callback=lambda goal: CancelResponse.ACCEPT,
                         **qos.ACTION_SERVER, callback_group=group)
            for action_type, name, execute in ((Dock, "dock", self._dock),
                                               (Undock, "undock", self._undock))]
        if state_rate > 0:
            self.create_timer(1.0 / state_rate, self._publish_state,
                              callback_group=MutuallyExclusiveCallbackGroup())
        if objects_rate > 0:
            self.create_timer(1.0 / objects_rate, self._publish_world_objects,
                              callback_group=MutuallyExclusiveCallbackGroup())

    # ------------------------------------------------------------------ streams
    def _publish_state(self) -> None:
        try:
            state = self.docking.state()
        except Exception as exc:
            self.get_logger().warning(f"docking state: {describe(exc)}",
                                      throttle_duration_sec=10.0)
            return
        with self._state_lock:
            if state == self._last_state:
                return  # latched: publish changes only
            self._last_state = state
            self._state_pub.publish(autonomy.dock_state(state, self.get_clock().now().to_msg()))

    def _publish_world_objects(self) -> None:
        try:
            client = self._connection.client(WorldObjectClient)
            objects = client.list_world_objects(object_type=_OBJECT_TYPES).world_objects
        except Exception as exc:
            self.get_logger().warning(f"world objects: {describe(exc)}",
                                      throttle_duration_sec=10.0)
            return
        array, transforms = autonomy.world_objects(objects, self.root,
                                                   self._connection.skew_nsec, self.prefix)
        if not array.objects:
            array.header.stamp = self.get_clock().now().to_msg()
        self._objects_pub.publish(array)
        if transforms:
            self._tf_pub.publish(TFMessage(transforms=transforms))

    # ------------------------------------------------------------------ actions
    def _dock(self, goal_handle):
        goal = goal_handle.request
        behavior = goal.prep_pose_behavior or docking_pb2.PREP_POSE_USE_POSE
        wanted = (docking_pb2.DockingCommandFeedbackResponse.STATUS_AT_PREP_POSE
                  if behavior == docking_pb2.PREP_POSE_ONLY_POSE
                  else docking_pb2.DockingCommandFeedbackResponse.STATUS_DOCKED)
        if behavior > docking_pb2.PREP_POSE_ONLY_POSE:  # undocking has its own action
            goal_handle.abort()
            return Dock.Result(success=False,
                               message=f"unknown prep_pose_behavior {goal.prep_pose_behavior}")
        return self._run(goal_handle, Dock, goal.dock_id, behavior, goal.timeout, wanted)

    def _undock(self, goal_handle):
        return self._run(goal_handle, Undock, 0, docking_pb2.PREP_POSE_UNDOCK,
                         goal_handle.request.timeout,
                         docking_pb2.DockingCommandFeedbackResponse.STATUS_AT_PREP_POSE)

    def _run(self, goal_handle, action_type, dock_id: int, behavior: int, timeout: float,
             wanted: int):
        result = action_type.Result()
        timeout = timeout or self.timeout
        try:
            command_id = self.docking.start(dock_id, behavior, timeout)
        except Exception as exc:
            result.success, result.message = False, describe(exc)
            self.get_logger().warning(f"{action_type.__name__.lower()}: {result.message}")
            goal_handle.abort()
            return result
        deadline = time.monotonic() + timeout + 5.0
        last = None
        try:
            while True:
                if goal_handle.is_cancel_requested:
                    self.docking.stop()
                    goal_handle.canceled()
                    result.status = feedback_name(last or IN_PROGRESS)
                    result.message = "canceled: the robot stopped"
                    return result
                status = self.docking.feedback(command_id)
                if status != last:
                    goal_handle.publish_feedback(action_type.Feedback(
                        status=feedback_name(status)))
                    last = status
                if status != IN_PROGRESS:
                    break
                if time.monotonic() > deadline:
                    self.docking.stop()
                    result.status, result.message = feedback_name(status), "timed out"
                    goal_handle.abort()
                    return result
                time.sleep(POLL_S)
        except Exception as exc:
            result.success, result.message = False, describe(exc)
            goal_handle.abort()
            return result
        finally:
            self._publish_state()
        result.status = feedback_name(last)
        result.success = last == wanted
        if result.success:
            at_prep = wanted == docking_pb2.DockingCommandFeedbackResponse.STATUS_AT_PREP_POSE
            result.message = "at the prep pose" if at_prep else "docked"
            goal_handle.succeed()
        else:
            result.message = f"{action_type.__name__.lower()} failed: {result.status}"
            goal_handle.abort()
        return result
