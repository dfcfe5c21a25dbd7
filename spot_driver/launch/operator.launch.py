"""RViz on the operator's computer, for robots whose drivers run on their payloads
(``network:=payload`` or ``payload_tcp``; doc/across_the_robot.md).

    ros2 launch spot_driver operator.launch.py robot_ip:=192.168.80.3 robot_name:=spot1

RViz gets the operator's DDS environment (``spot-operator-env``: a super client of the
robot's discovery server, or a TCP client of its processes) and ``rviz/spot.rviz`` for that
robot with its cameras on their compressed topics. Other tools: ``eval "$(ros2 run
spot_driver spot-operator-env ROBOT_IP)"`` in their shell.
"""

import os
import tempfile
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from spot_common.launch_arguments import strict
from spot_driver.description import rviz_config
from spot_driver.description.config_files import rendered_file
from spot_driver.network.operator import environment
from spot_driver.network.ports import DISCOVERY_PORT, MODES

SHARE = get_package_share_directory("spot_driver")


def _rviz(context):
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    robot_name = arg("robot_name")
    prefix = f"{robot_name}/" if robot_name else ""
    env = environment([arg("robot_ip")], arg("network"), int(arg("discovery_port")),
                      Path(tempfile.mkdtemp(prefix="spot_operator_")))
    config = rendered_file(os.path.join(SHARE, "rviz", "spot.rviz"),
                           lambda text, p: rviz_config.render(text, p, compressed=True),
                           prefix, ".rviz")
    return [Node(package="rviz2", executable="rviz2", namespace=robot_name,
                 arguments=["-d", config], additional_env=env)]


def generate_launch_description() -> LaunchDescription:
    return strict(LaunchDescription([
        DeclareLaunchArgument("robot_ip", description="the robot's address (required)"),
        DeclareLaunchArgument("robot_name", default_value="",
                              description="the robot's robot_name (namespace, frame prefix)"),
        DeclareLaunchArgument("network", default_value="payload",
                              description=f"the driver's network mode: {', '.join(MODES[1:])}"),
        DeclareLaunchArgument("discovery_port", default_value=str(DISCOVERY_PORT),
                              description="the driver's discovery_port"),
        OpaqueFunction(function=_rviz),
    ]), __file__)
