"""Nav2 (Jazzy) for Spot and spot_driver: the navigation nodes of nav2_bringup's
``navigation_launch.py`` with ``config/nav2_params.yaml``, in the robot's namespace, frames
with its prefix.

    ros2 launch spot_driver nav2.launch.py [robot_name:=spot1] [params_file:=...]

Started as nav2_bringup 1.3 starts them (controller and behavior server's ``cmd_vel`` to
``cmd_vel_nav``, the velocity smoother's output ``cmd_vel_smoothed`` through the collision
monitor to the driver's ``cmd_vel``), except ``docking_server`` (Spot docks through the driver's
``dock`` action) and ``route_server`` (routes are GraphNav's, the driver's ``graph_nav/*``).
As there, ``use_composition:=True`` (the default) loads them and their lifecycle manager into
one ``nav2_container`` process: its lifecycle calls stay in one DDS participant, where Fast DDS
cannot lose a response the way it does between processes on a loaded host (the manager then
waits for it forever, navigation2#3033); ``use_composition:=False`` starts a process each.
Needs Nav2 (``ros-jazzy-navigation2``). Start it after the driver: with ``point_topics:=auto``
(the default) it looks on the ROS graph for the driver's point clouds (the lidar, the depth
cameras' points with ``publish_depth_points:=true``) and observes those, and says in its log
which topics the collision monitor waits for.
"""

import os
import time
from typing import NamedTuple

import rclpy
from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, TimerAction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import LoadComposableNodes, Node
from launch_ros.descriptions import ComposableNode

from spot_common.launch_arguments import strict
from spot_driver.description import nav2_config
from spot_driver.description.config_files import rendered_file

SHARE = get_package_share_directory("spot_driver")
class Server(NamedTuple):
    """One Nav2 node as nav2_bringup starts it: a process, or a component of the container."""

    package: str
    executable: str
    name: str
    remaps: dict[str, str]
    plugin: str


# In nav2_bringup's order.
NODES = (
    Server("nav2_controller", "controller_server", "controller_server",
           {"cmd_vel": "cmd_vel_nav"}, "nav2_controller::ControllerServer"),
    Server("nav2_smoother", "smoother_server", "smoother_server", {},
           "nav2_smoother::SmootherServer"),
    Server("nav2_planner", "planner_server", "planner_server", {},
           "nav2_planner::PlannerServer"),
    Server("nav2_behaviors", "behavior_server", "behavior_server", {"cmd_vel": "cmd_vel_nav"},
           "behavior_server::BehaviorServer"),
    Server("nav2_bt_navigator", "bt_navigator", "bt_navigator", {},
           "nav2_bt_navigator::BtNavigator"),
    Server("nav2_waypoint_follower", "waypoint_follower", "waypoint_follower", {},
           "nav2_waypoint_follower::WaypointFollower"),
    Server("nav2_velocity_smoother", "velocity_smoother", "velocity_smoother",
           {"cmd_vel": "cmd_vel_nav"}, "nav2_velocity_smoother::VelocitySmoother"),
    Server("nav2_collision_monitor", "collision_monitor", "collision_monitor", {},
           "nav2_collision_monitor::CollisionMonitor"),
)
MANAGER = Server("nav2_lifecycle_manager", "lifecycle_manager", "lifecycle_manager_navigation",
                 {}, "nav2_lifecycle_manager::LifecycleManager")
CONTAINER = "nav2_container"
LOAD_DELAY_S = 2.0  # see _nodes: the container's discovery of this launch, before its load
NOT_STARTED = {"docking_server": "Spot docks through the driver's dock action",
               "route_server": "routes are GraphNav's (graph_nav/navigate_route)"}


def _graph_topics(namespace: str, timeout: float) -> set[str]:
    """The topics on the ROS graph once the driver's perception node is up in ``namespace``
    (empty after ``timeout`` s without it)."""
    context = rclpy.Context()
    rclpy.init(args=[], context=context)  # not sys.argv: the launch's own arguments
    try:
        node = rclpy.create_node("nav2_launch_probe", context=context,
                                 start_parameter_services=False)
        ns = "/" + namespace.strip("/") if namespace.strip("/") else "/"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ("spot_perception", ns) in node.get_node_names_and_namespaces():
                time.sleep(2.0)  # its publishers are made while it starts
                return {name for name, _ in node.get_topic_names_and_types()}
            time.sleep(0.2)
        return set()
    finally:
        rclpy.shutdown(context=context)


def _point_topics(arg, namespace: str) -> tuple[set[str], str]:
    chosen = arg("point_topics")
    if chosen != "auto":
        topics = {t.strip() for t in chosen.split(",") if t.strip()}
        return topics, f"Nav2 observes {sorted(topics)} (point_topics)"
    return nav2_config.choose_point_topics(
        _graph_topics(namespace, float(arg("driver_timeout"))), namespace)


def _nodes(context):
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    robot_name = arg("robot_name")
    namespace = arg("namespace") or robot_name
    point_topics, sentence = _point_topics(arg, namespace)
    params = rendered_file(
        arg("params_file"),
        lambda text, prefix: nav2_config.render(text, prefix, namespace, point_topics),
        f"{robot_name}/" if robot_name else "", ".yaml")
    # /tf is global (frames carry the robot's prefix), as the driver publishes it
    remap_tf = [("/tf", "/tf"), ("/tf_static", "/tf_static")]
    manager = {"autostart": True, "node_names": [server.name for server in NODES]}

    def parameters(server: Server) -> list:
        return [params, manager if server == MANAGER else {"autostart": True}]

    log_level = ["--ros-args", "--log-level", arg("log_level")]
    if arg("use_composition").lower() != "true":
        return [LogInfo(msg=sentence)] + [
            Node(package=server.package, executable=server.executable, name=server.name,
                 namespace=namespace, output="screen", parameters=parameters(server),
                 remappings=remap_tf + list(server.remaps.items()), arguments=log_level)
            for server in (*NODES, MANAGER)]
    # The container takes the file too: the costmaps are nodes the servers make, which read
    # the process's own --params-file.
    container = Node(package="rclcpp_components", executable="component_container_isolated",
                     name=CONTAINER, namespace=namespace, output="screen",
                     parameters=[params, {"autostart": True}], remappings=remap_tf,
                     arguments=log_level)
    load = LoadComposableNodes(
        target_container=nav2_config.absolute(CONTAINER, namespace),
        composable_node_descriptions=[
            ComposableNode(package=server.package, plugin=server.plugin, name=server.name,
                           namespace=namespace, parameters=parameters(server),
                           remappings=remap_tf + list(server.remaps.items()))
            for server in (*NODES, MANAGER)])
    # The load waits until the container's process has run a while: launch_ros calls its
    # load_node service as soon as it is listed, and a container that has not yet matched the
    # launch's reply reader drops the answer ("failed to send response ... client will not
    # receive response"), leaving launch waiting forever with one server loaded (a CI-like
    # run, stop 68). LOAD_DELAY_S is discovery's time on a loaded 2-core host [ours].
    return [LogInfo(msg=sentence), container, TimerAction(period=LOAD_DELAY_S, actions=[load])]


def generate_launch_description() -> LaunchDescription:
    return strict(LaunchDescription([
        DeclareLaunchArgument("robot_name", default_value="",
                              description="the driver's robot_name (namespace, frame prefix)"),
        DeclareLaunchArgument("namespace", default_value="",
                              description="namespace (default: robot_name)"),
        DeclareLaunchArgument("params_file",
                              default_value=os.path.join(SHARE, "config", "nav2_params.yaml"),
                              description="Nav2 parameters (see config/nav2_params.yaml)"),
        DeclareLaunchArgument("point_topics", default_value="auto",
                              description="point clouds to observe, relative to the namespace "
                              "(comma-separated), or auto: the driver's, from the ROS graph"),
        DeclareLaunchArgument("driver_timeout", default_value="30.0",
                              description="s to wait for the driver (point_topics:=auto)"),
        DeclareLaunchArgument("use_composition", default_value="True",
                              description="the servers as components of one nav2_container "
                              "process (True, as nav2_bringup), or a process each (False)"),
        DeclareLaunchArgument("log_level", default_value="info", description="log level"),
        OpaqueFunction(function=_nodes),
    ]), __file__)
