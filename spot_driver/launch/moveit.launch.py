"""MoveIt's move_group for Spot's arm, executing on the driver's actions (needs MoveIt 2).

Start the driver first (spot_driver.launch.py with arm:=true), then:

    ros2 launch spot_driver moveit.launch.py [robot_name:=spot1] [launch_rviz:=true]

Planning group "arm" (body -> hand) and "gripper"; trajectories go to
arm_controller/follow_joint_trajectory, gripper goals to gripper_controller/gripper_cmd.
"""

import os

import yaml
from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from spot_common.launch_arguments import strict
from spot_driver.description import moveit_config, rviz_config
from spot_driver.description.config_files import rendered_file
from spot_driver.description.robot_model import robot_description

SHARE = get_package_share_directory("spot_driver")
MOVEIT = os.path.join(SHARE, "config", "moveit")
SRDF = os.path.join(get_package_share_directory("spot_description"), "srdf", "spot.srdf")


def _load_file(path: str) -> dict:
    with open(path) as file:
        return yaml.safe_load(file)


def _load(name: str) -> dict:
    return _load_file(os.path.join(MOVEIT, name))


def _nodes(context):
    robot_name = LaunchConfiguration("robot_name").perform(context)
    namespace = robot_name
    prefix = f"{robot_name}/" if robot_name else ""
    frame_names = LaunchConfiguration("frame_names").perform(context)
    tf_root = LaunchConfiguration("tf_root").perform(context)
    with open(SRDF) as file:
        srdf = moveit_config.srdf(file.read(), prefix, tf_root, frame_names)
    parameters = {
        "robot_description": robot_description(True, prefix, frame_names),
        "robot_description_semantic": srdf,
        "robot_description_kinematics": _load("kinematics.yaml"),
        "robot_description_planning": moveit_config.joint_limits(_load("joint_limits.yaml"),
                                                                 prefix),
        "planning_pipelines": ["ompl"],
        "default_planning_pipeline": "ompl",
        "ompl": moveit_config.ompl(_load("ompl_planning.yaml"), prefix),
        "publish_robot_description_semantic": True,
        **moveit_config.controllers(
            _load_file(LaunchConfiguration("controllers_file").perform(context)), prefix),
        **moveit_config.octomap(prefix, tf_root),
    }
    nodes = [Node(package="moveit_ros_move_group", executable="move_group",
                  namespace=namespace, output="screen", parameters=[parameters])]
    if LaunchConfiguration("launch_rviz").perform(context).lower() == "true":
        config = rendered_file(os.path.join(MOVEIT, "moveit.rviz"), rviz_config.render, prefix,
                               ".rviz")
        nodes.append(Node(package="rviz2", executable="rviz2", namespace=namespace,
                          arguments=["-d", config], parameters=[parameters]))
    return nodes


def generate_launch_description() -> LaunchDescription:
    return strict(LaunchDescription([
        DeclareLaunchArgument("robot_name", default_value="",
                              description="the driver's robot_name (namespace and prefix)"),
        DeclareLaunchArgument("tf_root", default_value="odom",
                              description="the driver's tf_root (the virtual joint's parent)"),
        DeclareLaunchArgument("frame_names", default_value="spot",
                              description="the driver's frame_names (spot or spot_ros2)"),
        DeclareLaunchArgument("controllers_file",
                              default_value=os.path.join(MOVEIT, "moveit_controllers.yaml"),
                              description="MoveIt's controllers (the driver's actions by "
                                          "default)"),
        DeclareLaunchArgument("launch_rviz", default_value="false",
                              description="start RViz with the MotionPlanning panel"),
        OpaqueFunction(function=_nodes),
    ]), __file__)
