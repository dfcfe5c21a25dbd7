"""Pure pieces of the driver, without ROS graph or robot: conversions and business rules."""

import itertools
import math
import os
import stat

import numpy as np
import pytest
from bosdyn.api import robot_state_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import holds
from spot_driver.body.mobility import InvalidVelocityError, MobilitySettings, clamp_velocity
from spot_driver.conversions import frames
from spot_driver.conversions.time import robot_stamp_to_msg, robot_to_local_nsec
from spot_driver.credentials import CredentialsError, load_credentials
from spot_driver.errors import CommandError
from spot_driver.manipulation import arm_trajectory as at
from spot_driver.state.joint_states import joint_state_msg, urdf_joint_name
from spot_driver.state.odometry import odometry_msg
from spot_sim.body.mobility import Se2
from spot_sim.state.frame_tree import build_snapshot

angles = st.floats(-math.pi, math.pi)
coords = st.floats(-50, 50)


def _snapshot(x=1.0, y=2.0, yaw=0.5, drift=(0.1, -0.2, 0.05)):
    odom_body = SE3Pose(x, y, 0.52, Quat.from_yaw(yaw))
    vision_odom = SE3Pose(drift[0], drift[1], 0.0, Quat.from_yaw(drift[2]))
    return build_snapshot(odom_body, vision_odom * odom_body, has_arm=True)


def _chain(edges, root, frame) -> SE3Pose:
    parent_of = {e.child: e for e in edges}
    pose = SE3Pose.from_identity()
    while frame != root:
        edge = parent_of[frame]
        pose = edge.pose * pose
        frame = edge.parent
    return pose


@settings(max_examples=50, deadline=None)
@given(coords, coords, angles, st.sampled_from(["odom", "vision"]))
def test_rerooted_tree_keeps_every_transform(x, y, yaw, root):
    snapshot = _snapshot(x, y, yaw)
    edges = frames.reroot(snapshot, root)
    children = [e.child for e in edges]
    assert len(children) == len(set(children)), "a frame has two parents"
    assert root not in children
    assert set(children) | {root} == set(snapshot.child_to_parent_edge_map)
    for frame in ("body", "frontleft_fisheye", "hand", "gpe", "flat_body"):
        expected = get_a_tform_b(snapshot, root, frame)
        got = _chain(edges, root, frame)
        assert np.allclose(got.to_matrix(), expected.to_matrix(), atol=1e-9)


def test_reroot_at_unknown_frame_is_a_clear_error():
    with pytest.raises(KeyError, match="not in the robot's frame tree"):
        frames.reroot(_snapshot(), "map")


def test_static_split_keeps_moving_frames_dynamic():
    dynamic, static = frames.split_transforms(_snapshot(), "odom", stamp=None, prefix="spot/")
    static_children = {t.child_frame_id for t in static}
    dynamic_children = {t.child_frame_id for t in dynamic}
    assert {"spot/frontleft_fisheye", "spot/head", "spot/back"} <= static_children
    assert {"spot/body", "spot/vision", "spot/gpe", "spot/flat_body",
            "spot/hand"} <= dynamic_children
    assert all(t.header.frame_id.startswith("spot/") for t in dynamic + static)


def test_odometry_twist_is_expressed_in_the_body_frame():
    kin = robot_state_pb2.KinematicState()
    kin.transforms_snapshot.CopyFrom(_snapshot(yaw=math.pi / 2))
    kin.velocity_of_body_in_odom.linear.y = 0.5  # walking forward while facing +y
    kin.velocity_of_body_in_odom.angular.z = 0.2
    kin.acquisition_timestamp.seconds = 100
    msg = odometry_msg(kin, "odom", skew_nsec=10_000_000_000, prefix="r/")
    assert msg.header.frame_id == "r/odom" and msg.child_frame_id == "r/body"
    assert msg.twist.twist.linear.x == pytest.approx(0.5)
    assert msg.twist.twist.linear.y == pytest.approx(0.0, abs=1e-12)
    assert msg.twist.twist.angular.z == pytest.approx(0.2)
    assert (msg.pose.pose.position.x, msg.pose.pose.position.y) == pytest.approx((1.0, 2.0))
    assert msg.header.stamp.sec == 90
    assert msg.pose.covariance[0] > 0 and msg.twist.covariance[35] > 0


def test_robot_time_converts_with_skew_for_scalars_and_arrays():
    assert robot_to_local_nsec(5_000, 2_000) == 3_000
    arr = np.array([10, 20, 30], dtype=np.int64)
    assert list(robot_to_local_nsec(arr, 5)) == [5, 15, 25]
    stamp = robot_state_pb2.KinematicState().acquisition_timestamp
    stamp.seconds, stamp.nanos = 20, 500
    msg = robot_stamp_to_msg(stamp, skew_nsec=-1_000_000_000)
    assert (msg.sec, msg.nanosec) == (21, 500)


def test_joint_names_follow_the_urdf():
    assert urdf_joint_name("hr.kn") == "rear_right_knee"
    assert urdf_joint_name("fl.hx") == "front_left_hip_x"
    assert urdf_joint_name("arm0.wr1") == "arm_wr1"
    kin = robot_state_pb2.KinematicState()
    joint = kin.joint_states.add(name="fr.hy")
    joint.position.value, joint.velocity.value, joint.load.value = 0.1, 0.2, 0.3
    msg = joint_state_msg(kin, 0, "spot/")
    assert msg.name == ["spot/front_right_hip_y"]
    assert (msg.position[0], msg.velocity[0], msg.effort[0]) == (0.1, 0.2, 0.3)


@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(-5, 5), st.floats(-5, 5))
def test_clamp_velocity_rejects_non_finite_and_bounds_the_rest(vx, vy, wz):
    limit = (1.0, 0.5, 1.0)
    if not math.isfinite(vx):
        with pytest.raises(InvalidVelocityError):
            clamp_velocity(vx, vy, wz, limit)
        return
    (cx, cy, cw), clamped = clamp_velocity(vx, vy, wz, limit)
    assert abs(cx) <= 1.0 and abs(cy) <= 0.5 and abs(cw) <= 1.0
    assert clamped == ((cx, cy, cw) != (vx, vy, wz))


def test_mobility_settings_validate_and_build_params():
    settings_ = MobilitySettings().with_body_pose(-0.1, (1, 0, 0, 0)).with_max_velocity(
        0.8, 0.3, 0.7).with_locomotion_hint(4).with_stairs_mode(2)
    params = settings_.to_proto()
    assert params.body_control.base_offset_rt_footprint.points[0].pose.position.z == -0.1
    assert params.vel_limit.max_vel.linear.x == pytest.approx(0.8)
    assert params.vel_limit.min_vel.angular == pytest.approx(-0.7)
    assert params.locomotion_hint == 4 and params.stairs_mode == 2 and params.stair_hint
    for bad in (lambda m: m.with_body_pose(0.5, (1, 0, 0, 0)),
                lambda m: m.with_body_pose(0.0, (0, 0, 0, 0)),
                lambda m: m.with_body_pose(math.nan, (1, 0, 0, 0)),
                lambda m: m.with_max_velocity(5.0, 0.1, 0.1),
                lambda m: m.with_max_velocity(0.0, 0.1, 0.1),
                lambda m: m.with_locomotion_hint(99),
                lambda m: m.with_stairs_mode(0)):
        with pytest.raises(CommandError):
            bad(MobilitySettings())


def test_credentials_from_environment_and_file(tmp_path):
    env = {"BOSDYN_CLIENT_USERNAME": "u", "BOSDYN_CLIENT_PASSWORD": "s3cret"}
    creds = load_credentials("", env)
    assert (creds.username, creds.password) == ("u", "s3cret")
    assert "s3cret" not in repr(creds) and "s3cret" not in str(creds)
    with pytest.raises(CredentialsError, match="BOSDYN_CLIENT_USERNAME"):
        load_credentials("", {})

    path = tmp_path / "creds"
    path.write_text("# robot login\nusername=alice\npassword=hunter2\n")
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    warnings = []
    assert load_credentials(str(path), {}, warnings.append).password == "hunter2"
    assert warnings == []
    os.chmod(path, 0o644)
    load_credentials(str(path), {}, warnings.append)
    assert warnings and "chmod 600" in warnings[0]
    with pytest.raises(CredentialsError) as missing:
        load_credentials(str(tmp_path / "nope"), {})
    assert "credentials_file" in str(missing.value)
    path.write_text("username=alice\n")
    with pytest.raises(CredentialsError, match="password="):
        load_credentials(str(path), {})


def test_sim_planar_helpers_are_consistent():
    from spot_sim.body import mobility
    pose = Se2(1.0, 2.0, 0.3)
    identity = mobility.compose(pose, mobility.inverse(pose))
    assert (identity.x, identity.y, identity.yaw) == pytest.approx((0, 0, 0), abs=1e-12)
    moved = mobility.integrate(Se2(0, 0, 0), Se2(1.0, 0.0, math.pi / 2), 1.0)
    assert (moved.x, moved.y, moved.yaw) == pytest.approx((2 / math.pi, 2 / math.pi,
                                                           math.pi / 2))


# ---------------------------------------------------------------------- arm trajectories
ARM_URDF = ["arm_sh0", "arm_sh1", "arm_el0", "arm_el1", "arm_wr0", "arm_wr1"]


def test_joint_order_accepts_urdf_robot_and_prefixed_names_in_any_order():
    assert at.joint_order(list(reversed(ARM_URDF))) == [5, 4, 3, 2, 1, 0]
    assert at.joint_order([n.replace("arm_", "arm0.") for n in ARM_URDF]) == list(range(6))
    assert at.joint_order(["spot1/" + n for n in ARM_URDF], "spot1/") == list(range(6))
    for names, text in ((ARM_URDF[:5], "missing"), ([*ARM_URDF[:5], "x"], "unknown"),
                        ([*ARM_URDF, "arm_sh0"], "repeat"), ([*ARM_URDF, "arm_f1x"], "gripper")):
        with pytest.raises(at.TrajectoryError, match=text) as error:
            at.joint_order(names)
        assert error.value.code == at.INVALID_JOINTS


@given(st.integers(1, 2000), st.integers(2, 300))
def test_segments_cover_every_point_and_share_their_boundaries(count, size):
    pieces = at.segments(count, size)
    assert pieces[0][0] == 0 and pieces[-1][1] == count
    assert all(0 < end - start <= size for start, end in pieces)
    for (_, end), (start, _) in itertools.pairwise(pieces):
        assert start == end - 1  # the next piece starts at the last point of this one


def test_tolerances_defaults_overrides_and_removal():
    tol = at.Tolerances.from_goal([("arm_el0", 0.1)], [("arm_sh0", -1), ("arm0.wr1", 0.5)],
                                  0.0, 0.02, 1.0)
    assert tol.path[2] == 0.1 and math.isinf(tol.path[0])
    assert math.isinf(tol.goal[0]) and tol.goal[5] == 0.5 and tol.goal[1] == 0.02
    assert tol.goal_time == 1.0
    error = np.zeros(6)
    assert at.violation(error, tol.goal) is None
    error[1] = 0.03
    assert "arm_sh1" in at.violation(error, tol.goal)
    with pytest.raises(at.TrajectoryError):
        at.Tolerances.from_goal([], [("arm_sh0", math.nan)], 0.0, 0.02, 1.0)


def test_trajectory_validation_and_interpolation():
    traj = at.arm_trajectory(ARM_URDF, [0.0, 1.0], [[0, -1, 1, 0, 0, 0], [1, -1, 1, 0, 0, 0]],
                             [[], []])
    assert traj.desired(0.5)[0] == pytest.approx(0.5)
    assert traj.velocities is None
    with pytest.raises(at.TrajectoryError, match="velocities"):
        at.arm_trajectory(ARM_URDF, [0.0, 1.0], [[0, -1, 1, 0, 0, 0]] * 2, [[0] * 6, []])
    with pytest.raises(at.TrajectoryError, match="negative"):
        at.arm_trajectory(ARM_URDF, [-1.0], [[0, -1, 1, 0, 0, 0]], [[]])


def test_a_stream_reports_the_drivers_added_latency_of_handled_responses_only():
    """Response received -> handled; failed handling is not a latency; diagnostics carry
    p50 and p99."""
    import time

    from spot_driver.acquisition import Scheduler, Stream
    from spot_driver.diagnostics.stream_health import StreamReading, stream_status

    class Slow(Stream):
        name = "slow"

        def __init__(self) -> None:
            super().__init__(rate_hz=50.0, report=lambda message: None)
            self.calls = 0

        def fetch(self):
            return None

        def handle(self, response) -> None:
            self.calls += 1
            if self.calls % 2:
                raise ValueError("every other response is bad")
            time.sleep(0.004)  # sleep: the stand-in robot's round trip

    stream = Slow()
    assert stream.stats.added_ms(0.5, 0.99) is None
    scheduler = Scheduler([stream])
    scheduler.start()
    try:
        deadline = time.monotonic() + 10
        while len(stream.stats.added.samples) < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        scheduler.stop()
    handled = len(stream.stats.added.samples)
    assert handled >= 10 and stream.stats.errors >= handled - 1
    p50, p99 = stream.stats.added_ms(0.5, 0.99)
    assert 4.0 <= p50 <= p99 < 1000.0
    assert stream.stats.added_ms(0.5, window_s=1e-9) is None  # none that recent
    status = stream_status("spot_driver: ", "hw", StreamReading(
        "slow", 50.0, 25.0, True, (30.0, 45.0), 2, 2, 12, 0, 0, 5, added_ms=(p50, p99)))
    values = {v.key: v.value for v in status.values}
    assert float(values["added_latency_ms_p99"]) >= float(values["added_latency_ms_p50"]) >= 4


def test_added_latency_keeps_only_the_windows_samples():
    """Samples older than the window are dropped as new ones come: the kept ones stop
    growing once the window is full (a driver's memory must not creep for minutes)."""
    from spot_driver.acquisition import ADDED_LATENCY_WINDOW_S, StreamStats

    stats = StreamStats()
    period_ns = 10_000_000  # 100 Hz
    window_samples = int(ADDED_LATENCY_WINDOW_S * 1e9) // period_ns
    for i in range(3 * window_samples):
        stats.record_added(i * period_ns, i * period_ns + 1_000_000)
    assert window_samples <= len(stats.added.samples) <= window_samples + 1
    assert stats.added.samples[0][0] >= (3 * window_samples - 1) * period_ns - \
        int(ADDED_LATENCY_WINDOW_S * 1e9)


def test_a_command_is_refused_on_motors_off_only_when_newer_states_say_so_too():
    """A state from before a power-on that just succeeded does not refuse a command: newer
    states are awaited for a moment first."""
    import threading
    import time

    from spot_driver.state_cache import RobotStateCache

    def state(on: bool) -> robot_state_pb2.RobotState:
        out = robot_state_pb2.RobotState()
        out.power_state.motor_power_state = (robot_state_pb2.PowerState.STATE_ON if on
                                             else robot_state_pb2.PowerState.STATE_OFF)
        return out

    cache = RobotStateCache()
    cache.require_ready()  # no state yet: the robot decides
    cache.update(state(False))
    timer = threading.Timer(0.1, lambda: cache.update(state(True)))
    timer.start()
    cache.require_ready(settle_s=2.0)  # the newer state shows the motors on
    timer.join()
    cache.update(state(False))
    start = time.monotonic()
    with pytest.raises(CommandError, match="not powered on"):
        cache.require_ready(settle_s=0.3)
    assert 0.25 < time.monotonic() - start < 10.0  # waited the settle time; returned


def test_a_result_waits_for_a_state_the_robot_took_after_it():
    """A state received later may have been taken earlier (pipelined requests): the wait is
    for the robot's acquisition time; without such a state it gives the newest after the
    timeout."""
    import threading
    import time

    from spot_driver.state_cache import RobotStateCache

    def taken_at(ns: int) -> robot_state_pb2.RobotState:
        out = robot_state_pb2.RobotState()
        stamp = out.kinematic_state.acquisition_timestamp
        stamp.seconds, stamp.nanos = divmod(ns, 1_000_000_000)
        return out

    cache = RobotStateCache()
    cache.update(taken_at(5_000_000_000))
    feeds = [threading.Timer(0.05, lambda: cache.update(taken_at(9_000_000_000))),
             threading.Timer(0.15, lambda: cache.update(taken_at(11_000_000_000)))]
    for feed in feeds:
        feed.start()
    state = cache.wait_acquired_after(10_000_000_000, timeout=5.0)
    assert state.kinematic_state.acquisition_timestamp.seconds == 11  # not the 9 s one
    start = time.monotonic()
    state = cache.wait_acquired_after(20_000_000_000, timeout=0.2)
    assert state.kinematic_state.acquisition_timestamp.seconds == 11  # the newest
    assert 0.15 < time.monotonic() - start < 5.0


def test_the_scheduler_keeps_a_slow_streams_rate_on_its_lanes_and_stops():
    """A fetch that takes nearly two periods: two lanes keep the rate (one lane could not pass
    22 Hz) with at most two requests out; a stream nobody wants is not fetched; a failing
    fetch is reported and the stream goes on."""
    import threading
    import time

    from spot_driver.acquisition import Scheduler, Stream

    class Slow(Stream):
        name = "slow"

        def __init__(self, fail: bool = False, wanted: bool = True) -> None:
            super().__init__(rate_hz=40.0, max_in_flight=2, report=self.reports.append)
            self.fetched, self.most_out, self._out = 0, 0, 0
            self._fail, self._wanted = fail, wanted
            self._lock = threading.Lock()

        reports: list = []

        def wanted(self) -> bool:
            return self._wanted

        def fetch(self):
            with self._lock:
                self._out += 1
                self.most_out = max(self.most_out, self._out)
            time.sleep(0.045)  # sleep: the stand-in's round trip, 1.8 times the 25 ms period
            with self._lock:
                self._out -= 1
                self.fetched += 1
            if self._fail:
                raise RuntimeError("camera gone")
            return b"frame"

        def handle(self, response) -> None:
            self.stats.delivered += 1

    slow, failing, unwanted = Slow(), Slow(fail=True), Slow(wanted=False)
    scheduler = Scheduler([slow, failing, unwanted])
    scheduler.start()
    time.sleep(1.0)  # sleep: the span the scheduler runs for
    scheduler.stop()
    fetched = slow.fetched
    assert holds(lambda: slow.fetched == fetched, 0.1)  # nothing after stop()
    assert 30 <= slow.stats.delivered <= 42, slow.stats.delivered  # 40 Hz, not 1/45 ms
    assert slow.most_out == 2
    assert failing.stats.errors >= 20 and failing.stats.last_error == "camera gone"
    assert unwanted.fetched == 0 and unwanted.stats.requested == 0


def test_streams_of_one_rate_take_evenly_spread_turns():
    from spot_driver.acquisition import phases

    camera, lidar, state = 1 / 15, 0.1, 0.02
    offsets = phases([camera] * 5 + [lidar, state])
    cameras = sorted(offsets[:5])
    assert cameras[0] == 0.0
    assert np.allclose(np.diff(cameras), camera / 5)  # 13.3 ms apart, not bunched
    assert all(0.0 <= o < p for o, p in zip(offsets, [camera] * 5 + [lidar, state], strict=True))
    assert phases([]) == []


def test_a_stream_keeps_its_phase_through_an_idle_spell_and_a_slow_call():
    """Ticks stay on start + k * period after the stream was unwanted for a while and after
    a call three and a half periods long (ticks are skipped, not shifted): a shifted stream
    would run half a period off its ticks, while load only makes calls a little late."""
    import time

    from spot_driver.acquisition import Scheduler, Stream

    period = 0.1

    class Camera(Stream):
        name = "camera"

        def __init__(self) -> None:
            super().__init__(rate_hz=1 / period, max_in_flight=1)
            self.calls: list[float] = []
            self.since = time.monotonic() + 0.33  # unwanted for 0.33 s

        def wanted(self) -> bool:
            return time.monotonic() >= self.since

        def fetch(self):
            self.calls.append(time.monotonic())
            if len(self.calls) == 2:
                time.sleep(3.5 * period)  # sleep: a call this late is what is tested

        def handle(self, response) -> None:
            pass

    stream = Camera()
    scheduler = Scheduler([stream])
    start = time.monotonic()
    scheduler.start()
    deadline = start + 30.0
    while len(stream.calls) < 12 and time.monotonic() < deadline:
        time.sleep(0.05)
    scheduler.stop()
    assert len(stream.calls) >= 12, stream.calls
    errors = [((t - start) / period + 0.5) % 1.0 - 0.5 for t in stream.calls]  # in periods
    assert abs(float(np.median(errors))) < 0.25, errors
    assert stream.stats.skipped >= 2


def test_a_supervisor_never_started_stops_quietly():
    """A driver whose nodes fail to start stops its supervisor before starting it: the
    startup error must not be hidden by a second one."""
    from spot_driver.supervisor import ConnectionSupervisor

    ConnectionSupervisor(connection=None).stop()
