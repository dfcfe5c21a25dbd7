"""The core driver end to end: ROS client -> driver process -> gRPC -> simulated Spot -> ROS."""

import itertools
import math
import time

import pytest
import rclpy.duration
from bosdyn.client.lease import LeaseClient
from control_msgs.action import FollowJointTrajectory
from geometry_msgs.msg import Pose, Twist, TwistStamped
from nav_msgs.msg import Odometry
from ros_harness import DriverProcess, RosClient, driver_world
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectoryPoint

from conftest import PASSWORD, USERNAME, connect, part, running_sim
from spot_msgs.action import ArmJointMove, Gripper, Trajectory
from spot_msgs.msg import (
    BatteryStateArray,
    BehaviorFaultState,
    EStopStateArray,
    FootStateArray,
    LeaseArray,
    MobilityParams,
    PowerState,
    SystemFaultState,
    TimeSyncState,
    WiFiState,
)
from spot_msgs.srv import (
    Claim,
    SetLocomotion,
    SetStairsMode,
    SetStandHeight,
    SetVelocityLimit,
)
from spot_sim.body.base import Base
from spot_sim.body.commands import CommandBook
from spot_sim.body.legs import Legs

STATUS_TOPICS = {
    "/status/battery": BatteryStateArray, "/status/power": PowerState,
    "/status/estop": EStopStateArray, "/status/wifi": WiFiState,
    "/status/feet": FootStateArray, "/status/system_faults": SystemFaultState,
    "/status/behavior_faults": BehaviorFaultState, "/status/leases": LeaseArray,
    "/status/time_sync": TimeSyncState,
}
CMD_DURATION = 0.25
STARTUP_LIMIT = 30.0  # s: a driver that has not published by then is broken


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One simulated robot, one driver process and one ROS client for the whole module."""
    statuses = tuple((topic, msg_type, {"reliable": False})
                     for topic, msg_type in STATUS_TOPICS.items())
    # The core topics and services only: GraphNav and choreography (their own e2e tests) add
    # some 60 service/action endpoints that a new subscriber's discovery must also wade
    # through before the first messages arrive.
    with driver_world(tmp_path_factory, "core_test_client",
                      params={"cmd_duration": CMD_DURATION, "enable_autonomy": False,
                              "enable_choreography": False},
                      subscriptions=(("/joint_states", JointState), ("/odometry", Odometry),
                                     ("/tf", TFMessage),
                                     ("/tf_static", TFMessage, {"latched": True}),
                                     ("/status/mobility_params", MobilityParams,
                                      {"latched": True}),
                                     *statuses)) as world:
        yield world


def odom(ros) -> Odometry:
    return ros.latest("/odometry")


def trigger(ros, name: str):
    return ros.call(Trigger, f"/{name}")


def test_every_topic_arrives_with_a_valid_tree(world):
    sim, driver, ros = world
    topics = ["/joint_states", "/odometry", "/tf", "/tf_static", "/status/mobility_params",
              *STATUS_TOPICS]
    cameras = {"frontleft_fisheye", "back_fisheye"}  # mounts from the first image responses

    def static_frames() -> set[str]:
        return {t.child_frame_id for m in ros.received("/tf_static") for t in m.transforms}

    # A bound for a defect (a topic or mount that never comes), not a start-up figure.
    assert ros.wait_for(lambda: all(ros.received(t) for t in topics)
                        and cameras <= static_frames(), timeout=STARTUP_LIMIT), \
        {t: len(ros.received(t)) for t in topics}
    firsts = {t: round(ros.messages[t][0][0] - driver.started, 2) for t in topics}
    print("first message after driver start (s):", firsts)

    joints = ros.latest("/joint_states")
    assert joints.name[:3] == ["front_left_hip_x", "front_left_hip_y", "front_left_knee"]
    assert len(joints.name) == 12 and len(joints.position) == 12

    parents = {}
    for message in ros.received("/tf_static") + ros.received("/tf")[-5:]:
        for t in message.transforms:
            assert parents.get(t.child_frame_id, t.header.frame_id) == t.header.frame_id, \
                f"{t.child_frame_id} has two parents"
            parents[t.child_frame_id] = t.header.frame_id
    roots = {p for p in parents.values() if p not in parents}
    assert roots == {"odom"}
    for frame in parents:  # no cycles: every frame reaches the root
        seen, current = set(), frame
        while current in parents:
            assert current not in seen
            seen.add(current)
            current = parents[current]
    for frame in ("body", "vision", "gpe", "flat_body", "frontleft_fisheye", "back_fisheye"):
        assert frame in parents
    static_children = {t.child_frame_id for m in ros.received("/tf_static") for t in m.transforms}
    assert "frontleft_fisheye" in static_children and "body" not in static_children

    # Stamps are local time (the robot clock runs 12 s ahead) and never go backwards.
    stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9
              for m in ros.received("/joint_states")]
    assert abs(stamps[-1] - time.time()) < 0.5
    assert all(b >= a for a, b in itertools.pairwise(stamps))
    sync = ros.latest("/status/time_sync")
    assert sync.synchronized
    assert sync.clock_skew.sec + sync.clock_skew.nanosec * 1e-9 == pytest.approx(
        sim.config.clock_offset_sec, abs=0.05)
    assert ros.latest("/status/battery").battery_states[0].charge_percentage > 0


def test_statuses_go_out_with_every_robot_state(world):
    """status_rate defaults to robot_state_rate: each state's statuses carry its stamp."""
    _sim, _driver, ros = world
    start = time.monotonic()

    def since_start(topic: str) -> list:
        return [m for t, m in ros.messages[topic] if t >= start]

    assert ros.wait_for(lambda: len(since_start("/joint_states")) >= 100, timeout=20.0)
    joints = since_start("/joint_states")
    for topic in ("/status/feet", "/status/power", "/status/battery", "/status/estop",
                  "/status/wifi", "/status/system_faults", "/status/behavior_faults"):
        assert len(since_start(topic)) >= 0.9 * len(joints), topic
    joint_stamps = {(m.header.stamp.sec, m.header.stamp.nanosec) for m in joints}
    for topic in ("/status/feet", "/status/estop", "/status/wifi"):
        stamp = since_start(topic)[-1].header.stamp
        assert (stamp.sec, stamp.nanosec) in joint_stamps, topic
    feet = since_start("/status/feet")[-1]
    assert len(feet.states) == 4 and all(f.contact == f.CONTACT_MADE for f in feet.states)


def test_services_fail_clearly_without_lease_and_change_nothing(world):
    sim, _, ros = world
    commands_before = len(part(sim.robot, CommandBook).commands)
    for name in ("power_on", "stand", "sit", "stop", "self_right"):
        response = trigger(ros, name)
        assert not response.success
        assert "lease" in response.message and "claim" in response.message
    assert len(part(sim.robot, CommandBook).commands) == commands_before
    assert not sim.robot.powered


def test_cmd_vel_without_lease_does_not_move_the_robot(world):
    sim, driver, ros = world
    publisher = ros.publisher(Twist, "/cmd_vel", 10)
    try:
        assert ros.wait_for(lambda: publisher.get_subscription_count() > 0, timeout=5.0)
        before = len(part(sim.robot, CommandBook).commands)
        publisher.publish(Twist())
        # the driver's answer to that message: its log line (the first of this driver's)
        assert ros.wait_for(lambda: "cmd_vel ignored: no lease" in driver.output(), 5.0)
        assert len(part(sim.robot, CommandBook).commands) == before
    finally:
        ros.node.destroy_publisher(publisher)


def test_stand_without_power_says_so(world):
    sim, _, ros = world
    assert trigger(ros, "claim").success
    response = trigger(ros, "stand")
    assert not response.success and "not powered on" in response.message
    assert not part(sim.robot, Legs).posture.standing


def test_claim_power_stand_walk_and_stop_when_commands_stop(world):
    sim, _, ros = world
    assert trigger(ros, "claim").success
    assert trigger(ros, "power_on").success
    assert trigger(ros, "stand").success
    assert sim.robot.standing

    publisher = ros.publisher(Twist, "/cmd_vel", 10)
    try:
        _walk_and_stop(sim, ros, publisher)
    finally:
        ros.node.destroy_publisher(publisher)


def _walk_and_stop(sim, ros, publisher) -> None:
    # commands published before the driver's subscription matched would be lost
    assert ros.wait_for(lambda: publisher.get_subscription_count() > 0, timeout=5.0)
    start = odom(ros).pose.pose.position
    twist = Twist()
    twist.linear.x = 0.5
    t_end = time.monotonic() + 2.0
    while time.monotonic() < t_end:
        publisher.publish(twist)
        time.sleep(0.05)
    last_sent_wall = time.time()
    # Wait for the robot to come to rest on its own (a measured velocity is never exactly 0:
    # at rest is within the sensor noise), then check when it did: its command expires after
    # CMD_DURATION, then it brakes at the robot's deceleration.
    at_rest = 0.05  # m/s
    assert ros.wait_for(lambda: abs(odom(ros).twist.twist.linear.x) < at_rest, timeout=3.0)
    stopped = [m for m in ros.received("/odometry")
               if abs(m.twist.twist.linear.x) < at_rest and
               m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 > last_sent_wall - 0.05]
    first_rest = stopped[0].header.stamp.sec + stopped[0].header.stamp.nanosec * 1e-9
    braking = twist.linear.x / sim.config.linear_decel
    # under the field profile a call may stall on the link: the last command on its way in,
    # and the state request that would have shown the robot at rest
    field = sim.config.field
    stalls = 2 * field.spike_latency[1] if field.spike_probability else 0.0
    assert first_rest - last_sent_wall < CMD_DURATION + braking + stalls + 0.1
    end = odom(ros).pose.pose.position
    assert end.x - start.x == pytest.approx(1.0, rel=0.15)
    assert abs(end.y - start.y) < 0.05


def test_bad_cmd_vel_is_rejected_or_clamped(world):
    sim, driver, ros = world
    publisher = ros.publisher(Twist, "/cmd_vel", 10)
    before = odom(ros).pose.pose.position
    nan = Twist()
    nan.linear.x = math.nan
    assert ros.wait_for(lambda: publisher.get_subscription_count() > 0, timeout=5.0)
    publisher.publish(nan)
    assert ros.wait_for(lambda: "cmd_vel rejected" in driver.output(), 5.0)
    after = odom(ros).pose.pose.position
    assert math.hypot(after.x - before.x, after.y - before.y) < 1e-6
    assert all(math.isfinite(c.velocity.x) for c in part(sim.robot, CommandBook).commands.values()
               if c.velocity is not None)
    assert "cmd_vel rejected" in driver.output()

    huge = Twist()
    huge.linear.x = 1e9
    peak = 0.0
    t_end = time.monotonic() + 1.5
    while time.monotonic() < t_end:
        publisher.publish(huge)
        time.sleep(0.05)
        peak = max(peak, odom(ros).twist.twist.linear.x)
    assert 0.5 < peak <= 1.0 + 0.05  # clamped to max_linear_velocity_x (measured: + noise)
    assert "clamped" in driver.output()
    ros.node.destroy_publisher(publisher)
    assert ros.wait_for(lambda: abs(odom(ros).twist.twist.linear.x) < 0.05, timeout=3.0)


def test_trajectory_reaches_a_goal_one_metre_ahead(world):
    _sim, _, ros = world
    client = ros.action_client(Trajectory, "/trajectory")
    start = odom(ros).pose.pose
    goal = Trajectory.Goal(precise_positioning=True)
    goal.target_pose.header.frame_id = "body"
    goal.target_pose.pose.position.x = 1.0
    goal.target_pose.pose.orientation.w = 1.0
    feedback = []
    handle = ros.wait_future(client.send_goal_async(goal, feedback_callback=feedback.append))
    assert handle.accepted
    result = ros.wait_future(handle.get_result_async(), timeout=30.0).result
    assert result.success, result.message
    end = odom(ros).pose.pose
    assert end.position.x - start.position.x == pytest.approx(1.0, abs=0.05)
    assert feedback and feedback[0].feedback.distance_remaining > 0.5


def test_cancelled_trajectory_stops_the_robot(world):
    _sim, _, ros = world
    client = ros.action_client(Trajectory, "/trajectory")
    goal = Trajectory.Goal()
    goal.target_pose.header.frame_id = "odom"
    here = odom(ros).pose.pose.position
    goal.target_pose.pose.position.x = here.x + 5.0
    goal.target_pose.pose.position.y = here.y
    goal.target_pose.pose.orientation.w = 1.0
    handle = ros.wait_future(client.send_goal_async(goal))
    assert ros.wait_for(lambda: odom(ros).twist.twist.linear.x > 0.2, timeout=5.0)
    ros.wait_future(handle.cancel_goal_async())
    result = ros.wait_future(handle.get_result_async())
    assert not result.result.success and "cancel" in result.result.message
    assert ros.wait_for(lambda: abs(odom(ros).twist.twist.linear.x) < 1e-3, timeout=1.0)
    assert odom(ros).pose.pose.position.x < here.x + 4.0


def test_trajectory_in_unknown_frame_is_refused(world):
    sim, _, ros = world
    client = ros.action_client(Trajectory, "/trajectory")
    commands_before = len(part(sim.robot, CommandBook).commands)
    goal = Trajectory.Goal()
    goal.target_pose.header.frame_id = "no_such_frame"
    goal.target_pose.pose.orientation.w = 1.0
    handle = ros.wait_future(client.send_goal_async(goal))
    result = ros.wait_future(handle.get_result_async()).result
    assert not result.success and "unknown frame 'no_such_frame'" in result.message
    assert len(part(sim.robot, CommandBook).commands) == commands_before


def test_arm_goals_on_a_robot_without_an_arm_fail_clearly(world):
    sim, driver, ros = world
    assert trigger(ros, "claim").success
    before = len(part(sim.robot, CommandBook).commands)
    for action_type, name, goal in (
            (ArmJointMove, "/arm/joint_move", ArmJointMove.Goal(positions=[0.0] * 6)),
            (Gripper, "/gripper", Gripper.Goal(command=Gripper.Goal.OPEN))):
        client = ros.action_client(action_type, name)
        handle = ros.wait_future(client.send_goal_async(goal))
        result = ros.wait_future(handle.get_result_async()).result
        assert not result.success and "this robot has no arm" in result.message
    client = ros.action_client(FollowJointTrajectory, "/arm_controller/follow_joint_trajectory")
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = [f"arm_{j}" for j in ("sh0", "sh1", "el0", "el1", "wr0",
                                                        "wr1")]
    goal.trajectory.points.append(JointTrajectoryPoint(positions=[0.0, -1.0, 1.5, 0, 0, 0]))
    goal.trajectory.points[0].time_from_start.sec = 1
    handle = ros.wait_future(client.send_goal_async(goal))
    result = ros.wait_future(handle.get_result_async()).result
    assert result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert "this robot has no arm" in result.error_string
    assert trigger(ros, "gripper/open").message == "this robot has no arm"
    assert len(part(sim.robot, CommandBook).commands) == before
    assert driver.process.poll() is None


def test_typed_services_validate_and_apply(world):
    _sim, _, ros = world
    bad = SetVelocityLimit.Request()
    bad.velocity_limit.linear.x = math.inf
    response = ros.call(SetVelocityLimit, "/max_velocity", bad)
    assert not response.success and "finite" in response.message
    request = SetStandHeight.Request(height=-0.1)
    assert ros.call(SetStandHeight, "/stand_height", request).success
    assert trigger(ros, "stand").success
    assert ros.wait_for(lambda: abs(odom(ros).pose.pose.position.z - 0.42) < 0.01, timeout=3.0)
    assert ros.wait_for(lambda: ros.latest("/status/mobility_params").body_pose_offset
                        .position.z == pytest.approx(-0.1), timeout=2.0)
    too_high = ros.call(SetStandHeight, "/stand_height", SetStandHeight.Request(height=2.0))
    assert not too_high.success and "outside" in too_high.message


def test_gait_and_stairs_mode_reach_the_robot(world):
    sim, _, ros = world
    gait = SetLocomotion.Request(locomotion_hint=4)
    assert ros.call(SetLocomotion, "/locomotion_mode", gait).success
    assert ros.call(SetStairsMode, "/stairs_mode", SetStairsMode.Request(stairs_mode=2)).success
    refused = ros.call(SetLocomotion, "/locomotion_mode", SetLocomotion.Request(locomotion_hint=99))
    assert not refused.success and "unknown locomotion hint" in refused.message
    assert trigger(ros, "stand").success
    params = part(sim.robot, Base).mobility_params
    assert params.locomotion_hint == 4 and params.stairs_mode == 2 and params.stair_hint
    assert ros.wait_for(lambda: ros.latest("/status/mobility_params").locomotion_hint == 4)


def test_body_pose_topic_moves_the_body(world):
    sim, driver, ros = world
    publisher = ros.publisher(Pose, "/body_pose", 10)
    pose = Pose()
    pose.position.z = -0.05
    pose.orientation.w = 1.0
    assert ros.wait_for(lambda: publisher.get_subscription_count() > 0)
    publisher.publish(pose)
    assert ros.wait_for(lambda: abs(odom(ros).pose.pose.position.z - 0.47) < 0.01, timeout=3.0)
    commands = len(part(sim.robot, CommandBook).commands)
    bad = Pose()
    bad.position.z = 5.0
    bad.orientation.w = 1.0
    publisher.publish(bad)
    assert ros.wait_for(lambda: "body_pose ignored" in driver.output(), 5.0)
    assert len(part(sim.robot, CommandBook).commands) == commands
    assert abs(odom(ros).pose.pose.position.z - 0.47) < 0.01
    ros.node.destroy_publisher(publisher)


def test_fall_self_right_and_clear_behavior_fault(world):
    sim, _, ros = world
    for name in ("claim", "power_on"):  # what earlier tests left, stated (this test alone)
        assert trigger(ros, name).success, name
    sim.robot.trigger_fall()
    def faults() -> int | None:  # None until the first status arrives (this test alone)
        latest = ros.latest("/status/behavior_faults")
        return None if latest is None else len(latest.faults)

    assert ros.wait_for(lambda: faults() == 1, timeout=5.0)
    refused = trigger(ros, "stand")
    assert not refused.success and "behavior fault" in refused.message
    assert trigger(ros, "self_right").success
    cleared = trigger(ros, "clear_behavior_fault")
    assert cleared.success, cleared.message
    assert ros.wait_for(lambda: faults() == 0, timeout=2.0)
    assert trigger(ros, "stand").success


def test_lease_taken_by_another_client_and_taken_back(world):
    sim, _, ros = world
    def body_owner() -> str:
        leases = ros.latest("/status/leases")
        return next(r.lease_owner.client_name for r in leases.resources
                    if r.resource == "mobility")

    driver_owner = body_owner()
    other = connect(sim)
    other.ensure_client(LeaseClient.default_service_name).take()
    refused = trigger(ros, "stop")
    assert not refused.success and "lease" in refused.message
    assert ros.wait_for(lambda: body_owner() != driver_owner, timeout=3.0)
    taken = ros.call(Claim, "/claim_lease", Claim.Request(take=True))
    assert taken.success, taken.message
    assert trigger(ros, "stop").success
    assert ros.wait_for(lambda: body_owner() == driver_owner, timeout=3.0)
    other.time_sync.stop()


def test_estop_services_cut_power_and_release(world):
    sim, _, ros = world
    assert trigger(ros, "stand").success
    assert trigger(ros, "estop/hard").success
    assert ros.wait_for(lambda: not sim.robot.powered, timeout=2.0)
    assert ros.wait_for(lambda: ros.latest("/status/power").motor_power_state
                        == ros.latest("/status/power").MOTOR_POWER_STATE_OFF, timeout=2.0)
    refused = trigger(ros, "power_on")
    assert not refused.success and "e-stopped" in refused.message
    assert trigger(ros, "estop/release").success
    assert trigger(ros, "power_on").success
    assert trigger(ros, "rollover").success


def test_sit_power_off_and_credentials_never_logged(world):
    sim, driver, ros = world
    assert trigger(ros, "power_off").success
    assert not sim.robot.powered
    assert trigger(ros, "release").success
    output = driver.output()
    assert PASSWORD not in output
    assert "connected to robot" in output


def test_stamped_cmd_vel_moves_the_robot_and_stale_stamps_are_dropped(tmp_path):
    with running_sim(tmp_path / "certs") as sim:
        ros = RosClient("stamped_test_client")
        ros.subscribe("/odometry", Odometry)
        driver = DriverProcess(sim, tmp_path / "driver.log", USERNAME, PASSWORD,
                               {"cmd_vel_stamped": "true", "auto_claim": "true",
                                "auto_power_on": "true", "auto_stand": "true"})
        try:
            assert ros.wait_for(lambda: sim.robot.standing, timeout=15.0)
            publisher = ros.publisher(TwistStamped, "/cmd_vel", 10)
            before = len(part(sim.robot, CommandBook).commands)
            stale = TwistStamped()
            stale.header.stamp = (ros.node.get_clock().now()
                                  - rclpy.duration.Duration(seconds=5)).to_msg()
            stale.twist.linear.x = 0.5
            for _ in range(5):
                publisher.publish(stale)
                time.sleep(0.02)  # sleep: a 50 Hz stream of stale commands
            # delivered and dropped (the driver says so), and nothing reached the robot
            assert ros.wait_for(lambda: "stamp is" in driver.output(), timeout=2.0)
            assert len(part(sim.robot, CommandBook).commands) == before
            fresh = TwistStamped()
            fresh.twist.linear.x = 0.5
            for _ in range(20):
                fresh.header.stamp = ros.node.get_clock().now().to_msg()
                publisher.publish(fresh)
                time.sleep(0.05)  # sleep: cmd_vel at 20 Hz, as a teleop sends it
            assert ros.wait_for(lambda: ros.latest("/odometry").pose.pose.position.x > 0.2,
                                timeout=3.0)
        finally:
            ros.close()
            driver.stop()
