"""Launch arguments cannot be mistyped (``spot_common/launch_arguments.py``): the rules alone
(fast tier), then every launch file through ``ros2 launch`` refusing ``enable_low_level:=true``
(the examples README's old spelling of ``low_level``) before anything starts."""

import shutil
import time
from pathlib import Path

import pytest
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from ros_harness import ros2

from conftest import missing
from spot_common.launch_arguments import UnknownLaunchArgumentError, given, refusal, strict

REPO = Path(__file__).resolve().parent.parent
LAUNCH_FILES = [(package, p.name) for package in ("spot_driver", "spot_sim")
                for p in sorted((REPO / package / "launch").glob("*.launch.py"))]
DECLARED = LaunchDescription([DeclareLaunchArgument("low_level", default_value="false"),
                              DeclareLaunchArgument("log_level", default_value="info")])


def test_the_arguments_given_to_the_launched_file_only():
    argv = ["/usr/bin/ros2", "launch", "spot_sim", "spot_sim.launch.py", "arm:=true",
            "--debug", "robot_name:=spot1"]
    assert given(argv, "/install/share/spot_sim/launch/spot_sim.launch.py") == \
        ["arm", "robot_name"]
    assert given(argv, "/install/share/spot_driver/launch/spot_driver.launch.py") is None
    assert given(["ros2", "launch", "./launch/nav2.launch.py", "x:=1"], "nav2.launch.py") == ["x"]


def test_an_undeclared_argument_is_refused_with_the_closest_name():
    argv = ["ros2", "launch", "spot_driver", "here.launch.py", "enable_low_level:=true"]
    with pytest.raises(UnknownLaunchArgumentError, match="did you mean 'low_level'"):
        strict(DECLARED, "here.launch.py", argv)
    assert refusal("bogus", ["a", "b"]) == \
        "unknown launch argument 'bogus'; this launch file takes: a, b"
    ok = ["ros2", "launch", "spot_driver", "here.launch.py", "low_level:=true"]
    assert strict(DECLARED, "here.launch.py", ok) is DECLARED
    assert strict(DECLARED, "there.launch.py", argv) is DECLARED  # included: not its own


@pytest.mark.parametrize(("package", "launch_file"), LAUNCH_FILES)
def test_every_launch_file_refuses_a_misspelt_argument_before_starting(package, launch_file):
    if shutil.which("ros2") is None:
        missing("ros2 launch (scripts/setup.sh builds it from the workplace kit)")
    started = time.monotonic()
    result = ros2("launch", package, launch_file, "enable_low_level:=true", timeout=30)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "unknown launch argument 'enable_low_level'" in output, output
    assert "process started" not in output, output  # nothing started
    assert time.monotonic() - started < 15.0
