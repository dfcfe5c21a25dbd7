"""Launch the Spot driver, robot_state_publisher for its model and, optionally, RViz.

    ros2 launch spot_driver spot_driver.launch.py hostname:=192.168.80.3 robot_name:=spot1 arm:=true

Credentials come from BOSDYN_CLIENT_USERNAME / BOSDYN_CLIENT_PASSWORD in the environment or
from ``credentials_file`` (never from launch arguments or parameters).
"""

import os

import yaml
from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from spot_common.launch_arguments import strict
from spot_driver.description import frame_names as naming
from spot_driver.description import rviz_config
from spot_driver.description.config_files import rendered_file
from spot_driver.description.robot_model import robot_description
from spot_driver.network.deployment import deployment
from spot_driver.network.ports import DISCOVERY_PORT, MODES
from spot_driver.registry import CAPABILITIES

SHARE = get_package_share_directory("spot_driver")
ARGUMENTS = (
    ("config_file", os.path.join(SHARE, "config", "spot_driver.yaml"),
     "parameter file (see config/spot_driver.yaml)"),
    ("hostname", "", "robot address; overrides the config file"),
    ("port", "", "robot API port; empty: the config file's (0: the standard 443)"),
    ("certificate", "", "CA certificate of the robot; empty: the config file's"),
    ("credentials_file", "", "file with username=/password= lines (else the environment)"),
    ("estop_endpoint", "", "true: register the driver's own e-stop endpoint"),
    ("robot_name", "", "namespace and frame prefix (<robot_name>/) for this robot"),
    ("namespace", "", "namespace (default: robot_name)"),
    ("frame_names", "", "spot (the robot's frame names) or spot_ros2 (spot_ros2's: arm_link_*, "
     "base_link, the rails); empty: the config file's"),
    ("arm", "auto", "the robot has an arm: true, false, or auto (robot_state_publisher starts "
     "without one and the driver hands it the connected robot's model)"),
    ("launch_rsp", "auto", "start robot_state_publisher with the robot's URDF (auto: when "
     "installed; otherwise the driver publishes robot_description itself)"),
    ("launch_rviz", "false", "start RViz with rviz/spot.rviz"),
    ("log_level", "info", "log level of the driver (debug, info, warn, error)"),
    ("publish_depth_points", "", "true: depth/<camera>/points (Nav2's observation sources); "
     "empty: the config file's, or true with launch_rviz:=true (its layout shows them)"),
    ("network", "local", f"DDS network mode: {', '.join(MODES)} (see "
     "doc/across_the_robot.md)"),
    ("robot_ip", "", "payload modes: the robot's address as the operator's computer reaches it"),
    ("discovery_port", str(DISCOVERY_PORT), "payload modes: the discovery server's port "
     "(21000-22000, forwarded by the robot)"),
    ("remote_commands", "true", "payload modes: false keeps services, actions and command "
     "topics reachable only from the payload (telemetry still crosses the link)"),
    ("image_bandwidth", "8", "payload modes: Mbit/s the image and point-cloud topics may use "
     "in all (paced by Fast DDS; 0: no limit); set it below the link's throughput"),
)
# One switch per optional capability, from the driver's registry.
ARGUMENTS += tuple((c.launch_argument, str(c.default_enabled).lower(), c.summary)
                   for c in CAPABILITIES if c.optional)


def _wanted(value: str, package: str) -> bool:
    """A launch flag: true, false, or auto (when ``package`` is installed)."""
    if value.lower() != "auto":
        return value.lower() == "true"
    try:
        get_package_share_directory(package)
        return True
    except PackageNotFoundError:
        return False


def _configured(config_file: str, name: str, default: str) -> str:
    """The driver's ``name`` in ``config_file`` (its ``/**`` section), else ``default``."""
    with open(config_file) as file:
        sections = yaml.safe_load(file) or {}
    return str(sections.get("/**", {}).get("ros__parameters", {}).get(name, default))


def _nodes(context):
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    robot_name = arg("robot_name")
    namespace = arg("namespace") or robot_name
    network = deployment(arg("network"), arg("robot_ip"), int(arg("discovery_port")),
                         processes=4, remote_commands=arg("remote_commands").lower() != "false",
                         namespace=namespace, image_mbit=float(arg("image_bandwidth")))
    prefix = f"{robot_name}/" if robot_name else ""
    launch_rsp = _wanted(arg("launch_rsp"), "robot_state_publisher")
    overrides = {"frame_prefix": prefix, "publish_robot_description": not launch_rsp,
                 "robot_state_publisher": launch_rsp, "network_mode": network.plan.mode,
                 "discovery_port": network.plan.discovery_port,
                 "pace_slow_readers": not network.local}
    for name in ("hostname", "certificate", "credentials_file"):
        if arg(name):
            overrides[name] = arg(name)
    if arg("port"):
        overrides["port"] = int(arg("port"))
    for capability in CAPABILITIES:
        if capability.optional:
            overrides[f"enable_{capability.name}"] = \
                arg(capability.launch_argument).lower() == "true"
    frame_names = arg("frame_names") or _configured(arg("config_file"), "frame_names", "spot")
    overrides["frame_names"] = naming.check(frame_names)
    if arg("publish_depth_points"):
        overrides["publish_depth_points"] = arg("publish_depth_points").lower() == "true"
    elif arg("launch_rviz").lower() == "true":  # rviz/spot.rviz shows the depth points
        overrides["publish_depth_points"] = True
    if arg("estop_endpoint"):
        overrides["estop_endpoint"] = arg("estop_endpoint").lower() == "true"
    nodes = []
    if network.plan.mode == "payload":  # the discovery server first: nodes are its clients
        command, env = network.server_command()
        nodes.append(ExecuteProcess(cmd=command, additional_env=env, output="screen",
                                    name="discovery_server"))
    nodes.append(Node(package="spot_driver", executable="spot_driver", namespace=namespace,
                      output="screen", parameters=[arg("config_file"), overrides],
                      arguments=["--ros-args", "--log-level", arg("log_level")],
                      additional_env=network.environment(0)))
    if overrides.get("enable_low_level"):  # the 333 Hz streams in a process of their own
        nodes.append(Node(package="spot_driver", executable="spot_low_level",
                          namespace=namespace, output="screen",
                          parameters=[arg("config_file"), overrides],
                          arguments=["--ros-args", "--log-level", arg("log_level")],
                          additional_env=network.environment(3)))
    if launch_rsp:
        # arm:=auto: corrected later, by the driver
        urdf = robot_description(arg("arm").lower() == "true", prefix, frame_names)
        nodes.append(Node(package="robot_state_publisher", executable="robot_state_publisher",
                          namespace=namespace, output="screen",
                          parameters=[{"robot_description": urdf}],
                          additional_env=network.environment(1)))
    if arg("launch_rviz").lower() == "true":
        nodes.append(Node(package="rviz2", executable="rviz2", namespace=namespace,
                          arguments=["-d", rendered_file(
                              os.path.join(SHARE, "rviz", "spot.rviz"),
                              lambda text, p: rviz_config.render(
                                  text, p, compressed=not network.local), prefix, ".rviz")],
                          additional_env=network.environment(2)))
    return nodes


def generate_launch_description() -> LaunchDescription:
    return strict(LaunchDescription([
        *[DeclareLaunchArgument(name, default_value=default, description=description)
          for name, default, description in ARGUMENTS],
        OpaqueFunction(function=_nodes),
    ]), __file__)
