"""The simulated robot's state through the SDK's own clients: the hardware configuration with
its link models (with and without an arm), and the metrics walking counts."""

import time

import pytest
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.power import power_on_motors
from bosdyn.client.robot_command import RobotCommandBuilder, blocking_stand
from bosdyn.client.robot_state import RobotStateClient
from test_body_sim import commander, operated

from conftest import client


def test_hardware_configuration_link_models_and_metrics(equipped_sim, equipped_robot):
    state_client = client(equipped_robot, RobotStateClient)
    skeleton = state_client.get_robot_hardware_configuration().skeleton
    names = [link.name for link in skeleton.links]
    for expected in ("body", "front_left_upper_leg", "rear_right_lower_leg", "arm0.link_sh0",
                     "arm0.link_wr1", "arm0.link_fngr"):
        assert expected in names
    model = state_client.get_robot_link_model("front_left_upper_leg")
    vertices = [line for line in model.file_contents.splitlines() if line.startswith("v ")]
    faces = [line for line in model.file_contents.splitlines() if line.startswith("f ")]
    assert len(vertices) == 8 and len(faces) == 6
    zs = [float(v.split()[3]) for v in vertices]
    assert max(zs) - min(zs) == pytest.approx(0.3205, abs=1e-3)  # the upper leg's length
    with pytest.raises(sdk_errors.InvalidRequestError):
        state_client.get_robot_link_model("no_such_link")
    metrics = {m.label: m for m in state_client.get_robot_metrics().metrics}
    assert {"distance", "gait cycles", "time moving", "electric power"} <= set(metrics)
    assert metrics["distance"].units == "m"


def test_hardware_configuration_without_arm_has_no_arm_links(sim, robot):
    names = [link.name for link in
             client(robot, RobotStateClient).get_robot_hardware_configuration().skeleton.links]
    assert "body" in names and not any(n.startswith("arm0") for n in names)


def test_metrics_count_walking(sim, robot):
    state_client = client(robot, RobotStateClient)
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        commander(robot).robot_command(RobotCommandBuilder.synchro_velocity_command(0.5, 0, 0),
                                       end_time_secs=time.time() + 1.0)
        time.sleep(1.5)  # sleep: past the walk's 1 s end (velocity has no feedback)
    metrics = {m.label: m for m in state_client.get_robot_metrics().metrics}
    assert metrics["distance"].float_value > 0.2
    assert metrics["time moving"].duration.ToNanoseconds() > 0.5e9
