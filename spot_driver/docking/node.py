"""Dock and undock actions, the docking state and the docks and fiducials the robot sees."""

import threading

from bosdyn.api.docking import docking_pb2
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from tf2_msgs.msg import TFMessage

from spot_driver import qos
from spot_driver.capability import DriverContext
from spot_driver.docking import conversions as convert
from spot_driver.docking.commander import DockingCommander, DockingTask, Feedback
from spot_driver.errors import CommandError, describe
from spot_driver.nodes.actions import GoalPolicy, GoalSlot, fill_result, serve
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork
from spot_msgs.action import Dock, Undock
from spot_msgs.msg import DockState, WorldObjectArray


class DockingNode(PeriodicWork, Node):
    """``dock`` / ``undock`` actions, latched ``status/docking``, ``world_objects`` and the
    ``dock_<id>`` / ``fiducial_<id>`` frames on /tf (children of ``tf_root``)."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_docking", namespace=context.namespace)
        self._connection = connection = context.connection
        cache = context.cache
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
        slot = GoalSlot("docking", GoalPolicy.REJECT)
        self._servers = [serve(self, Dock, "dock", self._dock_task, slot, group,
                               result_for=self._result),
                         serve(self, Undock, "undock", self._undock_task, slot, group,
                               result_for=self._result)]
        if state_rate > 0:
            self.every(1.0 / state_rate, self._publish_state)
        if objects_rate > 0:
            self.every(1.0 / objects_rate, self._publish_world_objects)

    def _result(self, result, ending):
        self._publish_state()  # the docking state right after a run, not up to 1 s later
        return fill_result(result, ending)

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
            self._state_pub.publish(convert.dock_state(state, self.get_clock().now().to_msg()))

    def _publish_world_objects(self) -> None:
        try:
            objects = self.docking.world_objects()
        except Exception as exc:
            self.get_logger().warning(f"world objects: {describe(exc)}",
                                      throttle_duration_sec=10.0)
            return
        array, transforms = convert.world_objects(objects, self.root,
                                                   self._connection.skew_nsec, self.prefix)
        if not array.objects:
            array.header.stamp = self.get_clock().now().to_msg()
        self._objects_pub.publish(array)
        if transforms:
            self._tf_pub.publish(TFMessage(transforms=transforms))

    # ------------------------------------------------------------------ actions
    def _dock_task(self, goal) -> DockingTask:
        behavior = goal.prep_pose_behavior or docking_pb2.PREP_POSE_USE_POSE
        if behavior > docking_pb2.PREP_POSE_ONLY_POSE:  # undocking has its own action
            raise CommandError(f"unknown prep_pose_behavior {goal.prep_pose_behavior}")
        wanted = (Feedback.STATUS_AT_PREP_POSE if behavior == docking_pb2.PREP_POSE_ONLY_POSE
                  else Feedback.STATUS_DOCKED)
        return self._task(goal.dock_id, behavior, goal.timeout, wanted)

    def _undock_task(self, goal) -> DockingTask:
        return self._task(0, docking_pb2.PREP_POSE_UNDOCK, goal.timeout,
                          Feedback.STATUS_AT_PREP_POSE)

    def _task(self, dock_id: int, behavior: int, timeout: float, wanted: int) -> DockingTask:
        return DockingTask(self.docking, dock_id, behavior, timeout or self.timeout, wanted)
