"""Commands under concurrency and load, faults of the robot process itself, and shutdown, end
to end: ROS callers -> driver -> gRPC -> a simulated Spot running as its own process (so it
can be frozen with SIGSTOP, killed and started again like a robot computer)."""

import re
import signal
import threading
import time

import pytest
from bosdyn.client.lease import LeaseClient
from bosdyn.client.robot_state import RobotStateClient
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from ros_harness import DriverProcess, RosClient, SimProcess, burst
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from conftest import PASSWORD, USERNAME, connect
from spot_msgs.action import ArmJointMove, Trajectory

CALLERS = 200
ANSWER_LIMIT = 30.0  # s for all CALLERS to be answered: a safety bound (what a user would
# call broken), not a performance figure (benchmarks/ measure those)
RESUME_LIMIT = 3.0  # s from the robot answering again to topics flowing
SHUTDOWN_LIMIT = 3.0
LEASE_MESSAGES = ("no lease", "lease held by", "taken by")
DRIVER_PARAMS = {"auto_claim": "true", "auto_power_on": "true", "auto_stand": "true",
                 "cameras": "[frontleft]"}


@pytest.fixture(scope="module")
def robot_process(tmp_path_factory):
    logs = tmp_path_factory.mktemp("logs")
    sim = SimProcess(tmp_path_factory.mktemp("certs"), logs / "sim.log", USERNAME, PASSWORD,
                     args=("--arm",))
    try:
        yield sim, logs
    finally:
        sim.stop()


@pytest.fixture(scope="module")
def world(robot_process):
    sim, logs = robot_process
    ros = RosClient("concurrency_test_client")
    ros.subscribe("/joint_states", JointState)
    ros.subscribe("/odometry", Odometry)
    driver = DriverProcess(sim, logs / "driver.log", USERNAME, PASSWORD, params=DRIVER_PARAMS)
    sdk = connect(sim)
    try:
        assert ros.wait_for(lambda: "stand: standing" in driver.output(), 30), driver.output()
        yield sim, driver, ros, sdk
    finally:
        sdk.time_sync.stop()
        ros.close()
        driver.stop()


def lease_owner(sdk) -> str:
    """The body lease owner's client name, as the robot reports it ("" when nobody)."""
    resources = sdk.ensure_client(LeaseClient.default_service_name).list_leases(timeout=2.0)
    body = next(r for r in resources if r.resource == "mobility")  # a leaf of "body"
    return body.lease_owner.client_name if body.HasField("lease_owner") else ""


def concurrent_calls(ros: RosClient, service: str, count: int) -> tuple[list, float]:
    return burst(ros, Trigger, service, count, ANSWER_LIMIT + 10)


def assert_all_succeeded(responses: list, elapsed: float) -> None:
    unanswered = sum(r is None for r in responses)
    failures = {r.message for r in responses if r is not None and not r.success}
    assert unanswered == 0, f"{unanswered} of {len(responses)} callers never answered"
    assert not failures, failures
    assert elapsed <= ANSWER_LIMIT, f"{len(responses)} answers took {elapsed:.2f} s"


def trigger(ros, name: str):
    return ros.call(Trigger, f"/{name}")


def test_200_concurrent_stops_are_all_answered_and_succeed(world):
    _sim, _driver, ros, sdk = world
    responses, elapsed = concurrent_calls(ros, "/stop", CALLERS)
    assert_all_succeeded(responses, elapsed)
    assert lease_owner(sdk).startswith("spot_ros2_driver")


def test_stops_succeed_while_stand_sit_cmd_vel_and_a_trajectory_run(world):
    _sim, _driver, ros, _sdk = world
    assert trigger(ros, "stand").success
    trajectory = ros.action_client(Trajectory, "/trajectory")
    goal = Trajectory.Goal()
    goal.target_pose.header.frame_id = "body"
    goal.target_pose.pose.position.x = 3.0
    goal.target_pose.pose.orientation.w = 1.0
    goal_handle = ros.wait_future(trajectory.send_goal_async(goal))
    assert goal_handle.accepted

    stop_driving = threading.Event()
    publisher = ros.publisher(Twist, "/cmd_vel", 10)

    def drive() -> None:
        twist = Twist()
        twist.angular.z = 0.2
        while not stop_driving.wait(0.02):  # 50 Hz
            publisher.publish(twist)

    posture_answers: list = []

    def postures() -> None:
        for name in ("stand", "sit") * 5:
            posture_answers.append(trigger(ros, name))

    threads = [threading.Thread(target=drive), threading.Thread(target=postures)]
    for thread in threads:
        thread.start()
    try:
        assert ros.wait_for(lambda: len(posture_answers) >= 1, 30)  # both load sources run
        responses, elapsed = concurrent_calls(ros, "/stop", CALLERS)
    finally:
        stop_driving.set()
        for thread in threads:
            thread.join(timeout=60)
        ros.node.destroy_publisher(publisher)
    assert_all_succeeded(responses, elapsed)
    # Stand and sit were answered too; none was refused for a lease the driver itself holds.
    assert len(posture_answers) == 10
    for answer in posture_answers:
        assert not any(m in answer.message for m in LEASE_MESSAGES), answer.message
    result = ros.wait_future(goal_handle.get_result_async(), timeout=30).result
    assert not any(m in result.message for m in LEASE_MESSAGES), result.message


@pytest.mark.parametrize("action", ["stand", "trajectory", "arm"])
def test_stop_during_a_long_action_succeeds(world, action):
    _sim, _driver, ros, _sdk = world
    assert trigger(ros, "stand").success
    still = joint_positions(ros)
    if action == "stand":
        started = threading.Thread(target=trigger, args=(ros, "sit"))
        started.start()
    elif action == "trajectory":
        client = ros.action_client(Trajectory, "/trajectory")
        goal = Trajectory.Goal()
        goal.target_pose.header.frame_id = "body"
        goal.target_pose.pose.position.x = 2.0
        goal.target_pose.pose.orientation.w = 1.0
        handle = ros.wait_future(client.send_goal_async(goal))
        assert handle.accepted
    else:
        client = ros.action_client(ArmJointMove, "/arm/joint_move")
        goal = ArmJointMove.Goal()
        goal.positions = [0.5, -1.0, 1.5, 0.0, 0.5, 0.0]
        goal.duration.sec = 4
        handle = ros.wait_future(client.send_goal_async(goal))
        assert handle.accepted
    assert ros.wait_for(lambda: moved(still, joint_positions(ros)), 10), "the robot never moved"
    response = trigger(ros, "stop")
    assert response.success, response.message
    # the robot stopped: nothing moves over half a second, within a few seconds of the stop
    assert ros.wait_for(lambda: not moving(ros, 0.5), 5), "the robot kept moving after stop"
    if action == "stand":  # the interrupted sit was answered
        started.join(timeout=15)
        assert not started.is_alive(), "the interrupted sit was never answered"
    else:  # the interrupted goal ended, and not as reached
        result = ros.wait_future(handle.get_result_async(), timeout=15).result
        assert not result.success and result.message, result


def moving(ros, over: float) -> bool:
    """Whether a joint or the body moves by more than ``moved``'s threshold over ``over`` s."""
    before = joint_positions(ros)
    ros.next_messages("/joint_states", max(2, int(over * 50)))  # the 50 Hz state, ``over`` s
    return moved(before, joint_positions(ros))


def joint_positions(ros) -> dict:
    """Every joint's position and the body's place in odom (the simulated legs do not swing
    while walking)."""
    latest = ros.latest("/joint_states")
    body = ros.latest("/odometry").pose.pose.position
    return {**dict(zip(latest.name, latest.position, strict=True)), "x": body.x, "y": body.y}


def moved(before: dict, now: dict, by: float = 0.01) -> bool:
    """Whether a joint (rad) or the body (m) is ``by`` away from where it was: the action is
    under way."""
    return any(abs(now[name] - position) > by for name, position in before.items())


def motors_on(sdk) -> bool:
    state = sdk.ensure_client(RobotStateClient.default_service_name).get_robot_state()
    return state.power_state.motor_power_state == state.power_state.MOTOR_POWER_STATE_ON


def assert_recovers(sim, driver, ros, sdk, event_time: float) -> float:
    """Topics back within RESUME_LIMIT of ``event_time`` (the robot answering again), the
    lease re-acquired, and commands working again with no lease message. The robot cut motor
    power meanwhile (the driver's e-stop endpoint could not check in), so the first stop may
    be refused for that, and power_on, stand and stop then succeed. Returns the resume
    time."""

    def joint_states_after(t: float) -> bool:
        with ros._lock:
            return any(stamp > t for stamp, _ in ros.messages["/joint_states"][-5:])

    assert ros.wait_for(lambda: joint_states_after(event_time), RESUME_LIMIT + 5), \
        driver.output()[-3000:]
    with ros._lock:
        resumed = next(s for s, _ in ros.messages["/joint_states"] if s > event_time)
    assert resumed - event_time <= RESUME_LIMIT, resumed - event_time
    assert ros.wait_for(lambda: lease_owner(sdk).startswith("spot_ros2_driver"), 5.0), \
        driver.output()[-3000:]
    powered = motors_on(sdk)
    first = trigger(ros, "stop")
    if not first.success:  # a refusal only for the reason the robot really had
        assert "not powered on" in first.message, first.message
        assert not (powered and motors_on(sdk)), f"refused while powered: {first.message}"
    for command in ("power_on", "stand", "stop"):
        response = trigger(ros, command)
        assert response.success, f"{command}: {response.message}"
    assert driver.process.poll() is None
    return resumed - event_time


def test_robot_process_frozen_6_s_then_resumed(world):
    sim, driver, ros, sdk = world
    sim.freeze()
    time.sleep(6.0)  # sleep: the robot frozen this long is what is tested
    sim.thaw()
    assert_recovers(sim, driver, ros, sdk, time.monotonic())


def test_robot_process_killed_and_restarted_on_the_same_port(world):
    sim, driver, ros, sdk = world
    sim.restart()
    restarted = time.monotonic()
    sdk.time_sync.stop()
    fresh = connect(sim)  # the test's own SDK session does not survive a reboot either
    try:
        assert_recovers(sim, driver, ros, fresh, restarted)
    finally:
        fresh.time_sync.stop()


# ---------------------------------------------------------------------------------- shutdown
BAD_SHUTDOWN_LINES = re.compile(r"Traceback|never retrieved|context is invalid|"
                                r"KeyboardInterrupt|Failed to publish")


@pytest.mark.parametrize("signals", [(signal.SIGINT,), (signal.SIGINT, signal.SIGINT),
                                     (signal.SIGTERM,)], ids=["sigint", "sigint-twice",
                                                              "sigterm"])
def test_signal_stops_streams_returns_lease_and_exits_cleanly(tmp_path, signals):
    sim = SimProcess(tmp_path / "certs", tmp_path / "sim.log", USERNAME, PASSWORD)
    ros = RosClient("shutdown_test_client")
    ros.subscribe("/joint_states", JointState)
    driver = DriverProcess(sim, tmp_path / "driver.log", USERNAME, PASSWORD,
                           params=DRIVER_PARAMS)
    sdk = connect(sim)
    try:
        assert ros.wait_for(lambda: "stand: standing" in driver.output(), 30), driver.output()
        assert ros.wait_for(lambda: len(ros.received("/joint_states")) > 10, 5)
        started = time.monotonic()
        for sig in signals:
            driver.process.send_signal(sig)
            time.sleep(0.05)  # sleep: signals 50 ms apart, as a user's repeated Ctrl-C
        driver.process.wait(timeout=SHUTDOWN_LIMIT + 2)
        took = time.monotonic() - started
        output = driver.output()
        assert driver.process.returncode == 0, output[-3000:]
        assert took <= SHUTDOWN_LIMIT, took
        assert not BAD_SHUTDOWN_LINES.search(output), output[-3000:]
        assert lease_owner(sdk) == ""  # returned
        state = sdk.ensure_client(RobotStateClient.default_service_name).get_robot_state()
        velocity = state.kinematic_state.velocity_of_body_in_odom.linear
        assert abs(velocity.x) + abs(velocity.y) < 0.05
    finally:
        sdk.time_sync.stop()
        ros.close()
        driver.stop()
        sim.stop()
