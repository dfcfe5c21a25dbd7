"""Nav2 (Jazzy) for Spot and spot_driver: the navigation nodes of nav2_bringup's
``navigation_launch.py`` with ``config/nav2_params.yaml``, in the robot's namespace, frames
with its prefix.

    ros2 launch spot_driver nav2.launch.py [robot_name:=spot1] [params_file:=...]

Started as nav2_bringup 1.3 starts them (controller and behavior server's ``cmd_vel`` to
``cmd_vel_nav``, the velocity smoother's output ``cmd_vel_smoothed`` through the collision
monitor to the driver's ``cmd_vel``), except ``docking_server`` (Spot docks through the driver's
``dock`` action) and ``route_server`` (routes are GraphNav's, the driver's ``graph_nav/*``).
Needs Nav2 (``ros-jazzy-navigation2``) and the driver running with
``publish_depth_points:=true`` for the depth cameras' points.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription
from spot_driver.description import nav2_config
from spot_driver.description.config_files import rendered_file

SHARE = get_package_share_directory("spot_driver")
# (package, executable, node name, remappings), in nav2_bringup's order.
NODES = (
    ("nav2_controller", "controller_server", "controller_server", {"cmd_vel": "cmd_vel_nav"}),
    ("nav2_smoother", "smoother_server", "smoother_server", {}),
    ("nav2_planner", "planner_server", "planner_server", {}),
    ("nav2_behaviors", "behavior_server", "behavior_server", {"cmd_vel": "cmd_vel_nav"}),
    ("nav2_bt_navigator", "bt_navigator", "bt_navigator", {}),
    ("nav2_waypoint_follower", "waypoint_follower", "waypoint_follower", {}),
    ("nav2_velocity_smoother", "velocity_smoother", "velocity_smoother",
     {"cmd_vel": "cmd_vel_nav"}),
    ("nav2_collision_monitor", "collision_monitor", "collision_monitor", {}),
)
NOT_STARTED = {"docking_server": "Spot docks through the driver's dock action",
               "route_server": "routes are GraphNav's (graph_nav/navigate_route)"}


def _nodes(context):
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    robot_name = arg("robot_name")
    namespace = arg("namespace") or robot_name
    params = rendered_file(arg("params_file"), nav2_config.render,
                           f"{robot_name}/" if robot_name else "", ".yaml")
    # /tf is global (frames carry the robot's prefix), as the driver publishes it
    remap_tf = [("/tf", "/tf"), ("/tf_static", "/tf_static")]
    nodes = [Node(package=package, executable=executable, name=name, namespace=namespace,
                  output="screen", parameters=[params, {"autostart": True}],
                  remappings=remap_tf + list(remaps.items()),
                  arguments=["--ros-args", "--log-level", arg("log_level")])
             for package, executable, name, remaps in NODES]
    nodes.append(Node(package="nav2_lifecycle_manager", executable="lifecycle_manager",
                      name="lifecycle_manager_navigation", namespace=namespace, output="screen",
                      parameters=[{"autostart": True,
                                   "node_names": [name for _, _, name, _ in NODES]}]))
    return nodes


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([
        DeclareLaunchArgument("robot_name", default_value="",
                              description="the driver's robot_name (namespace, frame prefix)"),
        DeclareLaunchArgument("namespace", default_value="",
                              description="namespace (default: robot_name)"),
        DeclareLaunchArgument("params_file",
                              default_value=os.path.join(SHARE, "config", "nav2_params.yaml"),
                              description="Nav2 parameters (see config/nav2_params.yaml)"),
        DeclareLaunchArgument("log_level", default_value="info", description="log level"),
        OpaqueFunction(function=_nodes),
    ])
