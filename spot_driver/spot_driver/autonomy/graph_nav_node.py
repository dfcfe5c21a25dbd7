"""GraphNav: navigation actions, map and recording services, ``map -> odom`` on /tf, the
localization, and the map drawn for RViz (graph markers and snapshot points, latched)."""

import time

from geometry_msgs.msg import PoseWithCovarianceStamped
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import PointCloud2
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from spot_driver.autonomy import graph_nav_conversions as convert
from spot_driver.autonomy.graph_nav import GraphNavigator, NavigationTask
from spot_driver.conversions.sensor_cdr import point_cloud2_cdr
from spot_driver.conversions.time import robot_stamp_to_msg
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import CommandError, describe
from spot_driver.description import frame_names as naming
from spot_driver.diagnostics import status as diagnostics
from spot_driver.nodes.actions import GoalPolicy, GoalSlot, serve
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork
from spot_driver.nodes.triggers import answer, trigger_callback
from spot_msgs.action import NavigateRoute, NavigateTo
from spot_msgs.srv import CreateWaypoint, MapDirectory, SetLocalization

POLL_S = 0.1
MAP_CHECK_S = 5.0  # how often the map is checked for changes made by anyone


class GraphNavNode(PeriodicWork, Node):
    """``graph_nav/*`` actions and services; ``map -> odom`` and ``graph_nav/localization``
    at ``localization_rate``; ``graph_nav/graph`` and ``graph_nav/cloud`` latched."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_graph_nav", namespace=context.namespace)
        self._connection = connection = context.connection
        self._cache = cache = context.cache
        window = declare(self, "navigation_command_window", 3.0)
        self.nav = GraphNavigator(connection, cache, window)
        self.timeout = declare(self, "navigation_timeout", 300.0)
        rate = declare(self, "localization_rate", 5.0)
        prefix = declare(self, "frame_prefix", "")
        self.map_frame = prefix + (declare(self, "map_frame", "") or naming.map_frame(
            naming.check(declare(self, "frame_names", "spot"))))
        # map is the parent of the TF tree's root (tf_root: odom, vision, or body as spot_ros2),
        # never of a frame that already has one
        self.root = declare(self, "tf_root", "odom")
        self.odom_frame = prefix + self.root
        self._publish_cloud = declare(self, "publish_map_cloud", True)
        self._tf_pub = self.create_publisher(TFMessage, "/tf", qos.STATE)
        self._pose_pub = self.create_publisher(PoseWithCovarianceStamped,
                                               "graph_nav/localization", qos.STATE)
        self._graph_pub = self.create_publisher(MarkerArray, "graph_nav/graph", qos.LATCHED)
        self._cloud_pub = self.create_publisher(PointCloud2, "graph_nav/cloud", qos.LATCHED)
        self._drawn_graph: bytes | None = None
        self._localized_at, self._map_waypoints, self._localized_time = "", 0, None
        group = ReentrantCallbackGroup()
        slot = GoalSlot("navigation", GoalPolicy.REJECT)
        self._servers = [serve(self, NavigateTo, "graph_nav/navigate_to", self._to, slot, group),
                         serve(self, NavigateRoute, "graph_nav/navigate_route", self._route,
                               slot, group)]
        log = self.get_logger()
        for srv_type, name, callback in (
                (MapDirectory, "graph_nav/upload_map", self._upload),
                (MapDirectory, "graph_nav/download_map", self._download),
                (SetLocalization, "graph_nav/set_localization", self._set_localization),
                (CreateWaypoint, "graph_nav/recording/create_waypoint", self._create_waypoint),
                (Trigger, "graph_nav/clear_map", trigger_callback(log, "clear_map", self._clear)),
                (Trigger, "graph_nav/recording/start",
                 trigger_callback(log, "recording/start", self._start_recording)),
                (Trigger, "graph_nav/recording/stop",
                 trigger_callback(log, "recording/stop", self._stop_recording))):
            self.create_service(srv_type, name, callback, qos_profile=qos.SERVICES,
                                callback_group=group)
        if rate > 0:
            self.every(1.0 / rate, self._publish_localization)
        self.every(MAP_CHECK_S, self.refresh_map)
        context.health.append(self.localization_status)

    # ------------------------------------------------------------------ streams
    def _publish_localization(self) -> None:
        try:
            state = self.nav.state()
        except Exception as exc:
            self.get_logger().warning(f"localization: {describe(exc)}",
                                      throttle_duration_sec=10.0)
            return
        self._localized_at = state.localization.waypoint_id
        self._localized_time = time.monotonic()
        latest = self._cache.latest()
        fix = convert.localization_at(state, latest.kinematic_state if latest else None,
                                      self.root)
        if fix is None:
            return
        stamp = robot_stamp_to_msg(fix.timestamp, self._connection.skew_nsec)
        self._tf_pub.publish(TFMessage(transforms=[convert.map_to_odom_transform(
            fix.map_tform_root, stamp, self.map_frame, self.odom_frame)]))
        self._pose_pub.publish(convert.localization_pose(fix.map_tform_body, stamp,
                                                         self.map_frame))

    def refresh_map(self) -> None:
        """Redraw the map (latched) when it changed since it was last drawn."""
        try:
            graph = self.nav.graph()
            serialized = graph.SerializeToString()
            if serialized == self._drawn_graph:
                return
            stamp = self.get_clock().now().to_msg()
            self._graph_pub.publish(convert.graph_markers(graph, stamp, self.map_frame))
            if self._publish_cloud:
                points = convert.snapshot_points(graph, self.nav.waypoint_snapshots(graph))
                self._cloud_pub.publish(point_cloud2_cdr(
                    self.get_clock().now().nanoseconds, self.map_frame, points))
            self._drawn_graph, self._map_waypoints = serialized, len(graph.waypoints)
        except Exception as exc:
            self.get_logger().warning(f"map: {describe(exc)}", throttle_duration_sec=30.0)

    def localization_status(self, prefix: str, hw: str):
        age = (float("inf") if self._localized_time is None
               else time.monotonic() - self._localized_time)
        return diagnostics.localization(prefix, hw, self._localized_at, self._map_waypoints, age)

    # ------------------------------------------------------------------ services
    def _upload(self, request, response):
        def fill() -> str:
            graph = self.nav.upload(request.directory)
            response.waypoints, response.edges = len(graph.waypoints), len(graph.edges)
            return f"uploaded {len(graph.waypoints)} waypoints"
        answer(self.get_logger(), "upload_map", response, fill)
        self.refresh_map()
        return response

    def _download(self, request, response):
        def fill() -> str:
            graph = self.nav.download(request.directory).graph
            response.waypoints, response.edges = len(graph.waypoints), len(graph.edges)
            return f"wrote {len(graph.waypoints)} waypoints to {request.directory}"
        return answer(self.get_logger(), "download_map", response, fill)

    def _clear(self) -> str:
        self.nav.clear()
        self.refresh_map()
        return "map cleared"

    def _set_localization(self, request, response):
        def fill() -> str:
            if request.method == SetLocalization.Request.WAYPOINT:
                localization = self.nav.localize_waypoint(
                    request.waypoint_id, convert.pose_from_msg(request.waypoint_tform_body))
            elif request.method == SetLocalization.Request.FIDUCIAL_SPECIFIC:
                if request.fiducial_id <= 0:
                    raise CommandError("FIDUCIAL_SPECIFIC needs a positive fiducial_id")
                localization = self.nav.localize_fiducial(request.fiducial_id)
            elif request.method == SetLocalization.Request.FIDUCIAL_NEAREST:
                localization = self.nav.localize_fiducial()
            else:
                raise CommandError(f"unknown localization method {request.method}")
            response.waypoint_id = localization.waypoint_id
            return f"localized at waypoint {localization.waypoint_id}"
        answer(self.get_logger(), "set_localization", response, fill)
        self._publish_localization()
        return response

    def _start_recording(self) -> str:
        waypoint = self.nav.start_recording()
        self.refresh_map()
        return f"recording; first waypoint {waypoint}"

    def _stop_recording(self) -> str:
        self.nav.stop_recording()
        self.refresh_map()
        return "recording stopped"

    def _create_waypoint(self, request, response):
        def fill() -> str:
            response.waypoint_id = self.nav.create_waypoint(request.name)
            return f"created {response.waypoint_id}"
        answer(self.get_logger(), "create_waypoint", response, fill)
        self.refresh_map()
        return response

    # ------------------------------------------------------------------ actions
    def _to(self, goal) -> NavigationTask:
        if goal.waypoint_id:
            def send(command_id):
                return self.nav.navigate_to(goal.waypoint_id, command_id)
        else:
            frame = goal.goal_pose.header.frame_id
            if frame and frame != self.map_frame:
                raise CommandError(f"goal_pose must be in {self.map_frame!r}, not {frame!r}")
            pose = convert.pose_from_msg(goal.goal_pose.pose)

            def send(command_id):
                return self.nav.navigate_to_pose(pose, command_id)
        return NavigationTask(self.nav, send, goal.timeout or self.timeout)

    def _route(self, goal) -> NavigationTask:
        waypoints = list(goal.waypoint_ids)
        return NavigationTask(
            self.nav, lambda command_id: self.nav.navigate_route(waypoints, command_id),
            goal.timeout or self.timeout)
