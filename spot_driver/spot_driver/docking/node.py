"""Dock and undock actions, the docking state, the world objects the robot knows (docks,
fiducials, user no-go regions), the services that add, change and delete them, and TF frames
pushed to the robot as world objects (``world_object_frames``)."""

import threading
import time

from bosdyn.api.docking import docking_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose
from google.protobuf import text_format
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from tf2_msgs.msg import TFMessage

from spot_driver.conversions import frames
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import CommandError, describe
from spot_driver.description import frame_names as naming
from spot_driver.docking import conversions as convert
from spot_driver.docking import frame_sync, world_objects
from spot_driver.docking.commander import DockingCommander, DockingTask, Feedback
from spot_driver.nodes.actions import GoalPolicy, GoalSlot, fill_result, serve
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork
from spot_driver.nodes.triggers import answer_callback
from spot_msgs.action import Dock, Undock
from spot_msgs.msg import DockState, WorldObjectArray
from spot_msgs.srv import AddNoGoRegion, ListWorldObjects, MutateWorldObject


class DockingNode(PeriodicWork, Node):
    """``dock`` / ``undock`` actions, latched ``status/docking``, ``world_objects`` and the
    ``dock_<id>`` / ``fiducial_<id>`` frames on /tf (children of ``tf_root``)."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_docking", namespace=context.namespace)
        self._connection = connection = context.connection
        self._cache = cache = context.cache
        self.docking = DockingCommander(connection, cache)
        self.timeout = declare(self, "docking_timeout", 60.0)
        state_rate = declare(self, "docking_state_rate", 1.0)
        objects_rate = declare(self, "world_objects_rate", 1.0)
        # the world frame under the TF root (odom under a body root): docks stay put in it
        self.root = frames.odometry_frame(declare(self, "tf_root", "odom"))
        self.prefix = declare(self, "frame_prefix", "")
        self.frame_names = naming.check(declare(self, "frame_names", "spot"))
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
        for srv_type, name, answer in (
                (AddNoGoRegion, "world_objects/add_nogo_region", self._add_nogo_region),
                (MutateWorldObject, "world_objects/mutate", self._mutate),
                (ListWorldObjects, "world_objects/list", self._list)):
            self.create_service(srv_type, name, answer_callback(self.get_logger(), name, answer),
                                qos_profile=qos.SERVICES, callback_group=group)
        pushed = declare(self, "world_object_frames", "")
        self._pushed = [f.strip() for f in pushed.split(",") if f.strip()]
        if self._pushed:
            self._start_frame_sync()

    # ------------------------------------------------------------------ TF -> world objects
    def _start_frame_sync(self) -> None:
        """Follow /tf and /tf_static; push the configured frames every second."""
        self._tf_tree = frame_sync.TransformTree(self.prefix)
        self._pushed_ids: dict[str, int] = {}
        group = MutuallyExclusiveCallbackGroup()
        self.create_subscription(TFMessage, "/tf", lambda m: self._tf_tree.update(m.transforms),
                                 qos.STATE, callback_group=group)
        self.create_subscription(TFMessage, "/tf_static",
                                 lambda m: self._tf_tree.update(m.transforms, static=True),
                                 qos.LATCHED_LISTENER, callback_group=group)
        self.every(1.0, self._push_frames)

    def _push_frames(self) -> None:
        tree = self._world_tree()
        if tree is None:
            return
        now = time.time()
        for frame in self._pushed:
            try:
                if frame in tree.child_to_parent_edge_map:
                    raise CommandError("it is one of the robot's own frames")
                pose = self._tf_tree.lookup(self.root, frame, now)
                obj = frame_sync.drawable(frame, self.root, pose, now)
                self._pushed_ids[frame] = self._push(frame, obj)
            except Exception as exc:
                self.get_logger().warning(f"world_object_frames: {frame!r} not pushed: "
                                          f"{describe(exc)}", throttle_duration_sec=30.0)

    def _push(self, frame: str, obj) -> int:
        """Change the object pushed before; add it again when the robot no longer has it
        (it expired)."""
        known = self._pushed_ids.get(frame)
        try:
            return self.docking.mutate(frame_sync.mutation(obj, known))
        except CommandError:
            if known is None:
                raise
            return self.docking.mutate(frame_sync.mutation(obj, None))

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

    def _world_tree(self):
        state = self._cache.latest()
        return state.kinematic_state.transforms_snapshot if state is not None else None

    def _publish_world_objects(self) -> None:
        try:
            objects = self.docking.world_objects()
        except Exception as exc:
            self.get_logger().warning(f"world objects: {describe(exc)}",
                                      throttle_duration_sec=10.0)
            return
        array, transforms = convert.world_objects(objects, self.root,
                                                   self._connection.skew_nsec, self.prefix,
                                                   self._world_tree())
        if not array.objects:
            array.header.stamp = self.get_clock().now().to_msg()
        self._objects_pub.publish(array)
        if transforms:
            self._tf_pub.publish(TFMessage(transforms=transforms))

    # ------------------------------------------------------------------ world model
    def _add_nogo_region(self, request, response) -> str:
        tree = self._world_tree()
        if tree is None:
            raise CommandError("no robot state received yet")
        frame = naming.robot_frame(request.pose.header.frame_id, self.prefix,
                                   self.frame_names)
        p, q = request.pose.pose.position, request.pose.pose.orientation
        obj = world_objects.nogo_region(
            request.name, tree, frame, SE3Pose(p.x, p.y, p.z, Quat(q.w, q.x, q.y, q.z)),
            request.length, request.width, request.radius,
            request.lifetime.sec + request.lifetime.nanosec * 1e-9,
            body=not request.no_body_obstacle, foot=not request.no_foot_obstacle,
            foot_inflation=not request.no_foot_inflation)
        response.id = self.docking.mutate(world_objects.Request(
            mutation=world_objects.Request.Mutation(action=world_objects.Request.ACTION_ADD,
                                                    object=obj)))
        return f"added no-go region {obj.name!r} (id {response.id})"

    def _mutate(self, request, response) -> str:
        mutation = world_objects.mutation(request.action, bytes(request.object),
                                          request.object_text)
        response.id = self.docking.mutate(mutation)
        return f"{request.action}: world object {response.id}"

    def _list(self, request, response) -> str:
        types = world_objects.object_types(list(request.types)) if request.types else []
        objects = self.docking.world_objects(types)
        response.objects, _ = convert.world_objects(objects, self.root,
                                                    self._connection.skew_nsec, self.prefix,
                                                    self._world_tree())
        response.object_texts = [text_format.MessageToString(o, as_one_line=True)
                                 for o in objects]
        return f"{len(objects)} world objects"

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
