"""End to end: ROS action clients -> driver process -> gRPC -> simulated Spot with an arm."""

import math
import time

import numpy as np
import pytest
from bosdyn.client.math_helpers import Quat, SE3Pose
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from geometry_msgs.msg import Twist, Vector3Stamped
from ros_harness import driver_world, odom_tform
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectoryPoint

from conftest import part
from spot_msgs.action import (
    ArmJointMove,
    ArmPose,
    ArmPosture,
    ArmSurfaceContact,
    Gripper,
    Manipulation,
    PickObjectInImage,
)
from spot_msgs.msg import ManipulatorState
from spot_msgs.srv import GetInverseKinematics, OverrideGrasp
from spot_sim.body.commands import CommandBook

ARM = ["arm_sh0", "arm_sh1", "arm_el0", "arm_el1", "arm_wr0", "arm_wr1"]
FJT = "/arm_controller/follow_joint_trajectory"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with driver_world(tmp_path_factory, "arm_test_client", sim={"has_arm": True},
                      subscriptions=(("/joint_states", JointState), ("/tf", TFMessage),
                                     ("/tf_static", TFMessage, {"latched": True}),
                                     ("/status/manipulation", ManipulatorState,
                                      {"reliable": False}),
                                     ("/status/end_effector_force", Vector3Stamped,
                                      {"reliable": False})),
                      first="/joint_states", ready=("claim", "power_on", "stand")) as world:
        yield world


def arm_joints(ros) -> np.ndarray:
    msg = ros.latest("/joint_states")
    positions = dict(zip(msg.name, msg.position, strict=True))
    return np.array([positions[name] for name in ARM])


def fjt_goal(names, times, positions) -> FollowJointTrajectory.Goal:
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(names)
    for t, p in zip(times, positions, strict=True):
        point = JointTrajectoryPoint(positions=[float(v) for v in p])
        point.time_from_start.sec = int(t)
        point.time_from_start.nanosec = round((t - int(t)) * 1e9)
        goal.trajectory.points.append(point)
    return goal


def test_arm_state_is_published(world):
    _sim, _, ros = world
    names = ros.latest("/joint_states").name
    assert set(ARM) | {"arm_f1x"} <= set(names)
    assert ros.wait_for(lambda: ros.latest("/status/manipulation") is not None)
    assert ros.latest("/status/manipulation").stow_state in (1, 2)
    force = ros.latest("/status/end_effector_force")
    assert force is not None and force.header.frame_id == "hand"


def test_joint_move_reaches_the_target(world):
    _sim, _, ros = world
    target = [0.2, -1.0, 1.6, 0.1, -0.4, 0.3]
    robot_names = [name.replace("arm_", "arm0.") for name in ARM]  # accepted too
    goal = ArmJointMove.Goal(joint_names=list(reversed(robot_names)),
                             positions=list(reversed(target)))
    goal.duration.sec = 1
    feedback = []
    result = ros.run_action(ArmJointMove, "/arm/joint_move", goal, feedback=feedback)
    assert result.success, result.message
    assert result.status == "STATUS_COMPLETE"
    assert feedback and feedback[0].status
    assert ros.wait_for(lambda: np.allclose(arm_joints(ros), target, atol=0.01), timeout=1.0)


def test_a_new_arm_goal_preempts_the_running_one(world):
    """Goal policy PREEMPT: the first goal ends aborted ("preempted"), the robot follows the
    second to its target."""
    _sim, _, ros = world
    client = ros.action_client(ArmJointMove, "/arm/joint_move")
    slow = ArmJointMove.Goal(positions=[0.6, -1.2, 1.8, 0.0, 0.3, 0.0])
    slow.duration.sec = 6
    start = arm_joints(ros)
    first = ros.wait_future(client.send_goal_async(slow))
    assert first.accepted
    assert ros.wait_for(lambda: np.abs(arm_joints(ros) - start).max() > 0.05, timeout=5)
    target = [-0.3, -0.8, 1.4, 0.0, 0.2, 0.1]
    quick = ArmJointMove.Goal(positions=target)
    quick.duration.sec = 1
    second = ros.wait_future(client.send_goal_async(quick))
    assert second.accepted
    preempted = ros.wait_future(first.get_result_async(), timeout=15).result
    assert not preempted.success and "preempted" in preempted.message
    result = ros.wait_future(second.get_result_async(), timeout=20).result
    assert result.success, result.message
    assert ros.wait_for(lambda: np.allclose(arm_joints(ros), target, atol=0.01), timeout=1.0)


def test_cartesian_goal_puts_the_hand_there_in_odom(world):
    _sim, _, ros = world
    odom_body = odom_tform(ros, "body")
    goal_pose = odom_body * SE3Pose(0.8, -0.1, 0.35, Quat.from_yaw(0.3) * Quat.from_pitch(0.3))
    goal = ArmPose.Goal()
    goal.pose.header.frame_id = "odom"
    p, q = goal.pose.pose.position, goal.pose.pose.orientation
    p.x, p.y, p.z = goal_pose.x, goal_pose.y, goal_pose.z
    q.w, q.x, q.y, q.z = goal_pose.rot.w, goal_pose.rot.x, goal_pose.rot.y, goal_pose.rot.z
    goal.duration.sec = 1
    result = ros.run_action(ArmPose, "/arm/pose", goal)
    assert result.success, result.message
    ros.next_messages("/tf", 3)  # the tree as it is now
    hand = odom_tform(ros, "hand")
    assert math.dist((hand.x, hand.y, hand.z), (goal_pose.x, goal_pose.y, goal_pose.z)) < 0.01
    angle = abs((hand.rot.inverse() * goal_pose.rot).to_axis_angle()[0])
    assert min(angle, 2 * math.pi - angle) < math.radians(2)


def test_unreachable_and_unknown_frame_poses_fail_clearly(world):
    sim, _, ros = world
    goal = ArmPose.Goal()
    goal.pose.header.frame_id = "body"
    goal.pose.pose.position.x = 3.0
    goal.pose.pose.orientation.w = 1.0
    result = ros.run_action(ArmPose, "/arm/pose", goal)
    assert not result.success and "reach" in result.message
    before = len(part(sim.robot, CommandBook).commands)
    goal.pose.header.frame_id = "no_such_frame"
    result = ros.run_action(ArmPose, "/arm/pose", goal)
    assert not result.success and "unknown frame 'no_such_frame'" in result.message
    assert len(part(sim.robot, CommandBook).commands) == before


def ik_request(frame: str, pose: SE3Pose) -> GetInverseKinematics.Request:
    request = GetInverseKinematics.Request()
    request.target_pose.header.frame_id = frame
    p, q = request.target_pose.pose.position, request.target_pose.pose.orientation
    p.x, p.y, p.z = (float(v) for v in (pose.x, pose.y, pose.z))
    q.w, q.x, q.y, q.z = (float(v) for v in (pose.rot.w, pose.rot.x, pose.rot.y, pose.rot.z))
    return request


def test_inverse_kinematics_answers_and_its_solution_puts_the_hand_there(world):
    sim, _, ros = world
    target = odom_tform(ros, "body") * SE3Pose(0.75, 0.15, 0.25, Quat.from_yaw(-0.2))
    answer = ros.call(GetInverseKinematics, "/arm/inverse_kinematics",
                      ik_request("odom", target))
    assert answer.success and answer.reachable, answer.message
    assert answer.status == "STATUS_OK" and answer.joint_names[:6] == ARM
    before = len(part(sim.robot, CommandBook).commands)
    far = ros.call(GetInverseKinematics, "/arm/inverse_kinematics",
                   ik_request("body", SE3Pose(3.0, 0.0, 0.0, Quat())))
    assert far.success and not far.reachable and far.status == "STATUS_NO_SOLUTION_FOUND", \
        far.message
    for frame, pose, sentence in (
            ("no_such_frame", SE3Pose(0.5, 0, 0, Quat()), "unknown frame 'no_such_frame'"),
            ("body", SE3Pose(math.nan, 0, 0, Quat()), "target_pose must be finite numbers"),
            ("body", SE3Pose(0.5, 0, 0, Quat(0.5, 0, 0, 0)), "not a unit quaternion")):
        refused = ros.call(GetInverseKinematics, "/arm/inverse_kinematics",
                           ik_request(frame, pose))
        assert not refused.success and sentence in refused.message, refused.message
    assert len(part(sim.robot, CommandBook).commands) == before  # asking moves nothing
    # The solution, driven as a joint move, puts the hand on the target (the robot's own FK).
    goal = ArmJointMove.Goal(joint_names=ARM, positions=list(answer.joint_positions[:6]))
    goal.duration.sec = 1
    assert ros.run_action(ArmJointMove, "/arm/joint_move", goal).success
    ros.next_messages("/tf", 3)
    hand = odom_tform(ros, "hand")
    assert math.dist((hand.x, hand.y, hand.z), (target.x, target.y, target.z)) < 0.01


def test_gripper_open_and_close_change_the_open_percentage(world):
    _sim, _, ros = world
    result = ros.run_action(Gripper, "/gripper", Gripper.Goal(command=Gripper.Goal.OPEN))
    assert result.success, result.message
    assert ros.wait_for(lambda: ros.latest("/status/manipulation").gripper_open_percentage > 99)
    assert result.open_percentage > 99
    response = ros.call(Trigger, "/gripper/close")
    assert response.success, response.message
    assert ros.wait_for(lambda: ros.latest("/status/manipulation").gripper_open_percentage < 1,
                        timeout=3)
    result = ros.run_action(Gripper, "/gripper",
                            Gripper.Goal(command=Gripper.Goal.ANGLE, angle=0.5))
    assert not result.success and "gripper angle" in result.message


def test_follow_joint_trajectory_with_five_points_succeeds(world):
    _sim, _, ros = world
    start = arm_joints(ros)
    end = np.array([0.5, -1.2, 1.9, 0.0, -0.5, 0.2])
    times = [0.0, 0.5, 1.0, 1.5, 2.0]
    positions = [start + (end - start) * t / 2.0 for t in times]
    feedback = []
    result = ros.run_action(FollowJointTrajectory, FJT, fjt_goal(ARM, times, positions),
                 feedback=feedback)
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.error_string
    assert np.allclose(arm_joints(ros), end, atol=0.02)
    assert feedback and list(feedback[-1].joint_names) == ARM


def test_long_trajectory_is_sent_in_pieces(world):
    sim, _, ros = world
    start = arm_joints(ros)
    times = np.linspace(0.0, 3.0, 601)
    positions = [start + np.array([0.6 * math.sin(math.pi * t / 3.0), 0, 0, 0, 0, 0])
                 for t in times]
    before = len(part(sim.robot, CommandBook).commands)
    result = ros.run_action(FollowJointTrajectory, FJT, fjt_goal(ARM, times, positions))
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.error_string
    # 601 points in pieces of at most 250
    assert len(part(sim.robot, CommandBook).commands) - before == 3


def test_bad_trajectories_are_refused_and_nothing_is_sent(world):
    sim, _, ros = world
    here = arm_joints(ros)
    before = len(part(sim.robot, CommandBook).commands)
    cases = [
        (fjt_goal(["arm_sh0", "arm_sh1", "arm_el0", "arm_el1", "arm_wr0", "elbow"],
                  [1.0], [here]), FollowJointTrajectory.Result.INVALID_JOINTS, "elbow"),
        (fjt_goal(ARM[:5], [1.0], [here[:5]]), FollowJointTrajectory.Result.INVALID_JOINTS,
         "missing"),
        (fjt_goal(ARM, [1.0, 1.0], [here, here]), FollowJointTrajectory.Result.INVALID_GOAL,
         "later"),
        (fjt_goal(ARM, [1.0], [[math.nan, *here[1:]]]),
         FollowJointTrajectory.Result.INVALID_GOAL, "finite"),
        (fjt_goal(ARM, [1.0], [[0, 0, -1.0, 0, 0, 0]]),
         FollowJointTrajectory.Result.INVALID_GOAL, "arm_el0"),
        (fjt_goal(ARM, [1.0], [here[:5]]), FollowJointTrajectory.Result.INVALID_GOAL,
         "positions"),
    ]
    tolerance_goal = fjt_goal(ARM, [1.0], [here])
    tolerance_goal.goal_tolerance.append(JointTolerance(name="nope", position=0.1))
    cases.append((tolerance_goal, FollowJointTrajectory.Result.INVALID_JOINTS, "nope"))
    for goal, code, text in cases:
        result = ros.run_action(FollowJointTrajectory, FJT, goal)
        assert result.error_code == code, (text, result.error_string)
        assert text in result.error_string
    assert len(part(sim.robot, CommandBook).commands) == before


def test_cancel_mid_move_stops_the_arm(world):
    _sim, _, ros = world
    start = arm_joints(ros)
    end = start + np.array([1.2, 0, 0, 0, 0, 0])
    client = ros.action_client(FollowJointTrajectory, FJT)
    handle = ros.wait_future(client.send_goal_async(fjt_goal(ARM, [0.0, 4.0], [start, end])))
    assert ros.wait_for(lambda: arm_joints(ros)[0] > start[0] + 0.15, timeout=5)
    ros.wait_future(handle.cancel_goal_async())
    ros.wait_future(handle.get_result_async())
    index = ros.latest("/joint_states").name.index(ARM[0])
    assert ros.wait_for(lambda: abs(ros.latest("/joint_states").velocity[index]) < 0.05, 3)
    stopped = arm_joints(ros)[0]
    later = [m.position[index] for m in ros.next_messages("/joint_states", 30)]  # 0.6 s
    assert max(abs(p - stopped) for p in later) < 0.01  # within the joint noise
    assert stopped < end[0] - 0.3


def test_posture_and_pick_object_in_image(world):
    _sim, _, ros = world
    result = ros.run_action(ArmPosture, "/arm/posture",
                            ArmPosture.Goal(posture=ArmPosture.Goal.STOW))
    assert result.success, result.message
    assert ros.wait_for(lambda: ros.latest("/status/manipulation").stow_state == 1)
    feedback = []
    goal = PickObjectInImage.Goal(camera="frontleft")
    goal.pixel.x, goal.pixel.y = 320.0, 420.0
    result = ros.run_action(PickObjectInImage, "/manipulation/pick_object_in_image", goal,
                 timeout=60, feedback=feedback)
    assert result.success, result.message
    assert result.final_state == "MANIP_STATE_GRASP_SUCCEEDED"
    states = [f.state for f in feedback]
    assert "MANIP_STATE_MOVING_TO_GRASP" in states
    assert ros.wait_for(lambda: ros.latest("/status/manipulation").is_gripper_holding_item)
    bad = PickObjectInImage.Goal(camera="nose")
    result = ros.run_action(PickObjectInImage, "/manipulation/pick_object_in_image", bad)
    assert not result.success and "unknown camera 'nose'" in result.message


@pytest.mark.parametrize("text, reason", [
    ("pick_object { frame_name: 'body' object_rt_frame { x: nan } }", "x is nan"),
    ("pick_object { frame_name: 'kitchen' object_rt_frame { x: 1 } }",
     "unknown frame 'kitchen'"),
    ("", "exactly one of 'request'"),
    ("walk_gaze_mode: PICK_NO_AUTO_WALK_OR_GAZE", "no field named"),
], ids=["nan", "frame", "empty", "text"])
def test_bad_manipulation_requests_are_refused(world, text, reason):
    _sim, _, ros = world
    result = ros.run_action(Manipulation, "/manipulation", Manipulation.Goal(request_text=text))
    assert not result.success and reason in result.message, result.message


def test_any_manipulation_request_a_ray_in_the_world(world):
    """The whole manipulation API through one action: a grasp along a ray from the body
    to the floor 1.5 m ahead succeeds; a ray into the sky finds nothing to grasp."""
    _sim, _, ros = world
    released = ros.call(OverrideGrasp, "/manipulation/override_grasp",
                        OverrideGrasp.Request(holding=False))
    assert released.success, released.message
    sky = ("pick_object_ray_in_world { frame_name: 'body' ray_start_rt_frame { z: 0.3 } "
           "ray_end_rt_frame { x: 0.5 z: 3.0 } }")
    result = ros.run_action(Manipulation, "/manipulation", Manipulation.Goal(request_text=sky))
    assert not result.success
    assert result.final_state == "MANIP_STATE_GRASP_FAILED_TO_RAYCAST_INTO_MAP", result.message
    floor = ("pick_object_ray_in_world { frame_name: 'body' ray_start_rt_frame { z: 0.3 } "
             "ray_end_rt_frame { x: 1.5 z: -1.0 } }")
    feedback = []
    result = ros.run_action(Manipulation, "/manipulation", Manipulation.Goal(request_text=floor),
                 timeout=60, feedback=feedback)
    assert result.success, result.message
    assert result.final_state == "MANIP_STATE_GRASP_SUCCEEDED"
    assert "MANIP_STATE_MOVING_TO_GRASP" in {f.state for f in feedback}
    assert ros.wait_for(lambda: ros.latest("/status/manipulation").is_gripper_holding_item)


def test_arm_velocity_moves_the_hand_and_stops_when_messages_stop(world):
    """arm/cmd_vel: each message holds 0.25 s (the watchdog); NaN sends nothing."""
    sim, driver, ros = world
    result = ros.run_action(ArmPosture, "/arm/posture",
                            ArmPosture.Goal(posture=ArmPosture.Goal.UNSTOW))
    assert result.success, result.message
    publisher = ros.publisher(Twist, "/arm/cmd_vel", 10)
    try:
        ros.next_messages("/tf", 3)
        before = odom_tform(ros, "hand")
        commands = sim.commands.count("RobotCommand")
        bad = Twist()
        bad.linear.z = math.nan
        publisher.publish(bad)
        # delivered and refused (the driver says so), and nothing reached the robot
        assert ros.wait_for(lambda: "arm/cmd_vel ignored" in driver.output(), 5.0), \
            driver.output()[-2000:]
        assert sim.commands.count("RobotCommand") == commands
        up = Twist()
        up.linear.z = 0.1
        began = time.monotonic()
        for _ in range(20):  # 1 s at 20 Hz (longer on a loaded machine: measured)
            publisher.publish(up)
            time.sleep(0.05)  # sleep: cmd_vel at 20 Hz, as a teleop sends it
        sent_for = time.monotonic() - began
        # The hand stops within a hold of the last message the driver took. On a loaded
        # machine the driver may take the last ones late, so the test waits for the hand to
        # stay put for 0.5 s (at most 3 s); an arm that kept going would fail the bound below.
        stopped = _settled_hand(ros, still_for=0.5, within=3.0)
        # The hand moves while messages come, plus up to one 0.25 s hold after the last.
        assert 0.1 * sent_for - 0.03 < stopped.z - before.z < 0.1 * (sent_for + 0.25) + 0.03
        assert math.hypot(stopped.x - before.x, stopped.y - before.y) < 0.03
    finally:
        ros.node.destroy_publisher(publisher)


def _settled_hand(ros, still_for: float, within: float):
    """odom_T_hand once it moved less than 5 mm over ``still_for`` s; fails after ``within``."""
    deadline = time.monotonic() + within
    ros.next_messages("/tf", 3)
    last = odom_tform(ros, "hand")
    while True:
        time.sleep(still_for)  # sleep: the span the hand must stay still over
        ros.next_messages("/tf", 3)
        now = odom_tform(ros, "hand")
        if abs(now.z - last.z) < 0.005:
            return now
        assert time.monotonic() < deadline, f"the hand still moves: z {last.z:.3f} -> {now.z:.3f}"
        last = now


DOWN = "rotation { w: 0.7071068 y: 0.7071068 }"  # the hand's x axis pointing down
PRESS = ("root_frame_name: 'flat_body' z_axis: AXIS_MODE_FORCE "
         "press_force_percentage { z: -0.1 } pose_trajectory_in_task { "
         f"points {{ pose {{ position {{ x: 0.75 }} {DOWN} }} }} "
         f"points {{ pose {{ position {{ x: 0.75 y: -0.2 }} {DOWN} }} "
         "time_since_reference { seconds: 2 } } }")


def test_arm_surface_contact_sweeps_the_hand_pressed_on_the_floor(world):
    """The SDK example's press through ROS: the tool sweeps 0.2 m right, 0.75 m ahead of the
    body, its z axis in force mode. It ends on the floor (not at the commanded z), with the
    robot's estimate of the floor pushing back on the hand: 10 % of the press force, along
    the hand's -x (up). A bad request is refused before anything is sent."""
    _sim, _, ros = world
    released = ros.call(OverrideGrasp, "/manipulation/override_grasp",
                        OverrideGrasp.Request(holding=False))  # no item's weight on the hand
    assert released.success, released.message
    result = ros.run_action(ArmPosture, "/arm/posture",
                            ArmPosture.Goal(posture=ArmPosture.Goal.UNSTOW))
    assert result.success, result.message
    ros.next_messages("/tf", 3)
    before = odom_tform(ros, "hand")
    bad = ros.run_action(ArmSurfaceContact, "/arm_surface_contact",
              ArmSurfaceContact.Goal(request_text=PRESS.replace("z: -0.1", "z: -1.5")))
    assert not bad.success and "within [-1, 1]" in bad.message, bad.message
    ros.next_messages("/tf", 3)
    assert odom_tform(ros, "hand").z == pytest.approx(before.z, abs=0.005)  # nothing sent
    feedback = []
    result = ros.run_action(ArmSurfaceContact, "/arm_surface_contact",
                 ArmSurfaceContact.Goal(request_text=PRESS), feedback=feedback)
    assert result.success, result.message
    remaining = [f.time_remaining for f in feedback]
    assert remaining[0] > 1.5 and remaining == sorted(remaining, reverse=True)
    assert result.hand.header.frame_id == "flat_body"
    hand = result.hand.pose.position
    assert (hand.x, hand.y) == pytest.approx((0.75, -0.2), abs=0.03)
    ros.next_messages("/tf", 3)
    assert odom_tform(ros, "hand").z == pytest.approx(0.0, abs=0.03)  # the floor
    press = 0.1 * 5.0 * 9.81  # 10 % of Spot Arm's published 5 kg continuous payload
    force = result.force_in_hand
    assert (force.x, force.y, force.z) == pytest.approx((-press, 0.0, 0.0), abs=0.5)
    result = ros.run_action(ArmPosture, "/arm/posture",
                            ArmPosture.Goal(posture=ArmPosture.Goal.STOW))
    assert result.success, result.message
