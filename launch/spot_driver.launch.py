"""Launch the Spot driver on a real ROS 2 install (a thin wrapper over the console script).

    ros2 launch spot_driver spot_driver.launch.py hostname:=192.168.80.3 robot_name:=spot1

Credentials come from BOSDYN_CLIENT_USERNAME / BOSDYN_CLIENT_PASSWORD in the environment or
from the file named by the credentials_file parameter in the config file.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription


def _driver(context):
    config = LaunchConfiguration("config_file").perform(context)
    robot_name = LaunchConfiguration("robot_name").perform(context)
    namespace = LaunchConfiguration("namespace").perform(context) or robot_name
    overrides = {}
    hostname = LaunchConfiguration("hostname").perform(context)
    if hostname:
        overrides["hostname"] = hostname
    if robot_name:
        overrides["frame_prefix"] = f"{robot_name}/"
    return [Node(package="spot_driver", executable="spot_driver", namespace=namespace,
                 output="screen", parameters=[config, overrides])]


def generate_launch_description() -> LaunchDescription:
    default_config = os.path.join(get_package_share_directory("spot_driver"), "config",
                                  "spot_driver.yaml")
    return LaunchDescription([
        DeclareLaunchArgument("config_file", default_value=default_config,
                              description="parameter file (see config/spot_driver.yaml)"),
        DeclareLaunchArgument("hostname", default_value="",
                              description="robot address; overrides the config file"),
        DeclareLaunchArgument("robot_name", default_value="",
                              description="namespace and frame prefix for this robot"),
        DeclareLaunchArgument("namespace", default_value="",
                              description="namespace (default: robot_name)"),
        OpaqueFunction(function=_driver),
    ])
