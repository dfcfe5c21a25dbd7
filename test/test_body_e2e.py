"""End to end, what a researcher reaches for beyond the fixed-purpose actions: any
RobotCommand (``robot_command``), Spot Check, one behaviour fault cleared by id, the
trajectory's options, metrics, ``has_arm``, the body twist on its own topic, and user no-go
regions in the robot's world model. ROS client ->
driver process -> gRPC -> simulated Spot with an arm -> back to ROS."""

import math
import time

import numpy as np
import pytest
from bosdyn.api import robot_command_pb2, world_object_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose
from bosdyn.client.robot_command import RobotCommandBuilder
from geometry_msgs.msg import TransformStamped, TwistWithCovarianceStamped
from google.protobuf import text_format
from nav_msgs.msg import Odometry
from rcl_interfaces.srv import GetParameters
from rclpy.duration import Duration
from ros_harness import driver_world
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from conftest import part
from spot_driver.core import qos
from spot_msgs.action import RobotCommand, SpotCheck, Trajectory
from spot_msgs.msg import BehaviorFaultState, Metrics, WorldObjectArray
from spot_msgs.srv import (
    AddNoGoRegion,
    ClearBehaviorFault,
    ListWorldObjects,
    MutateWorldObject,
    OverrideGrasp,
)
from spot_sim.body import kinematics
from spot_sim.body.arm.model import Arm
from spot_sim.body.base import Base
from spot_sim.body.commands import CommandBook
from spot_sim.core.clock import timestamp_to_nsec

FEET = ("fl", "fr", "hl", "hr")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    best_effort = {"reliable": False}
    with driver_world(tmp_path_factory, "robot_command_test_client", sim={"has_arm": True},
                      params={"world_object_frames": "payload_marker,goal_pin,old_pin"},
                      subscriptions=(("/joint_states", JointState), ("/odometry", Odometry),
                                     ("/odometry/twist", TwistWithCovarianceStamped),
                                     ("/has_arm", Bool, {"latched": True}),
                                     ("/status/metrics", Metrics, best_effort),
                                     ("/status/behavior_faults", BehaviorFaultState,
                                      best_effort),
                                     ("/world_objects", WorldObjectArray, best_effort)),
                      first="/joint_states", ready=("claim", "power_on", "stand")) as world:
        yield world


def send(ros, goal: RobotCommand.Goal, feedback: list | None = None, timeout: float = 30.0):
    client = ros.action_client(RobotCommand, "/robot_command")
    handle = ros.wait_future(client.send_goal_async(
        goal, feedback_callback=feedback.append if feedback is not None else None))
    assert handle.accepted
    return ros.wait_future(handle.get_result_async(), timeout=timeout).result


def stance_text(dx: float) -> str:
    """A stance with every foot at its standing place under the body, moved ``dx`` m."""
    nominal = kinematics.foot_positions_in_body(
        kinematics.leg_joint_positions(kinematics.STAND_HEIGHT))
    feet = " ".join(
        f'foot_positions {{ key: "{foot}" value {{ x: {nominal[i][0] + dx:.3f} '
        f'y: {nominal[i][1]:.3f} }} }}' for i, foot in enumerate(FEET))
    return ("synchronized_command { mobility_command { stance_request { "
            f'stance {{ se2_frame_name: "flat_body" {feet} }} }} }} }}')


def test_a_stance_written_by_hand_ends_stanced_and_a_far_one_too_far(world):
    sim, _, ros = world
    feedback = []
    result = send(ros, RobotCommand.Goal(command_text=stance_text(0.05), duration=3.0),
                  feedback)
    assert result.success, result.message
    assert result.status == "mobility: STATUS_STANCED"
    assert part(sim.robot, CommandBook).commands[result.command_id].kind == "stance"
    last = robot_command_pb2.RobotCommandFeedback.FromString(bytes(result.feedback))
    assert last.synchronized_feedback.mobility_command_feedback.HasField("stance_feedback")
    assert feedback and "stance_feedback" in feedback[-1].feedback.feedback_text
    far = send(ros, RobotCommand.Goal(command_text=stance_text(0.8), duration=3.0))
    assert not far.success and far.status == "mobility: STATUS_TOO_FAR_AWAY", far.message


def test_a_serialized_arm_and_gripper_command_runs_to_the_end(world):
    sim, _, ros = world
    command = RobotCommandBuilder.claw_gripper_open_fraction_command(
        0.5, build_on_command=RobotCommandBuilder.arm_ready_command())
    result = send(ros, RobotCommand.Goal(command=command.SerializeToString()))
    assert result.success, result.message
    assert result.status == "arm: STATUS_COMPLETE; gripper: STATUS_AT_GOAL"
    ready = kinematics_ready()
    assert np.allclose(part(sim.robot, Arm).q, ready, atol=0.02)
    assert part(sim.robot, Arm).open_percentage == pytest.approx(50.0, abs=2.0)


def test_a_follow_arm_walk_ends_with_the_hand_at_its_goal(world):
    """The README's follow-arm walk: a hand goal 1.25 m ahead in odom, out of the arm's
    reach, with follow-arm: the body walks until the hand is there."""
    sim, _, ros = world
    snapshot = sim.robot.transforms_snapshot()
    goal = get_a_tform_b(snapshot, "odom", "flat_body") * SE3Pose(1.25, 0.0, 0.25, Quat())
    start = sim.robot.odom_body()
    command = RobotCommandBuilder.build_synchro_command(
        RobotCommandBuilder.follow_arm_command(),
        RobotCommandBuilder.arm_pose_command(goal.x, goal.y, goal.z, 1, 0, 0, 0, "odom", 2.0))
    result = send(ros, RobotCommand.Goal(command=command.SerializeToString()), timeout=20)
    assert result.success, result.message
    assert result.status == "mobility: STATUS_PROCESSING; arm: STATUS_TRAJECTORY_COMPLETE"
    hand = get_a_tform_b(sim.robot.transforms_snapshot(), "odom", "hand")
    assert math.dist((hand.x, hand.y, hand.z), (goal.x, goal.y, goal.z)) < 0.01
    end = sim.robot.odom_body()
    assert math.hypot(end.x - start.x, end.y - start.y) > 0.15  # it walked


def test_constrained_manipulation_pulls_for_the_goals_duration(world):
    """A drawer pull written by hand: refused without a duration (its end time is in robot
    time, which the driver sets); without a held object the robot reports the grasp lost;
    holding, the hand moves toward the body for the goal's duration."""
    sim, _, ros = world
    pull = ('full_body_command { constrained_manipulation_request { frame_name: "body" '
            'task_type: TASK_TYPE_R3_LINEAR_FORCE tangential_speed: 0.1 '
            'init_wrench_direction_in_frame_name { force { x: -1 } } } }')
    result = send(ros, RobotCommand.Goal(command_text=pull))
    assert not result.success and "runs until an end time" in result.message
    ready = send(ros, RobotCommand.Goal(command=RobotCommandBuilder.arm_ready_command()
                                        .SerializeToString()))
    assert ready.success, ready.message
    for holding in (False, True):
        assert ros.call(OverrideGrasp, "/manipulation/override_grasp",
                        OverrideGrasp.Request(holding=holding)).success
        before = get_a_tform_b(sim.robot.transforms_snapshot(), "odom", "hand")
        result = send(ros, RobotCommand.Goal(command_text=pull, duration=1.5))
        after = get_a_tform_b(sim.robot.transforms_snapshot(), "odom", "hand")
        moved = math.dist((before.x, before.y, before.z), (after.x, after.y, after.z))
        if holding:
            assert result.success and result.status == "full_body: STATUS_COMMAND_TIMED_OUT", \
                result.message
            assert moved == pytest.approx(0.15, abs=0.04)
        else:
            assert not result.success and result.status == "full_body: STATUS_GRASP_IS_LOST"
            assert moved < 0.005
    assert ros.call(OverrideGrasp, "/manipulation/override_grasp",
                    OverrideGrasp.Request(holding=False)).success


def kinematics_ready() -> np.ndarray:
    from spot_sim.body.arm.model import named_target

    return named_target("ready")


def robot_time_at(sim, monotonic_s: float) -> float:
    """The simulated robot's clock (s) at an earlier ``time.monotonic()`` reading."""
    return sim.robot.clock.now_nsec() / 1e9 - (time.monotonic() - monotonic_s)


def test_a_velocity_command_runs_for_its_duration_then_the_robot_stops(world):
    sim, _, ros = world
    start = sim.robot.odom_body()
    command = RobotCommandBuilder.synchro_velocity_command(v_x=0.4, v_y=0.0, v_rot=0.0)
    sent = time.monotonic()
    result = send(ros, RobotCommand.Goal(command=command.SerializeToString(), duration=1.5))
    assert result.success and result.status == "mobility: STATUS_COMMAND_TIMED_OUT", \
        result.message
    end = sim.robot.odom_body()
    # The driver ends the command 1.5 s after it built it, in robot time; the robot walks
    # from the moment it arrives (on a loaded host, later than it was sent) to that end.
    received = sim.commands.commands("RobotCommand")[-1]
    request = received.request.command.synchronized_command.mobility_command
    end_time = timestamp_to_nsec(request.se2_velocity_request.end_time) / 1e9
    assert end_time - robot_time_at(sim, sent) >= 1.5 - 0.05
    walking = end_time - robot_time_at(sim, received.received)
    assert walking <= 1.5 + 0.05
    assert math.hypot(end.x - start.x, end.y - start.y) == pytest.approx(0.4 * walking, abs=0.1)
    assert ros.wait_for(lambda: abs(sim.robot.velocity().x) < 1e-6, timeout=1.0)


def test_the_body_twist_topic_is_the_odometry_twist(world):
    _sim, _, ros = world
    command = RobotCommandBuilder.synchro_velocity_command(v_x=0.3, v_y=0.0, v_rot=0.2)
    client = ros.action_client(RobotCommand, "/robot_command")
    handle = ros.wait_future(client.send_goal_async(
        RobotCommand.Goal(command=command.SerializeToString(), duration=2.0)))
    twist = ros.next_messages("/odometry/twist", 20)[-1]
    odometry = [m for m in ros.received("/odometry") if m.header.stamp == twist.header.stamp]
    assert odometry, "no odometry with the twist's stamp"
    assert twist.header.frame_id == odometry[-1].child_frame_id == "body"
    assert twist.twist == odometry[-1].twist
    assert twist.twist.twist.linear.x == pytest.approx(0.3, abs=0.05)
    assert twist.twist.twist.angular.z == pytest.approx(0.2, abs=0.05)
    assert ros.wait_future(handle.get_result_async()).result.success


@pytest.mark.parametrize("goal, reason", [
    (RobotCommand.Goal(command_text="synchronized_command { legs {} }"),
     'has no field named "legs"'),
    (RobotCommand.Goal(command=b"\xff\xff\xff"), "not a bosdyn.api.RobotCommand"),
    (RobotCommand.Goal(command_text=" "), "exactly one of"),
    (RobotCommand.Goal(command=RobotCommandBuilder.synchro_velocity_command(
        v_x=0.3, v_y=0.0, v_rot=0.0).SerializeToString()),
     "se2_velocity_request runs until an end time: set the goal's duration"),
    (RobotCommand.Goal(command=RobotCommandBuilder.synchro_velocity_command(
        v_x=math.nan, v_y=0.0, v_rot=0.0).SerializeToString(), duration=1.0),
     "velocity.linear.x is nan"),
    (RobotCommand.Goal(command=RobotCommandBuilder.synchro_se2_trajectory_point_command(
        goal_x=1.0, goal_y=0.0, goal_heading=0.0, frame_name="kitchen").SerializeToString(),
        duration=5.0), "unknown frame 'kitchen'"),
    (RobotCommand.Goal(command_text=stance_text(0.0), duration=3.0, timeout=math.inf),
     "timeout inf s must be finite"),
], ids=["text", "bytes", "neither", "no-end-time", "nan", "frame", "timeout"])
def test_bad_commands_are_refused_and_nothing_is_sent(world, goal, reason):
    sim, _, ros = world
    before = len(part(sim.robot, CommandBook).commands)
    result = send(ros, goal)
    assert not result.success and reason in result.message, result.message
    assert result.command_id == 0
    assert len(part(sim.robot, CommandBook).commands) == before


def test_cancel_stops_the_robot(world):
    sim, _, ros = world
    command = RobotCommandBuilder.synchro_velocity_command(v_x=0.5, v_y=0.0, v_rot=0.0)
    client = ros.action_client(RobotCommand, "/robot_command")
    handle = ros.wait_future(client.send_goal_async(
        RobotCommand.Goal(command=command.SerializeToString(), duration=10.0)))
    assert ros.wait_for(lambda: sim.robot.velocity().x > 0.3, timeout=5.0)
    ros.wait_future(handle.cancel_goal_async())
    result = ros.wait_future(handle.get_result_async()).result
    assert not result.success and "canceled" in result.message
    assert ros.wait_for(lambda: abs(sim.robot.velocity().x) < 1e-6, timeout=1.0)


def test_one_behavior_fault_is_cleared_by_its_id(world):
    sim, _, ros = world
    first, second = sim.faults.fall(), sim.faults.fall()
    response = ros.call(ClearBehaviorFault, "/clear_behavior_fault_by_id",
                        ClearBehaviorFault.Request(id=first + second + 100))
    assert not response.success
    assert f"no behavior fault with id {first + second + 100} (it has {first}, {second})" in \
        response.message
    response = ros.call(ClearBehaviorFault, "/clear_behavior_fault_by_id",
                        ClearBehaviorFault.Request(id=first))
    assert response.success, response.message
    assert ros.wait_for(lambda: [f.behavior_fault_id for f in ros.latest(
        "/status/behavior_faults").faults] == [second], timeout=3.0)
    assert ros.call(ClearBehaviorFault, "/clear_behavior_fault_by_id",
                    ClearBehaviorFault.Request(id=second)).success
    for name in ("stand",):
        assert ros.call(Trigger, f"/{name}").success


def test_metrics_follow_the_robots_own(world):
    sim, _, ros = world
    metrics = ros.next_messages("/status/metrics", 1, timeout=5.0)[0]
    distance, moving, powered = sim.robot.metrics()
    assert metrics.distance == pytest.approx(distance, abs=0.05)
    assert metrics.distance > 0.5  # the velocity commands above walked
    assert metrics.gait_cycles > 0
    assert metrics.time_moving.sec + metrics.time_moving.nanosec * 1e-9 == \
        pytest.approx(moving, abs=1.5)
    assert metrics.electric_power.sec + metrics.electric_power.nanosec * 1e-9 == \
        pytest.approx(powered, abs=1.5)


def test_has_arm_is_a_latched_topic_and_a_read_only_parameter(world):
    _sim, _, ros = world
    assert ros.wait_for(lambda: ros.latest("/has_arm") is not None, timeout=5.0)
    assert ros.latest("/has_arm").data is True
    response = ros.call(GetParameters, "/spot_description/get_parameters",
                        GetParameters.Request(names=["has_arm"]))
    assert response.values[0].bool_value is True


def test_trajectory_options_reach_the_robot(world):
    sim, _, ros = world
    client = ros.action_client(Trajectory, "/trajectory")
    results = {}
    for precise in (False, True):
        # A goal that ends "near the goal" leaves the robot walking on to it, as on a robot:
        # measure the next goal from where the body comes to rest.
        assert ros.wait_for(lambda: part(sim.robot, Base).still, timeout=10.0)
        start = sim.robot.odom_body()
        goal = Trajectory.Goal(precise_positioning=precise, disable_obstacle_avoidance=precise)
        goal.target_pose.header.frame_id = "body"
        goal.target_pose.pose.position.x = 1.5
        goal.target_pose.pose.orientation.w = 1.0
        handle = ros.wait_future(client.send_goal_async(goal))
        result = ros.wait_future(handle.get_result_async(), timeout=30.0).result
        assert result.success, result.message
        end = sim.robot.odom_body()
        results[precise] = (math.hypot(end.x - start.x, end.y - start.y), result.message)
        params = part(sim.robot, Base).mobility_params
        assert params.obstacle_params.disable_vision_body_obstacle_avoidance is precise
    # Without precise positioning the goal ends as soon as the robot is near the goal.
    assert "near the goal" in results[False][1] and results[False][0] < 1.5 - 0.02
    assert results[True][1] == "reached the goal"
    assert results[True][0] == pytest.approx(1.5, abs=0.05)


def test_spot_check_runs_while_sitting_and_reports_every_part(world):
    _sim, _, ros = world
    client = ros.action_client(SpotCheck, "/spot_check")
    handle = ros.wait_future(client.send_goal_async(SpotCheck.Goal()))
    standing = ros.wait_future(handle.get_result_async(), timeout=30.0).result
    assert not standing.success and "the robot must be sitting" in standing.message
    assert ros.call(Trigger, "/sit").success
    feedback = []
    handle = ros.wait_future(client.send_goal_async(SpotCheck.Goal(),
                                                    feedback_callback=feedback.append))
    result = ros.wait_future(handle.get_result_async(), timeout=60.0).result
    assert result.success, result.message
    assert result.status == "STATE_FINISHED"
    assert len(result.results) == 9 and "camera frontleft: STATUS_OK" in result.results
    progress = [f.feedback.progress for f in feedback]
    assert progress == sorted(progress) and progress[-1] > 0.5
    assert "STATE_LOADCELL_CAL" in {f.feedback.state for f in feedback}
    assert ros.call(Trigger, "/stand").success


def nogo_request(x: float, **fields) -> AddNoGoRegion.Request:
    """A wall 0.2 m deep and 4 m wide, ``x`` m ahead of the body (in ``body``)."""
    request = AddNoGoRegion.Request(name="wall", length=0.2, width=4.0)
    for name, value in fields.items():
        setattr(request, name, value)
    request.pose.header.frame_id = "body"
    request.pose.pose.position.x = x
    request.pose.pose.orientation.w = 1.0
    return request


def nogo_ids(ros) -> list[int]:
    listed = ros.call(ListWorldObjects, "/world_objects/list",
                      ListWorldObjects.Request(types=["user_nogo"]))
    assert listed.success, listed.message
    return [o.id for o in listed.objects.objects]


@pytest.mark.parametrize("fields, frame, reason", [
    ({"width": math.nan}, "body", "width must be finite"),
    ({"length": 0.0}, "body", "needs length and width > 0 m"),
    ({}, "kitchen", "unknown frame 'kitchen'"),
    ({"no_body_obstacle": True, "no_foot_obstacle": True}, "body", "does nothing"),
], ids=["nan", "empty", "frame", "nothing"])
def test_bad_nogo_regions_are_refused_and_nothing_is_added(world, fields, frame, reason):
    _sim, _, ros = world
    before = nogo_ids(ros)
    request = nogo_request(1.5, **fields)
    request.pose.header.frame_id = frame
    answer = ros.call(AddNoGoRegion, "/world_objects/add_nogo_region", request)
    assert not answer.success and reason in answer.message, answer.message
    assert nogo_ids(ros) == before


def test_a_nogo_region_stops_walks_at_its_boundary_until_deleted(world):
    sim, _, ros = world
    start = sim.robot.odom_body()
    added = ros.call(AddNoGoRegion, "/world_objects/add_nogo_region", nogo_request(1.5))
    assert added.success, added.message
    assert added.id in nogo_ids(ros)
    assert ros.wait_for(lambda: any(o.id == added.id and o.size.y == pytest.approx(4.0)
                                    for o in ros.latest("/world_objects").objects), 5.0)
    # Velocity: the body's front (0.55 m ahead of its centre) stops at the wall's near face.
    walk = RobotCommandBuilder.synchro_velocity_command(v_x=0.5, v_y=0.0, v_rot=0.0)
    result = send(ros, RobotCommand.Goal(command=walk.SerializeToString(), duration=5.0))
    assert result.success, result.message
    heading = (math.cos(start.yaw), math.sin(start.yaw))

    def ahead() -> float:
        here = sim.robot.odom_body()
        return (here.x - start.x) * heading[0] + (here.y - start.y) * heading[1]

    assert ahead() == pytest.approx(1.5 - 0.1 - 0.55, abs=0.08)
    # A trajectory through it stops there too and fails, blocked, once the body settles.
    client = ros.action_client(Trajectory, "/trajectory")
    goal = Trajectory.Goal(precise_positioning=True)
    goal.target_pose.header.frame_id = "body"
    goal.target_pose.pose.position.x = 1.5
    goal.target_pose.pose.orientation.w = 1.0
    goal.duration.sec = 4
    handle = ros.wait_future(client.send_goal_async(goal))
    blocked = ros.wait_future(handle.get_result_async(), timeout=30.0).result
    assert not blocked.success and blocked.message.startswith("blocked:"), blocked.message
    assert ahead() == pytest.approx(0.85, abs=0.08)
    # Deleted, the way is free.
    deleted = ros.call(MutateWorldObject, "/world_objects/mutate", MutateWorldObject.Request(
        action="delete", object_text=f"id: {added.id}"))
    assert deleted.success, deleted.message
    assert added.id not in nogo_ids(ros)
    handle = ros.wait_future(client.send_goal_async(goal))
    free = ros.wait_future(handle.get_result_async(), timeout=30.0).result
    assert free.success, free.message
    assert ahead() == pytest.approx(0.85 + 1.5, abs=0.08)


def test_world_object_mutations_are_checked(world):
    _sim, _, ros = world
    for request, reason in (
            (MutateWorldObject.Request(action="rename", object_text="id: 1"), "not one of"),
            (MutateWorldObject.Request(action="delete", object_text="name: 'x'"), "set 'id'"),
            (MutateWorldObject.Request(action="delete", object_text="id: 987654"),
             "the robot has no world object 987654"),
            (MutateWorldObject.Request(action="add", object_text="nogo_region_properties { "
                                       "box { frame_name: 'body' box { size { x: 1 y: 1 } } } }"),
             "the robot refused the world object as invalid")):
        answer = ros.call(MutateWorldObject, "/world_objects/mutate", request)
        assert not answer.success and reason in answer.message, answer.message
    added = ros.call(MutateWorldObject, "/world_objects/mutate", MutateWorldObject.Request(
        action="add", object_text="name: 'circle' object_lifetime { seconds: 1 } "
        "nogo_region_properties { circle { frame_name: 'odom' circle { radius: 0.3 } "
        "frame_name_tform_circle { position { x: 40 } rotation { w: 1 } } } }"))
    assert added.success, added.message
    listed = ros.call(ListWorldObjects, "/world_objects/list",
                      ListWorldObjects.Request(types=["user_nogo"]))
    assert any("circle" in text for text in listed.object_texts)
    assert ros.wait_for(lambda: added.id not in nogo_ids(ros), timeout=5.0)  # expired


def _transform(parent: str, child: str, x: float, y: float, z: float, stamp) -> TransformStamped:
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id, t.header.stamp = parent, child, stamp
    t.transform.translation.x, t.transform.translation.y = x, y
    t.transform.translation.z = z
    t.transform.rotation.w = 1.0
    return t


def test_tf_frames_are_pushed_to_the_robot_as_world_objects(world):
    """world_object_frames: a static frame on the body and a frame published on /tf in odom
    reach the robot's world model as drawables, in odom where TF puts them; a frame whose
    transform is stale is not pushed."""
    sim, _, ros = world
    static = ros.publisher(TFMessage, "/tf_static", qos.LATCHED)
    moving = ros.publisher(TFMessage, "/tf", 10)
    try:
        clock = ros.node.get_clock()
        static.publish(TFMessage(transforms=[_transform("body", "payload_marker", 0.3, 0.0, 0.2,
                                                        clock.now().to_msg())]))
        old = (clock.now() - Duration(seconds=30)).to_msg()

        def pushed():
            moving.publish(TFMessage(transforms=[
                _transform("odom", "goal_pin", 2.0, 1.0, 0.0, clock.now().to_msg()),
                _transform("odom", "old_pin", 3.0, 0.0, 0.0, old)]))
            listed = ros.call(ListWorldObjects, "/world_objects/list",
                              ListWorldObjects.Request(types=["drawable"]))
            return {o.name: o for o in (text_format.Parse(t, world_object_pb2.WorldObject())
                                        for t in listed.object_texts)}

        assert ros.wait_for(lambda: {"payload_marker", "goal_pin"} <= set(pushed()),
                            timeout=10.0, period=0.3), pushed()
        objects = pushed()
        assert "old_pin" not in objects
        goal = get_a_tform_b(objects["goal_pin"].transforms_snapshot, "odom", "goal_pin")
        assert (goal.x, goal.y) == pytest.approx((2.0, 1.0), abs=1e-6)
        marker = get_a_tform_b(objects["payload_marker"].transforms_snapshot, "odom",
                               "payload_marker")
        body = sim.robot.body_poses()[0] * SE3Pose(0.3, 0.0, 0.2, Quat())
        assert (marker.x, marker.y, marker.z) == pytest.approx((body.x, body.y, body.z),
                                                               abs=0.05)
    finally:
        ros.node.destroy_publisher(static)
        ros.node.destroy_publisher(moving)
