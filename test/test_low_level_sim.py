"""The simulated robot's joint-control API (robot-state-streaming, robot-command-streaming),
through the SDK's own clients only, in the pattern of the SDK's joint_control examples: a
state thread, joint mode entered by a RobotCommand while the first commands stream, a
command generator at 333 Hz with end_time = now + 50 ms, 5 ms extrapolation, gains in the
first message."""

import itertools
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from bosdyn.api import robot_command_pb2
from bosdyn.client.lease import LeaseClient, LeaseKeepAlive
from bosdyn.client.robot_command import (
    NotPoweredOnError,
    RobotCommandBuilder,
    RobotCommandClient,
    RobotCommandStreamingClient,
    UnsupportedError,
    blocking_stand,
)
from bosdyn.client.robot_state import RobotStateClient, RobotStateStreamingClient
from bosdyn.util import seconds_to_duration

from conftest import PASSWORD, USERNAME, connect, holds, running_sim

Status = robot_command_pb2.JointControlStreamResponse
# The SDK examples' gains (constants.py), per leg: hx, hy, kn.
K_Q_P = [624.0, 936.0, 286.0] * 4
K_QD_P = [5.20, 5.20, 2.04] * 4
SQUAT = np.array([0.15, 1.3, -2.25, -0.15, 1.3, -2.25, 0.15, 1.3, -2.25, -0.15, 1.3, -2.25])


class StateReader:
    """The examples' state thread: every stream message, with its arrival time."""

    def __init__(self, robot) -> None:
        self.client = robot.ensure_client(RobotStateStreamingClient.default_service_name)
        self.messages: list = []
        self.stop = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        while not self.messages:
            time.sleep(0.005)

    def _read(self) -> None:
        for state in self.client.get_robot_state_stream():
            self.messages.append((time.monotonic(), state))
            if self.stop:
                return

    @property
    def latest(self):
        return self.messages[-1][1]

    def close(self) -> None:
        self.stop = True
        self.thread.join(timeout=5)


def update(robot, position, load, key: int, gains: bool = True, **extra):
    request = robot_command_pb2.JointControlStreamRequest()
    command = request.joint_command
    if gains:
        command.gains.k_q_p.extend(K_Q_P[: len(position)])
        command.gains.k_qd_p.extend(K_QD_P[: len(position)])
    command.position.extend(position)
    command.velocity.extend([0.0] * len(position))
    command.load.extend(load)
    if extra.pop("end_time", True):
        command.end_time.CopyFrom(robot.time_sync.robot_timestamp_from_local_secs(
            time.time() + 0.05))
    command.extrapolation_duration.CopyFrom(seconds_to_duration(0.005))
    command.user_command_key = key
    if "velocity_safety_limit" in extra:
        command.velocity_safety_limit.value = extra.pop("velocity_safety_limit")
    return request


def stream(robot, poses, load, seconds_per_pose: float, activate=None, sent=None, **every):
    """Stream interpolated poses at 333 Hz (gains in the first message, ``every`` field in
    every message); ``activate`` is called once the first command is on its way, as the
    examples' activation thread does; ``sent`` (a list) gets each key sent."""
    def generate():
        key = 0
        for start, goal in itertools.pairwise(poses):
            t0 = time.monotonic()
            while (elapsed := time.monotonic() - t0) < seconds_per_pose:
                key += 1
                if sent is not None:
                    sent.append(key)
                position = start + (goal - start) * elapsed / seconds_per_pose
                yield update(robot, position, load, key, gains=key == 1, **every)
                if key == 1 and activate is not None:
                    threading.Thread(target=activate, daemon=True).start()
                time.sleep(0.003)

    client = robot.ensure_client(RobotCommandStreamingClient.default_service_name)
    return client.send_joint_control_commands(generate())


@pytest.fixture
def standing(certs_dir):
    with running_sim(certs_dir, estop_required=False) as sim:
        robot = connect(sim)
        robot.time_sync.wait_for_sync()
        lease = LeaseKeepAlive(robot.ensure_client(LeaseClient.default_service_name),
                               must_acquire=True, return_at_exit=True)
        robot.power_on(timeout_sec=20)
        command = robot.ensure_client(RobotCommandClient.default_service_name)
        blocking_stand(command, timeout_sec=10)
        time.sleep(0.3)  # sleep: settled, as the SDK's examples wait after standing
        try:
            yield robot, command
        finally:
            lease.shutdown()
            robot.time_sync.stop()


def test_the_state_stream_runs_at_333_hz_with_every_imu_packet(standing):
    robot, _ = standing
    reader = StateReader(robot)
    deadline = time.monotonic() + 20.0
    while len(reader.messages) < 600 and time.monotonic() < deadline:
        time.sleep(0.05)
    reader.close()
    arrivals = np.array([t for t, _ in reader.messages])
    states = [s for _, s in reader.messages]
    rate = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
    # 333 Hz paced on absolute deadlines: never faster (345 allows the clock's jitter); a
    # safety bound below (not halved), the figure is benchmarks/low_level.py's
    assert 333 / 2 <= rate <= 345, rate
    stamps = [s.joint_states.acquisition_timestamp.ToNanoseconds() for s in states]
    assert all(b > a for a, b in itertools.pairwise(stamps))
    state = states[-1]
    assert len(state.joint_states.position) == 12 == len(state.joint_states.load)
    assert abs(state.kinematic_state.odom_tform_body.position.z - 0.52) < 0.05
    assert list(state.contact_states) == [1, 1, 1, 1]  # CONTACT_MADE
    # The legs carry the robot's weight: knees loaded, the same on every leg.
    knees = np.array(state.joint_states.load)[2::3]
    assert knees.min() > 5.0 and np.ptp(knees) < 1e-6
    imu = state.inertial_state
    assert imu.mounting_link_name == "body" and imu.packet_rate > 300
    packets = [p.timestamp.ToNanoseconds() for s in states for p in s.inertial_state.packets]
    gaps = np.diff(packets) / 1e6
    assert len(packets) >= 0.95 * rate * 2.0 * 0.9 and (gaps > 0).all()
    assert abs(np.median(gaps) - 3.0) < 0.1, np.median(gaps)  # one packet every 3 ms, none lost


def test_a_squat_through_joint_control_then_the_stand_controller_takes_back(standing):
    robot, command = standing
    reader = StateReader(robot)
    start = np.array(reader.latest.joint_states.position)
    load = list(reader.latest.joint_states.load)
    sent = []
    response = stream(robot, [start, SQUAT, start], load, 1.5, sent=sent,
                      activate=lambda: command.robot_command(RobotCommandBuilder.joint_command()))
    assert response.status == Status.STATUS_OK, response
    time.sleep(1.5)  # sleep: end_time passes; the robot returns to its stand controller
    reader.close()
    positions = np.array([s.joint_states.position for _, s in reader.messages])
    heights = np.array([s.kinematic_state.odom_tform_body.position.z
                        for _, s in reader.messages])
    keys = [s.last_command.user_command_key for _, s in reader.messages]
    assert np.abs(positions[:, 2::3].min(axis=0) - SQUAT[2]).max() < 0.1  # knees followed
    assert heights.min() < 0.35 < 0.5 < heights[-1]  # squatted, then stood again
    # Each command's key is echoed back, up to the last sent (~1000 at 333 Hz; fewer when
    # this machine is busy: the count is the sender's, the echo is what is checked).
    assert len(sent) > 100 and max(keys) == sent[-1]
    # The robot sits and powers off safely afterwards.
    robot.power_off(cut_immediately=False, timeout_sec=20)
    assert not robot.is_powered_on()


def test_commands_before_joint_mode_wait_and_a_stream_that_never_drives_is_inactive(standing):
    robot, _ = standing
    reader = StateReader(robot)
    start = np.array(reader.latest.joint_states.position)
    response = stream(robot, [start, start], list(reader.latest.joint_states.load), 0.3)
    assert response.status == Status.STATUS_INACTIVE, response
    reader.close()


@pytest.mark.parametrize("case, status", [
    ("no gains", Status.STATUS_INVALID_REQUEST),
    ("no end time", Status.STATUS_INVALID_REQUEST),
    ("not finite", Status.STATUS_INVALID_REQUEST),
    ("19 joints without an arm", Status.STATUS_INVALID_REQUEST),
    ("too distant", Status.STATUS_TOO_DISTANT),
    ("end time passed", Status.STATUS_EXPIRED),
])
def test_refused_commands_end_the_stream_and_change_nothing(standing, case, status):
    robot, command = standing
    reader = StateReader(robot)
    start = np.array(reader.latest.joint_states.position)
    load = list(reader.latest.joint_states.load)
    position = start.copy()
    extra = {}
    if case == "too distant":
        position[2] += 0.8
    elif case == "not finite":
        position[4] = float("nan")
    elif case == "no end time":
        extra["end_time"] = False
    elif case == "19 joints without an arm":
        position, load = np.concatenate([start, np.zeros(7)]), load + [0.0] * 7
    request = update(robot, position, load, 7, gains=case != "no gains", **extra)
    if case == "end time passed":
        request.joint_command.end_time.CopyFrom(
            robot.time_sync.robot_timestamp_from_local_secs(time.time() - 0.5))
    command.robot_command(RobotCommandBuilder.joint_command())
    client = robot.ensure_client(RobotCommandStreamingClient.default_service_name)
    response = client.send_joint_control_commands(iter([request]))
    assert response.status == status, response
    assert response.message
    assert holds(lambda: np.abs(np.array(reader.latest.joint_states.position) - start).max()
                 < 1e-6, 0.1)  # nothing moved
    reader.close()


def test_the_velocity_safety_limit_trips_a_behavior_fault(standing):
    robot, command = standing
    reader = StateReader(robot)
    start = np.array(reader.latest.joint_states.position)
    target = start.copy()
    target[2::3] -= 0.45  # a sudden knee target: fast motion
    response = stream(robot, [target, target], list(reader.latest.joint_states.load), 0.5,
                      activate=lambda: command.robot_command(RobotCommandBuilder.joint_command()),
                      velocity_safety_limit=0.5)
    reader.close()
    state = robot.ensure_client(RobotStateClient.default_service_name).get_robot_state()
    assert len(state.behavior_fault_state.faults) == 1, (response, state.behavior_fault_state)


def test_joint_mode_needs_power_and_the_license(certs_dir):
    with running_sim(certs_dir, estop_required=False) as sim:
        robot = connect(sim)
        robot.time_sync.wait_for_sync()
        with LeaseKeepAlive(robot.ensure_client(LeaseClient.default_service_name),
                            must_acquire=True, return_at_exit=True):
            command = robot.ensure_client(RobotCommandClient.default_service_name)
            with pytest.raises(NotPoweredOnError):
                command.robot_command(RobotCommandBuilder.joint_command())
        robot.time_sync.stop()
    with running_sim(certs_dir, estop_required=False,
                     withheld_features=("joint_control",)) as sim:
        robot = connect(sim)
        robot.time_sync.wait_for_sync()
        with LeaseKeepAlive(robot.ensure_client(LeaseClient.default_service_name),
                            must_acquire=True, return_at_exit=True):
            robot.power_on(timeout_sec=20)
            command = robot.ensure_client(RobotCommandClient.default_service_name)
            with pytest.raises(UnsupportedError) as refused:
                command.robot_command(RobotCommandBuilder.joint_command())
            assert "joint_control" in refused.value.response.message
        robot.time_sync.stop()


@pytest.mark.parametrize("program, arm", [("noarm_squat.py", False), ("wiggle_arm.py", True)])
def test_the_sdk_joint_control_examples_run_unmodified(tmp_path, program, arm, sdk_examples):
    with running_sim(tmp_path / "certs", estop_required=False, has_arm=arm) as sim:
        env = {**os.environ, "BOSDYN_CLIENT_USERNAME": USERNAME,
               "BOSDYN_CLIENT_PASSWORD": PASSWORD}
        result = subprocess.run(
            [sys.executable, "-m", "spot_sim.sdk_program", "--port", str(sim.port), "--ca",
             str(sim.ca_cert), str(sdk_examples / "joint_control" / program), "127.0.0.1"],
            capture_output=True, text=True, timeout=90, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Robot safely powered off." in result.stderr, result.stderr[-3000:]
        assert result.stderr.count("Latency") > 1000  # keys echoed at the stream's rate
