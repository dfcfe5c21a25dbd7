"""Two Spots in one command, each in its own namespace with its own frame prefix and lease.

    ros2 launch spot_driver multi_robot.launch.py                       # two simulated robots
    ros2 launch spot_driver multi_robot.launch.py simulated:=false \\
        spot1_hostname:=192.168.80.3 spot2_hostname:=192.168.80.4

Robot N's topics are under /spotN, its frames start with spotN/ and its driver holds its own
robot's lease. With real robots, both drivers read the same BOSDYN_CLIENT_USERNAME /
BOSDYN_CLIENT_PASSWORD (or give each a credentials file through its config file).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration

from spot_common.launch_arguments import strict

LAUNCH = os.path.join(get_package_share_directory("spot_driver"), "launch")
ROBOTS = ("spot1", "spot2")


def _robots(context):
    simulated = LaunchConfiguration("simulated").perform(context).lower() == "true"
    out = []
    for name in ROBOTS:
        if simulated:
            # the simulator's package, looked up only when asked for (a driver-only install
            # launches real robots without it)
            source = os.path.join(get_package_share_directory("spot_sim"), "launch",
                                  "spot_sim.launch.py")
            arguments = {"robot_name": name,
                         "certs_dir": os.path.join("~", ".spot_sim_certs", name)}
        else:
            source = os.path.join(LAUNCH, "spot_driver.launch.py")
            arguments = {"robot_name": name,
                         "hostname": LaunchConfiguration(f"{name}_hostname").perform(context)}
        out.append(IncludeLaunchDescription(PythonLaunchDescriptionSource(source),
                                            launch_arguments=arguments.items()))
    return out


def generate_launch_description() -> LaunchDescription:
    return strict(LaunchDescription([
        DeclareLaunchArgument("simulated", default_value="true",
                              description="start two simulated robots (else connect to real "
                                          "ones at spot1_hostname / spot2_hostname)"),
        *[DeclareLaunchArgument(f"{name}_hostname", default_value="",
                                description=f"address of {name} (with simulated:=false)")
          for name in ROBOTS],
        OpaqueFunction(function=_robots),
    ]), __file__)
