"""The simulated Spot and the driver connected to it, in one launch (what `make run` starts).

    ros2 launch spot_sim spot_sim.launch.py [arm:=true] [lidar:=false] [color_cameras:=true]
        [robot_name:=spot1] [port:=0] [sim_profile:=field]

The robot listens on 127.0.0.1 (a free port unless `port` is given) with its CA in
`certs_dir`; the driver gets that port and CA. The robot's password is SPOT_SIM_PASSWORD when
set, otherwise a random one for this run, handed to the driver through its environment (never
a parameter or a launch argument). Every argument of spot_driver.launch.py is accepted too.
"""

import os
import secrets
import socket
import sys

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    ExecuteProcess,
    GroupAction,
    IncludeLaunchDescription,
    OpaqueFunction,
    RegisterEventHandler,
    SetEnvironmentVariable,
)
from launch.event_handlers import OnProcessIO
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration

from spot_driver.core.launch_arguments import strict
from spot_driver.registry import CAPABILITIES
from spot_sim.core.hardware import OPTIONS as HARDWARE

SHARE = get_package_share_directory("spot_driver")
SWITCHES = tuple(c.launch_argument for c in CAPABILITIES if c.optional)
DRIVER_ARGUMENTS = ("robot_name", "namespace", "frame_names", "launch_rsp", "launch_rviz",
                    "log_level",
                    "config_file", "publish_depth_points", "network", "robot_ip",
                    "discovery_port", "remote_commands", "image_bandwidth", *SWITCHES)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _robot_and_driver(context):
    def arg(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    port = int(arg("port")) or _free_port()
    certs = os.path.abspath(os.path.expanduser(arg("certs_dir")))
    username = os.environ.get("SPOT_SIM_USERNAME", "user")
    password = os.environ.get("SPOT_SIM_PASSWORD") or secrets.token_urlsafe(18)
    robot_env = {"SPOT_SIM_USERNAME": username, "SPOT_SIM_PASSWORD": password,
                 "PYTHONUNBUFFERED": "1"}
    sim_args = [sys.executable, "-m", "spot_sim", "--port", str(port), "--certs-dir", certs,
                "--profile", arg("sim_profile")]
    for option in HARDWARE:
        fitted = arg(option.name).lower() == "true"
        sim_args.append(f"--{option.flag}" if fitted else f"--no-{option.flag}")
    robot = ExecuteProcess(cmd=sim_args, name="spot_sim", output="screen",
                           additional_env=robot_env, sigterm_timeout="5")
    driver_arguments = {name: arg(name) for name in DRIVER_ARGUMENTS}
    driver_arguments.update(hostname="127.0.0.1", port=str(port),
                            certificate=os.path.join(certs, "ca.crt"), estop_endpoint="true",
                            arm=arg("arm"))
    # The driver's credentials: its environment only, scoped to this robot's driver.
    driver = GroupAction(scoped=True, actions=[
        SetEnvironmentVariable("BOSDYN_CLIENT_USERNAME", username),
        SetEnvironmentVariable("BOSDYN_CLIENT_PASSWORD", password),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(SHARE, "launch", "spot_driver.launch.py")),
            launch_arguments=driver_arguments.items())])
    started = []

    def start_driver_once_listening(event):
        if not started and b"listening on" in event.text:
            started.append(True)
            return [driver]
        return None

    return [RegisterEventHandler(OnProcessIO(target_action=robot,
                                             on_stdout=start_driver_once_listening)), robot]


def generate_launch_description() -> LaunchDescription:
    driver_defaults = {"robot_name": "", "namespace": "", "frame_names": "",
                       "launch_rsp": "auto",
                       "launch_rviz": "false", "log_level": "info", "publish_depth_points": "",
                       "config_file": os.path.join(SHARE, "config", "spot_driver.yaml"),
                       "network": "local", "robot_ip": "", "discovery_port": "21811",
                       "remote_commands": "true", "image_bandwidth": "8",
                       **{c.launch_argument: str(c.default_enabled).lower()
                          for c in CAPABILITIES if c.optional}}
    return strict(LaunchDescription([
        DeclareLaunchArgument("port", default_value="0",
                              description="port of the simulated robot on 127.0.0.1 (0: free)"),
        DeclareLaunchArgument("certs_dir", default_value=os.path.join("~", ".spot_sim_certs"),
                              description="where the simulated robot keeps its CA"),
        *[DeclareLaunchArgument(option.name, default_value=str(option.default).lower(),
                                description=f"the simulated robot has {option.help}")
          for option in HARDWARE],
        DeclareLaunchArgument("sim_profile", default_value="default",
                              description="default (deterministic) or field (a robot on Wi-Fi)"),
        *[DeclareLaunchArgument(name, default_value=value,
                                description="passed to spot_driver.launch.py")
          for name, value in driver_defaults.items()],
        OpaqueFunction(function=_robot_and_driver),
    ]), __file__)
