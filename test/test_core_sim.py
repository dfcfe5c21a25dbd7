"""The simulated Spot against the unmodified bosdyn-client SDK: connection and state."""

import subprocess
import sys
import time

import pytest
from bosdyn.client import InvalidLoginError, RpcError, UnauthenticatedError
from bosdyn.client.frame_helpers import (
    ODOM_FRAME_NAME,
    VISION_FRAME_NAME,
    get_a_tform_b,
    validate_frame_tree_snapshot,
)
from bosdyn.client.graph_nav import GraphNavClient
from bosdyn.client.image import ImageClient
from bosdyn.client.robot_state import RobotStateClient

from conftest import PASSWORD, USERNAME, connect, running_sim

EXPECTED_SERVICES = {
    "robot-id": "bosdyn.api.RobotIdService",
    "auth": "bosdyn.api.AuthService",
    "directory": "bosdyn.api.DirectoryService",
    "time-sync": "bosdyn.api.TimeSyncService",
    "robot-state": "bosdyn.api.RobotStateService",
    "lease": "bosdyn.api.LeaseService",
    "estop": "bosdyn.api.EstopService",
    "power": "bosdyn.api.PowerService",
    "robot-command": "bosdyn.api.RobotCommandService",
}


def test_robot_id_needs_no_login(sim):
    robot = connect(sim, authenticate=False)
    robot_id = robot.get_id()
    assert robot_id.serial_number == sim.config.serial_number
    assert robot_id.species == "spot"
    assert robot_id.software_release.version.major_version == 5


def test_wrong_password_is_invalid_login(sim):
    robot = connect(sim, authenticate=False)
    with pytest.raises(InvalidLoginError):
        robot.authenticate(USERNAME, PASSWORD + "x")


def test_calls_without_token_are_unauthenticated(sim):
    robot = connect(sim, authenticate=False)
    with pytest.raises(UnauthenticatedError):
        robot.ensure_client(RobotStateClient.default_service_name)


def test_directory_lists_every_service_with_its_type(robot):
    entries = {e.name: e for e in robot.list_services()}
    for name, service_type in EXPECTED_SERVICES.items():
        assert entries[name].type == service_type
        assert entries[name].authority.endswith(".spot.robot")
    for name in EXPECTED_SERVICES:
        assert robot.ensure_client(name) is not None


def test_time_sync_measures_the_robot_clock_offset(sim, robot):
    robot.time_sync.wait_for_sync(timeout_sec=5.0)
    skew = robot.time_sync.get_robot_clock_skew()
    skew_sec = skew.seconds + skew.nanos * 1e-9
    assert skew_sec == pytest.approx(sim.config.clock_offset_sec, abs=0.02)
    assert 0 < robot.time_sync.endpoint.round_trip_time.ToNanoseconds() < 1_000_000_000


def test_robot_state_is_complete_and_in_robot_time(sim, robot):
    state = robot.ensure_client(RobotStateClient.default_service_name).get_robot_state()
    kin = state.kinematic_state
    names = [j.name for j in kin.joint_states]
    assert names == [f"{leg}.{j}" for leg in ("fl", "fr", "hl", "hr") for j in ("hx", "hy", "kn")]
    for joint in kin.joint_states:
        assert joint.HasField("position") and joint.HasField("velocity")
        assert joint.HasField("load")
    robot_now = time.time() + sim.config.clock_offset_sec
    stamp = kin.acquisition_timestamp.seconds + kin.acquisition_timestamp.nanos * 1e-9
    assert stamp == pytest.approx(robot_now, abs=0.5)

    snapshot = kin.transforms_snapshot
    validate_frame_tree_snapshot(snapshot)
    # A real Spot's robot state (no arm; the frames the API's RobotState documents): the world
    # and body frames and feet_center only; camera frames come with each image response (its
    # shot's transforms_snapshot).
    assert set(snapshot.child_to_parent_edge_map) == {"body", "odom", "vision", "flat_body",
                                                      "gpe", "feet_center"}
    feet, body = (get_a_tform_b(snapshot, "odom", frame) for frame in ("feet_center", "body"))
    assert abs(feet.z) < 0.05 and abs(feet.x - body.x) < 0.1  # on the ground, under the body
    images = robot.ensure_client(ImageClient.default_service_name)
    for camera in ("frontleft", "frontright", "left", "right", "back"):
        shot = images.get_image_from_sources([f"{camera}_fisheye_image"])[0].shot
        validate_frame_tree_snapshot(shot.transforms_snapshot)
        assert get_a_tform_b(shot.transforms_snapshot, "body",
                             shot.frame_name_image_sensor) is not None, camera
    roots = [f for f, e in snapshot.child_to_parent_edge_map.items() if not e.parent_frame_name]
    assert roots == ["body"]
    odom_body = get_a_tform_b(snapshot, ODOM_FRAME_NAME, "body")
    assert odom_body.z == pytest.approx(0.18, abs=0.02)  # sitting
    assert kin.HasField("velocity_of_body_in_odom") and kin.HasField("velocity_of_body_in_vision")

    battery = state.battery_states[0]
    assert 0 < battery.charge_percentage.value <= 100
    assert battery.voltage.value > 40 and battery.current.value < 0
    assert battery.estimated_runtime.seconds > 0 and battery.temperatures
    assert battery.status == battery.STATUS_DISCHARGING
    assert state.power_state.motor_power_state == state.power_state.STATE_OFF
    assert {e.name for e in state.estop_states} >= {"hardware_estop"}
    assert state.comms_states[0].wifi_state.essid
    assert len(state.foot_state) == 4
    assert all(f.contact == f.CONTACT_MADE for f in state.foot_state)
    assert list(state.system_fault_state.faults) == []
    assert len(state.behavior_fault_state.faults) == 0


def test_robot_with_an_arm_reports_hand_and_arm_joints(certs_dir):
    with running_sim(certs_dir, has_arm=True) as sim:
        robot = connect(sim)
        state = robot.ensure_client(RobotStateClient.default_service_name).get_robot_state()
        names = [j.name for j in state.kinematic_state.joint_states]
        assert "arm0.sh0" in names and "arm0.f1x" in names
        snapshot = state.kinematic_state.transforms_snapshot
        assert get_a_tform_b(snapshot, "body", "hand") is not None
        assert get_a_tform_b(snapshot, VISION_FRAME_NAME, "hand") is not None


def test_console_script_prints_port_and_starts(tmp_path):
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "spot_sim", "--port", "0", "--certs-dir", str(tmp_path),
         "--username", USERNAME, "--password", PASSWORD],
        stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        elapsed = time.monotonic() - started
        assert line.startswith("spot-sim listening on 127.0.0.1:")
        port = int(line.rsplit(":", 1)[1])
        assert (tmp_path / "ca.crt").exists()
        print(f"simulator started in {elapsed:.2f} s")
        assert elapsed < 20.0, f"simulator took {elapsed:.2f} s to start"  # a hang, not a figure

        class _Sim:
            ca_cert = tmp_path / "ca.crt"

        _Sim.port = port
        robot = connect(_Sim)
        assert robot.get_id().species == "spot"
    finally:
        process.terminate()
        process.wait(timeout=5)
    assert process.returncode == 0


@pytest.mark.crash_expected("a planted defect: a streaming handler that raises")
def test_a_streaming_handler_that_raises_is_written_to_the_crash_log(sim, monkeypatch):
    """A streaming servicer (GraphNav's download) does not pass through ``rpc.unary``: its
    exception still reaches the crash log (the marker fails the test when none is written),
    and the client sees the call fail, not a silent empty map."""
    robot = connect(sim)

    def broken():
        raise RuntimeError("planted in the graph's reader")

    monkeypatch.setattr(sim.graph_nav, "graph", broken)
    client = robot.ensure_client(GraphNavClient.default_service_name)
    with pytest.raises(RpcError, match="error occurred trying to reach a service") as failed:
        client.download_graph()
    assert failed.type is RpcError  # no narrower SDK error: gRPC's UNKNOWN
    assert "planted in the graph's reader" in failed.value.error.details()
