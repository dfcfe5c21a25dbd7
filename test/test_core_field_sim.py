"""The simulator's profiles through the SDK's own clients: the default one is deterministic,
the field one (and each knob) makes the robot as hard to work with as one on Wi-Fi: slow and
asymmetric calls, stalls, failures, a drifting clock, old images and state, noisy joints,
real braking and Spot Checks that find problems."""

import time
from dataclasses import replace

import pytest
from bosdyn.api import image_pb2
from bosdyn.client.exceptions import RpcError
from bosdyn.client.image import ImageClient, build_image_request
from bosdyn.client.power import power_on_motors
from bosdyn.client.robot_command import RobotCommandBuilder, blocking_stand
from bosdyn.client.spot_check import SpotCheckClient, run_spot_check
from bosdyn.client.time_sync import TimeSyncClient, TimeSyncEndpoint
from test_body_sim import commander, operated, state_of, wait_for

from conftest import connect, running_sim
from spot_sim.cli import field_profile, parse_args
from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.field import PROFILES, FieldProfile

QUIET = FieldProfile()


@pytest.fixture
def field_sim(certs_dir):
    with running_sim(certs_dir, field=PROFILES["field"]) as spot:
        yield spot


def joints(robot) -> dict[str, float]:
    return {j.name: j.position.value for j in state_of(robot).kinematic_state.joint_states}


def image_stamp_ns(robot) -> int:
    """When a body camera's image was taken, in robot time."""
    response = robot.ensure_client(ImageClient.default_service_name).get_image(
        [build_image_request("frontleft_fisheye_image", quality_percent=50,
                             pixel_format=image_pb2.Image.PIXEL_FORMAT_GREYSCALE_U8)])[0]
    return timestamp_to_nsec(response.shot.acquisition_time)


def test_the_default_profile_is_deterministic(certs_dir):
    with running_sim(certs_dir, field=QUIET) as spot:
        robot = connect(spot)
        assert joints(robot) == joints(robot)  # a robot at rest reports the same values
        state = state_of(robot)
        assert state.kinematic_state.acquisition_timestamp == state.power_state.timestamp
        started = time.monotonic()
        for _ in range(20):
            state_of(robot)
        # a safety bound (a call that stalls); the delays the field profile adds are checked
        # in the next test
        assert (time.monotonic() - started) / 20 < 1.0


def test_the_field_profile_is_noisy_slow_and_stale(field_sim):
    robot = connect(field_sim)
    first, second = joints(robot), joints(robot)
    assert first.keys() == second.keys() and first != second  # noise at rest
    assert max(abs(first[n] - second[n]) for n in first) < 0.02  # ... of a few mrad
    calls, rolling = [], 0
    for _ in range(30):
        started = time.monotonic()
        try:
            state = state_of(robot)
        except RpcError:  # the field profile drops a call now and then
            continue
        calls.append(time.monotonic() - started)
        rolling += state.kinematic_state.acquisition_timestamp != state.power_state.timestamp
    assert rolling >= len(calls) // 2  # each part of the state acquired at its own time
    assert len(calls) >= 25
    assert sorted(calls)[len(calls) // 2] >= 0.008  # request 3-15 ms + response 5-40 ms
    robot.time_sync.wait_for_sync(timeout_sec=15)
    ages = []
    for _ in range(5):
        stamp = image_stamp_ns(robot)
        received = robot.time_sync.robot_timestamp_from_local_secs(time.time())
        ages.append((timestamp_to_nsec(received) - stamp) / 1e9)
    assert min(ages) >= 0.045  # the 50-150 ms capture delay (time-sync error aside)
    assert max(ages) <= 0.5


def test_rpc_failures_stalls_and_asymmetric_latency_through_the_sdk(certs_dir):
    with running_sim(certs_dir, field=QUIET) as spot:
        robot = connect(spot)
        robot.time_sync.wait_for_sync(timeout_sec=5)
        spot.rpc_faults.set_profile(FieldProfile(rpc_failure_probability=0.4, seed=3))
        codes = []
        for _ in range(60):
            try:
                state_of(robot)
                codes.append("ok")
            except RpcError as exc:
                codes.append(type(exc).__name__)
        assert 10 <= sum(c != "ok" for c in codes) <= 40
        assert len(set(codes)) == 3, set(codes)  # ok, and both kinds of failure
        spot.rpc_faults.set_profile(FieldProfile(spike_probability=1.0,
                                                 spike_latency=(0.2, 0.2)))
        started = time.monotonic()
        state_of(robot)
        assert time.monotonic() - started >= 0.19  # a stall, in one direction or the other
        spot.rpc_faults.set_profile(FieldProfile(request_latency=(0.06, 0.06)))
        endpoint = TimeSyncEndpoint(robot.ensure_client(TimeSyncClient.default_service_name))
        assert endpoint.establish_timesync(max_samples=25, break_on_success=True)
        skew = endpoint.clock_skew.ToNanoseconds() / 1e9
        # a one-way delay biases the estimate by half of it, as on a real link
        assert abs(skew - spot.clock.offset_sec) == pytest.approx(0.03, abs=0.012)
        spot.rpc_faults.set_profile(QUIET)


def test_the_robot_clock_drifts(certs_dir):
    with running_sim(certs_dir, field=replace(QUIET, clock_drift_ppm=20000)) as spot:
        robot = connect(spot)

        def sample() -> tuple[int, float]:
            """Robot time and host time at the middle of the quickest of five calls (the first
            call opens the channel; a slow call under load would skew the midpoint)."""
            calls = []
            for _ in range(5):
                sent = time.monotonic()
                stamp = state_of(robot).kinematic_state.acquisition_timestamp
                returned = time.monotonic()
                calls.append((returned - sent, timestamp_to_nsec(stamp), (sent + returned) / 2))
            _, robot_ns, host_s = min(calls)
            return robot_ns, host_s

        before, host_before = sample()
        time.sleep(3.0)  # sleep: the span both clocks are compared over
        after, host_after = sample()
        robot_s = (after - before) / 1e9
        assert robot_s / (host_after - host_before) == pytest.approx(1.02, abs=0.006)


def test_field_braking_and_spot_check_findings(certs_dir):
    profile = replace(QUIET, max_linear_decel=2.0, spot_check_failure_probability=1.0)
    with running_sim(certs_dir, field=profile) as spot:
        robot = connect(spot)
        with operated(robot):
            result = run_spot_check(robot.ensure_client(SpotCheckClient.default_service_name),
                                    robot.lease_wallet.get_lease(), timeout_sec=20,
                                    update_frequency=2.0)
            assert result.state == result.STATE_FINISHED
            statuses = [r.status for r in result.camera_results.values()]
            assert statuses.count(result.camera_results["back"].STATUS_ERROR) == 1
            assert sum(c.error != c.ERROR_NONE for c in result.load_cell_results.values()) == 1
            power_on_motors(robot.ensure_client("power"), timeout_sec=10)
            blocking_stand(commander(robot), timeout_sec=10)
            commander(robot).robot_command(
                RobotCommandBuilder.synchro_velocity_command(v_x=1.0, v_y=0.0, v_rot=0.0),
                end_time_secs=time.time() + 10)
            speed = lambda: state_of(robot).kinematic_state.velocity_of_body_in_odom.linear.x  # noqa: E731
            assert wait_for(lambda: speed() > 0.95, 3.0, period=0.02)
            commander(robot).robot_command(RobotCommandBuilder.stop_command())
            stopping = time.monotonic()
            assert wait_for(lambda: abs(speed()) < 0.05, 3.0, period=0.02)
            assert time.monotonic() - stopping >= 0.4  # 1 m/s at 2 m/s^2: 0.5 s


def test_profile_flags():
    args = parse_args(["--profile", "field", "--joint-noise", "0", "--capture-delay",
                       "0.1,0.2", "--seed", "7"])
    profile = field_profile(args)
    assert profile == replace(PROFILES["field"], joint_noise=0.0, capture_delay=(0.1, 0.2),
                              seed=7)
    assert field_profile(parse_args([])).deterministic
    with pytest.raises(ValueError, match="capture_delay"):
        field_profile(parse_args(["--capture-delay", "0.2,0.1"]))
    with pytest.raises(ValueError, match="rpc_failure_probability"):
        field_profile(parse_args(["--rpc-failure-probability", "1.5"]))
