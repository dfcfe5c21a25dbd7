"""The simulated Spot and the driver connected to it, in one launch (what `make run` starts).

    ros2 launch spot_sim spot_sim.launch.py [arm:=true] [lidar:=false] [color_cameras:=true]
        [robot_name:=spot1] [port:=0] [sim_profile:=field]

The robot listens on 127.0.0.1 (a free port unless `port` is given) with its CA in
`certs_dir`; the driver gets that port and CA. The robot's password is SPOT_SIM_PASSWORD when
set, otherwise a random one for this run, handed to the driver through its environment (never
a parameter or a launch argument). Every argument of spot_driver.launch.py is accepted too, but
those this launch sets (the robot's address, port, CA, credentials, e-stop endpoint, arm): they
are read from that file, found by package name, so nothing of the driver is imported here.
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

from spot_common.launch_arguments import strict
from spot_sim.core.hardware import OPTIONS as HARDWARE

DRIVER_LAUNCH = os.path.join(get_package_share_directory("spot_driver"), "launch",
                             "spot_driver.launch.py")
SET_HERE = ("hostname", "port", "certificate", "credentials_file", "estop_endpoint", "arm")


def driver_arguments() -> list[DeclareLaunchArgument]:
    """The driver launch's own arguments (from its file), but those this launch sets."""
    driver = PythonLaunchDescriptionSource(DRIVER_LAUNCH)
    return [argument for argument in
            driver.try_get_launch_description_without_context().get_launch_arguments()
            if argument.name not in SET_HERE]


DRIVER_ARGUMENTS = driver_arguments()


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
    forwarded = {argument.name: arg(argument.name) for argument in DRIVER_ARGUMENTS}
    forwarded.update(hostname="127.0.0.1", port=str(port),
                            certificate=os.path.join(certs, "ca.crt"), estop_endpoint="true",
                            arm=arg("arm"))
    # The driver's credentials: its environment only, scoped to this robot's driver.
    driver = GroupAction(scoped=True, actions=[
        SetEnvironmentVariable("BOSDYN_CLIENT_USERNAME", username),
        SetEnvironmentVariable("BOSDYN_CLIENT_PASSWORD", password),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(DRIVER_LAUNCH),
            launch_arguments=forwarded.items())])
    started = []

    def start_driver_once_listening(event):
        if not started and b"listening on" in event.text:
            started.append(True)
            return [driver]
        return None

    return [RegisterEventHandler(OnProcessIO(target_action=robot,
                                             on_stdout=start_driver_once_listening)), robot]


def generate_launch_description() -> LaunchDescription:
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
        *[DeclareLaunchArgument(argument.name, default_value=argument.default_value,
                                description=f"spot_driver.launch.py: {argument.description}")
          for argument in DRIVER_ARGUMENTS],
        OpaqueFunction(function=_robot_and_driver),
    ]), __file__)
