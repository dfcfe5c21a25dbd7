"""Joint-level Spot end to end: ROS client -> driver (low_level capability) -> the joint-control
API's two gRPC streams -> simulated robot -> 333 Hz topics back to ROS."""

import gc
import os
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from nav_msgs.msg import Odometry
from ros_harness import DriverProcess, RosClient, SimProcess
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64
from std_srvs.srv import SetBool
from tf2_msgs.msg import TFMessage

from conftest import PASSWORD, USERNAME
from spot_msgs.msg import FootStateArray, JointCommand

LEGS = [f"{leg}_{joint}" for leg in ("front_left", "front_right", "rear_left", "rear_right")
        for joint in ("hip_x", "hip_y", "knee")]
# Time sync over a link whose two directions differ (the field profile: requests 3-15 ms,
# responses 5-40 ms) misplaces robot time by up to half the difference: stamps can then land
# a little ahead of the local clock.
FIELD = os.environ.get("SPOT_SIM_PROFILE") == "field"
SYNC_ERROR_NS = 25e6 if FIELD else 0.0
# a safety bound (the figure is benchmarks/low_level.py's): stamps from the robot's clock, not
# stale by more than the field profile's longest stall (300 ms) and a margin
MAX_AGE_NS = 500e6
K_Q_P = [624.0, 936.0, 286.0] * 4  # the SDK examples' gains (hx, hy, kn per leg)
K_QD_P = [5.20, 5.20, 2.04] * 4
SQUAT = np.array([0.15, 1.3, -2.25, -0.15, 1.3, -2.25, 0.15, 1.3, -2.25, -0.15, 1.3, -2.25])
STEP_LIMIT = 0.3  # rad: the squat's commands stay this close to the measured joints
MOVE_DEADLINE_S = 10.0  # for each half of the squat
TOPICS = {"/low_level/joint_states": JointState, "/imu": Imu, "/low_level/odometry": Odometry,
          "/low_level/contacts": FootStateArray, "/low_level/command_latency": Float64,
          "/diagnostics": DiagnosticArray}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    logs = tmp_path_factory.mktemp("logs")
    # The robot in its own process, as in production: this process's ROS client must not
    # share the simulated robot's interpreter (its GIL) at 333 Hz.
    sim = SimProcess(tmp_path_factory.mktemp("certs"), logs / "sim.log", USERNAME, PASSWORD)
    try:
        ros = RosClient("low_level_test_client")
        for topic, msg_type in TOPICS.items():
            ros.subscribe(topic, msg_type)
        ros.subscribe("/tf_static", TFMessage, latched=True)
        driver = DriverProcess(sim, logs / "driver.log", USERNAME,
                               PASSWORD, params={
                                   "auto_claim": "true", "auto_power_on": "true",
                                   "auto_stand": "true", "enable_low_level": "true",
                                   "cameras": "[frontleft,frontright,left,right,back]"})
        streams = DriverProcess(sim, logs / "low_level.log", USERNAME, PASSWORD,
                                module="spot_driver.low_level")
        try:
            assert ros.wait_for(lambda: "stand: standing" in driver.output(), 30), \
                driver.output()
            assert ros.wait_for(lambda: ros.received("/low_level/joint_states"), 10), \
                streams.output()
            yield driver, streams, ros
        finally:
            codes = [streams.stop(), driver.stop()]  # the readers still there
            ros.close()
        assert codes == [0, 0], codes
        for process in (driver, streams):
            log = process.log_path.read_text()
            assert "Traceback" not in log, log[-3000:]
            # SIGINT ends the streams before the ROS context: nothing is published into a dead one
            assert "context is invalid" not in log, log[-3000:]
    finally:
        sim.stop()


def _positions(ros) -> np.ndarray:
    msg = ros.latest("/low_level/joint_states")
    return np.array(msg.position)


def _command(position, gains=True, names=LEGS, **fields) -> JointCommand:
    msg = JointCommand(name=list(names), position=[float(p) for p in position])
    if gains:
        msg.k_q_p, msg.k_qd_p = K_Q_P[:len(names)], K_QD_P[:len(names)]
    for key, value in fields.items():
        setattr(msg, key, value)
    return msg


def test_every_stream_message_is_published_at_333_hz_with_robot_stamps(world):
    _, _, ros = world
    topics = ("/low_level/joint_states", "/imu", "/low_level/odometry", "/low_level/contacts")
    assert ros.wait_for(lambda: all(ros.latest(t) is not None for t in topics), 10)
    since = time.monotonic()

    def counts() -> dict:
        with ros._lock:
            return {t: sum(1 for at, _ in ros.messages[t] if at >= since) for t in topics}

    assert ros.wait_for(lambda: min(counts().values()) >= 500, 10), counts()
    elapsed = time.monotonic() - since
    rates = {t: n / elapsed for t, n in counts().items()}
    # a safety bound (the figure is benchmarks/low_level.py's): 333 Hz not halved; that no
    # sample is merged into another is the stamps' check below
    assert all(rate > 333 / 2 for rate in rates.values()), rates
    imus = ros.received("/imu")[-300:]
    stamps = np.array([m.header.stamp.sec * 1e9 + m.header.stamp.nanosec for m in imus])
    assert (np.diff(stamps) > 0).all()  # each packet its own sample time
    assert abs(np.median(np.diff(stamps)) / 1e6 - 3.0) < 0.1
    imu = imus[-1]
    assert imu.header.frame_id == "body"
    assert abs(imu.linear_acceleration.z - 9.81) < 0.05  # standing still: gravity only
    joints = ros.latest("/low_level/joint_states")
    assert list(joints.name) == LEGS and len(joints.effort) == 12
    now = time.time_ns()
    age = now - (joints.header.stamp.sec * 1_000_000_000 + joints.header.stamp.nanosec)
    # acquisition time, through time sync, into local time
    assert -SYNC_ERROR_NS <= age < MAX_AGE_NS + SYNC_ERROR_NS, age
    odometry = ros.latest("/low_level/odometry")
    assert (odometry.header.frame_id, odometry.child_frame_id) == ("odom", "body")
    assert [s.contact for s in ros.latest("/low_level/contacts").states] == [1, 1, 1, 1]
    mounts = [t for m in ros.received("/tf_static") for t in m.transforms
              if t.child_frame_id == "imu"]
    assert mounts and mounts[0].header.frame_id == "body"


def test_refused_joint_commands_are_never_sent(world):
    _, streams, ros = world
    pub = ros.publisher(JointCommand, "/low_level/joint_command", 10)
    assert ros.wait_for(lambda: pub.get_subscription_count() > 0, 10)
    before = _positions(ros)
    start = before[:12].copy()
    bad = {
        "not finite": _command(np.where(np.arange(12) == 2, np.nan, start)),
        "unknown name": _command(start[:1], names=["front_left_elbow"]),
        "outside the limits": _command(np.where(np.arange(12) == 2, -3.5, start)),
        "no gains": _command(start, gains=False),
        "lengths": _command(start, velocity=[0.0] * 5),
    }
    for count, (case, msg) in enumerate(bad.items(), start=1):
        pub.publish(msg)
        assert ros.wait_for(lambda n=count: streams.output().count("joint command refused")
                            >= n, 5), case
        time.sleep(1.1)  # sleep: refusals are logged at most once a second
    output = streams.output()
    for reason in ("not finite", "unknown joint names", "outside its limits",
                   "no gains sent yet", "values for 12 joints"):
        assert reason in output, (reason, output[-2000:])
    assert np.abs(_positions(ros) - before).max() < 1e-4  # nothing reached the robot
    ros.node.destroy_publisher(pub)


def test_a_squat_through_the_joint_command_topic(world):
    driver, _streams, ros = world
    try:
        response = ros.call(SetBool, "/low_level/activate", SetBool.Request(data=True))
    except AssertionError as exc:  # where the driver waits, for the next one who reads this
        raise AssertionError(f"{exc}\n{driver.stacks()[-12000:]}") from None
    assert response.success, response.message
    pub = ros.publisher(JointCommand, "/low_level/joint_command", 10)
    assert ros.wait_for(lambda: pub.get_subscription_count() > 0, 10)
    start = _positions(ros)[:12].copy()
    load = list(ros.latest("/low_level/joint_states").effort)
    latencies_before = len(ros.received("/low_level/command_latency"))
    states_before = len(ros.received("/low_level/joint_states"))
    odometry_before = len(ros.received("/low_level/odometry"))
    # A 200 Hz command source must not pause: this process keeps every message it received,
    # and a full collection of them stalls it 80-180 ms, past the 100 ms watchdog (which then
    # rightly ends the stream). Real controllers keep the collector out of their loop too.
    gc.freeze()
    gc.disable()
    try:
        # As a controller does: hold the pose the robot is in until the stream is live (the
        # robot answers the first command), then move. Opening a stream can take longer than
        # one command's 50 ms horizon on a busy machine; a trajectory started before then
        # runs away from a robot that has not followed yet.
        deadline = time.monotonic() + 5.0
        while len(ros.received("/low_level/command_latency")) == latencies_before:
            assert time.monotonic() < deadline, "the joint command stream never went live"
            pub.publish(_command(start, load=load))
            time.sleep(0.005)
        # Down in 1.5 s and up in 1.5 s at 200 Hz, each command within STEP_LIMIT of where the
        # joints are (as a controller limits its step): a stream that a stall on this loaded
        # machine ended reopens near the robot, not at a target that ran away (TOO_DISTANT).
        for a, b in ((start, SQUAT), (SQUAT, start)):
            t0 = time.monotonic()
            while (elapsed := time.monotonic() - t0) < MOVE_DEADLINE_S:
                here = _positions(ros)[:12]
                if elapsed >= 1.5 and np.abs(here - b).max() < 0.05:
                    break
                target = a + (b - a) * min(1.0, elapsed / 1.5)
                pub.publish(_command(here + np.clip(target - here, -STEP_LIMIT, STEP_LIMIT),
                                     load=load))
                time.sleep(0.005)
    finally:
        gc.enable()
        gc.unfreeze()
    knees = np.array([m.position[2::3]
                      for m in ros.received("/low_level/joint_states")[states_before:]])
    heights = [m.pose.pose.position.z
               for m in ros.received("/low_level/odometry")[odometry_before:]]
    assert np.abs(knees.min(axis=0) - SQUAT[2]).max() < 0.15, knees.min(axis=0)
    assert min(heights) < 0.36, min(heights)
    latencies = [m.data for m in ros.received("/low_level/command_latency")[latencies_before:]]
    # a safety bound (the figure is the benchmark's): commands arrive within their 50 ms horizon
    assert len(latencies) > 200 and np.percentile(latencies, 50) < 0.05, latencies[:20]
    # Commands stop: the watchdog ends the stream and the robot stands again by itself.
    assert ros.wait_for(lambda: abs(ros.latest("/low_level/odometry").pose.pose.position.z
                                    - 0.52) < 0.02, 5)
    assert ros.wait_for(lambda: any(
        s.name.endswith("low_level") and "watchdog stops" in [v.key for v in s.values]
        and dict((v.key, v.value) for v in s.values)["watchdog stops"] != "0"
        for m in ros.received("/diagnostics")[-5:] for s in m.status), 5)
    ros.node.destroy_publisher(pub)

