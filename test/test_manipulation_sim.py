"""The simulated Spot's arm, gripper, manipulation API and inverse kinematics, driven by the
official SDK only."""

import math
import time

import pytest
from bosdyn.api import (
    arm_command_pb2,
    arm_surface_contact_pb2,
    arm_surface_contact_service_pb2,
    gripper_command_pb2,
    manipulation_api_pb2,
    robot_command_pb2,
    trajectory_pb2,
)
from bosdyn.api.spot import inverse_kinematics_pb2
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client import frame_helpers
from bosdyn.client.arm_surface_contact import ArmSurfaceContactClient
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.image import ImageClient
from bosdyn.client.inverse_kinematics import InverseKinematicsClient
from bosdyn.client.manipulation_api_client import ManipulationApiClient
from bosdyn.client.math_helpers import Quat, SE3Pose
from bosdyn.client.power import power_on_motors
from bosdyn.client.robot_command import (
    InvalidRequestError,
    NotPoweredOnError,
    RobotCommandBuilder,
    UnsupportedError,
    block_until_arm_arrives,
    blocking_stand,
)
from bosdyn.util import seconds_to_duration
from test_body_sim import commander, odom_tform_body, operated, state_of, wait_for

from conftest import client, connect, holds, running_sim

ArmFb = arm_command_pb2
State = manipulation_api_pb2.ManipulationFeedbackState
ARM = ("arm0.sh0", "arm0.sh1", "arm0.el0", "arm0.el1", "arm0.wr0", "arm0.wr1")


@pytest.fixture
def arm_sim(certs_dir):
    with running_sim(certs_dir, has_arm=True) as sim:
        yield sim


@pytest.fixture
def arm_robot(arm_sim):
    robot = connect(arm_sim)
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=5)
        yield robot
    robot.time_sync.stop()


def joints(robot) -> dict[str, float]:
    return {j.name: j.position.value for j in state_of(robot).kinematic_state.joint_states}


def arm_feedback(robot, command_id):
    feedback = commander(robot).robot_command_feedback(command_id).feedback
    return feedback.synchronized_feedback.arm_command_feedback


def test_joint_move_interpolates_to_the_target(arm_robot):
    target = [0.3, -1.2, 1.9, 0.2, -0.5, 0.4]
    command = RobotCommandBuilder.arm_joint_move_helper([target], [1.5])
    command_id = commander(arm_robot).robot_command(command)
    time.sleep(0.7)  # sleep: a sample midway through the 1.5 s move (its timing is tested)
    midway = joints(arm_robot)
    assert 0.0 < midway["arm0.sh0"] < 0.3, "the move is interpolated over time"
    assert arm_feedback(arm_robot, command_id).arm_joint_move_feedback.status == \
        ArmFb.ArmJointMoveCommand.Feedback.STATUS_IN_PROGRESS
    assert wait_for(lambda: arm_feedback(arm_robot, command_id).arm_joint_move_feedback.status
                    == ArmFb.ArmJointMoveCommand.Feedback.STATUS_COMPLETE, timeout=4)
    reached = joints(arm_robot)
    assert [reached[n] for n in ARM] == pytest.approx(target, abs=1e-6)
    assert state_of(arm_robot).manipulator_state.stow_state == 2  # deployed


def test_joint_move_outside_limits_is_refused(arm_robot):
    before = joints(arm_robot)
    command = RobotCommandBuilder.arm_joint_move_helper([[0, -1, -0.5, 0, 0, 0]], [1.0])
    with pytest.raises(InvalidRequestError) as error:
        commander(arm_robot).robot_command(command)
    assert "arm0.el0" in error.value.response.message
    assert joints(arm_robot) == pytest.approx(before, abs=1e-9)


def test_cartesian_pose_in_odom_puts_the_hand_there(arm_robot):
    snapshot = state_of(arm_robot).kinematic_state.transforms_snapshot
    odom_t_body = frame_helpers.get_a_tform_b(snapshot, "odom", "body")
    goal = odom_t_body * SE3Pose(0.75, 0.1, 0.3, Quat.from_pitch(0.4))
    command = RobotCommandBuilder.arm_pose_command(
        goal.x, goal.y, goal.z, goal.rot.w, goal.rot.x, goal.rot.y, goal.rot.z, "odom", 1.5)
    command_id = commander(arm_robot).robot_command(command)
    Fb = ArmFb.ArmCartesianCommand.Feedback
    assert wait_for(lambda: arm_feedback(arm_robot, command_id).arm_cartesian_feedback.status
                    == Fb.STATUS_TRAJECTORY_COMPLETE, timeout=5)
    snapshot = state_of(arm_robot).kinematic_state.transforms_snapshot
    hand = frame_helpers.get_a_tform_b(snapshot, "odom", "hand")
    assert math.dist((hand.x, hand.y, hand.z), (goal.x, goal.y, goal.z)) < 0.005
    assert abs((hand.rot.inverse() * goal.rot).to_axis_angle()[0]) < math.radians(1)
    # As a real Spot (5.x) reports it: the hand and the wrist (arm0.link_wr1) under body, no
    # arm links between them.
    edges = snapshot.child_to_parent_edge_map
    assert edges["hand"].parent_frame_name == "body"
    assert edges["arm0.link_wr1"].parent_frame_name == "body"
    assert [name for name in edges if name.startswith("arm0.")] == ["arm0.link_wr1"]
    wrist_t_hand = frame_helpers.get_a_tform_b(snapshot, "arm0.link_wr1", "hand")
    assert (wrist_t_hand.x, wrist_t_hand.y, wrist_t_hand.z) == pytest.approx((0.19557, 0, 0))


def test_unreachable_pose_stalls(arm_robot):
    command = RobotCommandBuilder.arm_pose_command(3.0, 0, 0.3, 1, 0, 0, 0, "body", 1.0)
    command_id = commander(arm_robot).robot_command(command)
    Fb = ArmFb.ArmCartesianCommand.Feedback
    assert wait_for(lambda: arm_feedback(arm_robot, command_id).arm_cartesian_feedback.status
                    == Fb.STATUS_TRAJECTORY_STALLED, timeout=5)


def test_gripper_open_close_and_named_positions(arm_robot):
    client = commander(arm_robot)
    Named = ArmFb.NamedArmPositionsCommand.Feedback
    command_id = client.robot_command(RobotCommandBuilder.arm_ready_command())
    assert wait_for(lambda: arm_feedback(arm_robot, command_id).named_arm_position_feedback
                    .status == Named.STATUS_COMPLETE, timeout=6)
    command_id = client.robot_command(RobotCommandBuilder.claw_gripper_open_command())
    Claw = gripper_command_pb2.ClawGripperCommand.Feedback

    def claw_status():
        feedback = client.robot_command_feedback(command_id).feedback
        return feedback.synchronized_feedback.gripper_command_feedback.claw_gripper_feedback.status

    assert wait_for(lambda: claw_status() == Claw.STATUS_AT_GOAL, timeout=3)
    assert state_of(arm_robot).manipulator_state.gripper_open_percentage == pytest.approx(100)
    command_id = client.robot_command(RobotCommandBuilder.claw_gripper_close_command())
    assert wait_for(lambda: claw_status() == Claw.STATUS_AT_GOAL, timeout=3)
    assert state_of(arm_robot).manipulator_state.gripper_open_percentage == pytest.approx(0)


def test_arm_stop_freezes_a_move(arm_robot):
    client = commander(arm_robot)
    client.robot_command(RobotCommandBuilder.arm_joint_move_helper(
        [[1.0, -1.2, 1.9, 0.0, 0.0, 0.0]], [2.0]))
    assert wait_for(lambda: joints(arm_robot)["arm0.sh0"] > 0.1)  # under way
    stop = robot_command_pb2.RobotCommand()
    stop.synchronized_command.arm_command.arm_stop_command.SetInParent()
    client.robot_command(stop)
    stopped = joints(arm_robot)
    assert holds(lambda: joints(arm_robot)["arm0.sh0"] == pytest.approx(stopped["arm0.sh0"],
                                                                        abs=1e-3), 0.4)
    assert 0.05 < stopped["arm0.sh0"] < 0.9


def test_robot_without_an_arm_refuses_arm_commands(certs_dir):
    with running_sim(certs_dir) as sim:
        robot = connect(sim)
        with operated(robot):
            with pytest.raises(UnsupportedError) as error:
                commander(robot).robot_command(RobotCommandBuilder.arm_ready_command())
            assert "no arm" in error.value.response.message
        robot.time_sync.stop()


def test_pick_object_in_image_walks_reaches_and_grasps(arm_robot):
    blocking_stand(commander(arm_robot), timeout_sec=5)
    image = arm_robot.ensure_client(ImageClient.default_service_name).get_image_from_sources(
        ["frontleft_fisheye_image"])[0]
    pick = manipulation_api_pb2.PickObjectInImage(
        pixel_xy={"x": 320, "y": 420},
        transforms_snapshot_for_camera=image.shot.transforms_snapshot,
        frame_name_image_sensor=image.shot.frame_name_image_sensor,
        camera_model=image.source.pinhole)
    client = arm_robot.ensure_client(ManipulationApiClient.default_service_name)
    response = client.manipulation_api_command(
        manipulation_api_pb2.ManipulationApiRequest(pick_object_in_image=pick))
    seen = []
    deadline = time.monotonic() + 25
    while time.monotonic() < deadline:
        state = client.manipulation_api_feedback_command(
            manipulation_api_pb2.ManipulationApiFeedbackRequest(
                manipulation_cmd_id=response.manipulation_cmd_id)).current_state
        if not seen or seen[-1] != state:
            seen.append(state)
        if state in (State.MANIP_STATE_GRASP_SUCCEEDED, State.MANIP_STATE_GRASP_FAILED,
                     State.MANIP_STATE_GRASP_PLANNING_NO_SOLUTION):
            break
        time.sleep(0.05)
    names = [State.Name(s) for s in seen]
    assert names[-1] == "MANIP_STATE_GRASP_SUCCEEDED", names
    assert "MANIP_STATE_MOVING_TO_GRASP" in names and "MANIP_STATE_GRASPING_OBJECT" in names
    manipulator = state_of(arm_robot).manipulator_state
    assert manipulator.is_gripper_holding_item
    assert manipulator.estimated_end_effector_force_in_hand.z != 0 or \
        manipulator.estimated_end_effector_force_in_hand.x != 0
    client.grasp_override_command(manipulation_api_pb2.ApiGraspOverrideRequest(
        api_grasp_override={"override_request": 2}))
    assert not state_of(arm_robot).manipulator_state.is_gripper_holding_item


def test_arm_commands_need_motor_power(arm_sim):
    robot = connect(arm_sim)
    with operated(robot):
        with pytest.raises(NotPoweredOnError):
            commander(robot).robot_command(RobotCommandBuilder.arm_ready_command())
    robot.time_sync.stop()


def test_gaze_and_cartesian_velocity(arm_robot):
    client = commander(arm_robot)
    ready = client.robot_command(RobotCommandBuilder.arm_ready_command())
    assert wait_for(lambda: arm_feedback(arm_robot, ready).named_arm_position_feedback.status
                    == ArmFb.NamedArmPositionsCommand.Feedback.STATUS_COMPLETE, 5.0)
    command_id = client.robot_command(RobotCommandBuilder.arm_gaze_command(2.0, 0.5, 0.0, "body"))
    Gaze = ArmFb.GazeCommand.Feedback
    assert wait_for(lambda: arm_feedback(arm_robot, command_id).arm_gaze_feedback.status
                    == Gaze.STATUS_TRAJECTORY_COMPLETE, timeout=4)
    snapshot = state_of(arm_robot).kinematic_state.transforms_snapshot
    hand = frame_helpers.get_a_tform_b(snapshot, "body", "hand")
    x_axis = hand.rot.transform_point(1.0, 0.0, 0.0)
    to_target = (2.0 - hand.x, 0.5 - hand.y, 0.0 - hand.z)
    cosine = sum(a * b for a, b in zip(x_axis, to_target, strict=True)) / math.dist(
        (0, 0, 0), to_target)
    assert cosine > math.cos(math.radians(2)), "the hand looks at the target"

    start = frame_helpers.get_a_tform_b(snapshot, "body", "hand")
    velocity = robot_command_pb2.RobotCommand()
    cartesian = velocity.synchronized_command.arm_command.arm_velocity_command.cartesian_velocity
    cartesian.frame_name = "body"
    cartesian.velocity_in_frame_name.z = 0.1
    client.robot_command(velocity, end_time_secs=time.time() + 1.0)
    time.sleep(1.5)  # sleep: past the command's end time, when it stops by itself (tested)
    end = frame_helpers.get_a_tform_b(state_of(arm_robot).kinematic_state.transforms_snapshot,
                                      "body", "hand")
    assert end.z - start.z == pytest.approx(0.1, abs=0.02), "1 s at 0.1 m/s, then it stops"
    assert math.dist((end.x, end.y), (start.x, start.y)) < 0.01


def _final_state(client, command_id: int, seconds: float = 25.0) -> list[str]:
    """The states a manipulation command went through, until it ended."""
    seen = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        state = client.manipulation_api_feedback_command(
            manipulation_api_pb2.ManipulationApiFeedbackRequest(
                manipulation_cmd_id=command_id)).current_state
        if not seen or seen[-1] != State.Name(state):
            seen.append(State.Name(state))
        if state in (State.MANIP_STATE_GRASP_SUCCEEDED, State.MANIP_STATE_GRASP_FAILED,
                     State.MANIP_STATE_DONE, State.MANIP_STATE_GRASP_FAILED_TO_RAYCAST_INTO_MAP,
                     State.MANIP_STATE_GRASP_PLANNING_NO_SOLUTION):
            break
        time.sleep(0.05)
    return seen


def test_pick_at_a_point_and_walk_along_a_ray_in_the_world(arm_robot):
    blocking_stand(commander(arm_robot), timeout_sec=5)
    client = arm_robot.ensure_client(ManipulationApiClient.default_service_name)
    Request = manipulation_api_pb2.ManipulationApiRequest
    start = odom_tform_body(arm_robot)
    walk = Request(walk_to_object_ray_in_world=manipulation_api_pb2.WalkToObjectRayInWorld(
        frame_name="body", ray_start_rt_frame={"z": 0.3},
        ray_end_rt_frame={"x": 2.0, "z": -1.0}))
    walk.walk_to_object_ray_in_world.offset_distance.value = 0.5
    states = _final_state(client, client.manipulation_api_command(walk).manipulation_cmd_id)
    assert states[-1] == "MANIP_STATE_DONE", states
    walked = odom_tform_body(arm_robot).x - start.x
    hit = 2.0 * (0.3 + 0.52) / (0.3 + 1.0)  # where the ray meets the floor, ahead of body
    assert walked == pytest.approx(hit - 0.5, abs=0.15)
    pick = Request(pick_object=manipulation_api_pb2.PickObject(
        frame_name="body", object_rt_frame={"x": 0.9, "z": -0.5}))
    states = _final_state(client, client.manipulation_api_command(pick).manipulation_cmd_id)
    assert states[-1] == "MANIP_STATE_GRASP_SUCCEEDED", states
    assert state_of(arm_robot).manipulator_state.is_gripper_holding_item
    unknown = Request(pick_object=manipulation_api_pb2.PickObject(
        frame_name="kitchen", object_rt_frame={"x": 1.0}))
    with pytest.raises(InvalidRequestError):
        client.manipulation_api_command(unknown)


def _surface_contact(y_end: float, press_z: float, root: str = "odom", seconds: float = 2.0,
                     odom_t_flat=None):
    """The SDK example's request: the hand pointing down 0.75 m ahead of the body, swept to
    ``y_end`` with the z axis pressing (fraction ``press_z``)."""
    Req = arm_surface_contact_pb2.ArmSurfaceContact.Request
    down = Quat(0.7071068, 0.0, 0.7071068, 0.0)
    points = []
    for t, y in ((0.0, 0.0), (seconds, y_end)):
        pose = odom_t_flat * SE3Pose(0.75, y, 0.0, down)
        points.append(trajectory_pb2.SE3TrajectoryPoint(
            pose=pose.to_proto(), time_since_reference=seconds_to_duration(t)))
    request = Req(pose_trajectory_in_task=trajectory_pb2.SE3Trajectory(points=points),
                  root_frame_name=root, x_axis=Req.AXIS_MODE_POSITION,
                  y_axis=Req.AXIS_MODE_POSITION, z_axis=Req.AXIS_MODE_FORCE,
                  z_admittance=Req.ADMITTANCE_SETTING_LOOSE)
    request.press_force_percentage.z = press_z
    return arm_surface_contact_service_pb2.ArmSurfaceContactCommand(request=request)


def _hand_and_force(robot):
    state = state_of(robot)
    odom_t_hand = frame_helpers.get_a_tform_b(state.kinematic_state.transforms_snapshot,
                                              "odom", "hand")
    f = state.manipulator_state.estimated_end_effector_force_in_hand
    return odom_t_hand, odom_t_hand.rot.transform_point(f.x, f.y, f.z)


def test_surface_contact_presses_on_the_floor_along_the_trajectory(arm_robot):
    """The hand sweeps sideways in x and y as commanded while its z axis, in force mode,
    brings the tool down onto the floor (z = 0 in odom); the floor's reaction on the hand is
    the commanded fraction of the arm's press force, upwards, until another arm command."""
    command = commander(arm_robot)
    blocking_stand(command, timeout_sec=5)
    block_until_arm_arrives(command, command.robot_command(
        RobotCommandBuilder.arm_ready_command()), 5.0)
    client = arm_robot.ensure_client(ArmSurfaceContactClient.default_service_name)
    snapshot = state_of(arm_robot).kinematic_state.transforms_snapshot
    odom_t_flat = frame_helpers.get_a_tform_b(snapshot, "odom", "flat_body")
    for bad in (_surface_contact(-0.5, -1.5, odom_t_flat=odom_t_flat),
                _surface_contact(-0.5, -0.1, root="kitchen", odom_t_flat=odom_t_flat)):
        before, _ = _hand_and_force(arm_robot)
        error = client.arm_surface_contact_command(bad).header.error  # the SDK raises nothing
        assert error.code == error.CODE_INVALID_REQUEST and error.message
        time.sleep(0.3)  # sleep: a span in which the refused command must move nothing
        after, _ = _hand_and_force(arm_robot)
        assert after.z == pytest.approx(before.z, abs=0.01)  # nothing moved
    response = client.arm_surface_contact_command(
        _surface_contact(-0.2, -0.1, odom_t_flat=odom_t_flat))
    assert response.header.error.code == response.header.error.CODE_OK
    time.sleep(0.8)  # sleep: a sample during the sweep (surface contact has no feedback)
    mid, _ = _hand_and_force(arm_robot)
    time.sleep(2.5)  # sleep: past the sweep's duration (surface contact has no feedback)
    hand, force = _hand_and_force(arm_robot)
    wanted = odom_t_flat * SE3Pose(0.75, -0.2, 0.0, Quat())
    assert (hand.x, hand.y) == pytest.approx((wanted.x, wanted.y), abs=0.03)
    assert hand.z == pytest.approx(0.0, abs=0.03)  # on the floor, not at the commanded z
    assert mid.y > hand.y + 0.05  # swept over time, not jumped
    press = 0.1 * 5.0 * 9.81  # 10 % of Spot Arm's published 5 kg continuous payload
    assert force == pytest.approx((0.0, 0.0, press), abs=0.3)
    block_until_arm_arrives(command, command.robot_command(
        RobotCommandBuilder.arm_ready_command()), 5.0)
    _, force = _hand_and_force(arm_robot)
    assert force == pytest.approx((0.0, 0.0, 0.0), abs=1e-6)
    # The SDK example's sweep to 0.5 m right: the body does not follow the hand here, so the
    # floor there is out of the arm's reach and nothing is pressed.
    client.arm_surface_contact_command(_surface_contact(-0.5, -0.1, odom_t_flat=odom_t_flat))
    time.sleep(3.0)  # sleep: past the sweep's duration (surface contact has no feedback)
    hand, force = _hand_and_force(arm_robot)
    assert hand.z > 0.05 and force == pytest.approx((0.0, 0.0, 0.0), abs=1e-6)


def test_inverse_kinematics_from_the_arm_kinematics(equipped_sim, equipped_robot):
    from spot_sim.body.arm import kinematics as arm_kinematics

    ik = client(equipped_robot, InverseKinematicsClient)
    snapshot = state_of(equipped_robot).kinematic_state.transforms_snapshot
    odom_t_body = get_a_tform_b(snapshot, "odom", "body")
    body_t_tool = SE3Pose(0.7, 0.0, 0.3, Quat())  # no wrist-mounted tool: the tool is the hand
    task = inverse_kinematics_pb2.InverseKinematicsRequest.ToolPoseTask(
        task_tform_desired_tool=body_t_tool.to_proto())
    request = inverse_kinematics_pb2.InverseKinematicsRequest(
        root_frame_name="odom", scene_tform_task=odom_t_body.to_proto(), tool_pose_task=task)
    response = ik.inverse_kinematics(request)
    assert response.status == response.STATUS_OK
    q = [j.position.value for j in response.robot_configuration.joint_states][:6]
    hand = arm_kinematics.hand_pose(q)
    assert hand[:3, 3] == pytest.approx([0.7, 0.0, 0.3], abs=2e-3)  # the sim arm's own FK
    reported = get_a_tform_b(response.robot_configuration.transforms_snapshot, "body", "hand")
    assert (reported.x, reported.y, reported.z) == pytest.approx((0.7, 0.0, 0.3), abs=2e-3)
    far = inverse_kinematics_pb2.InverseKinematicsRequest(
        root_frame_name="odom", scene_tform_task=odom_t_body.to_proto(),
        tool_pose_task=inverse_kinematics_pb2.InverseKinematicsRequest.ToolPoseTask(
            task_tform_desired_tool=SE3Pose(5.0, 0, 0, Quat()).to_proto()))
    assert ik.inverse_kinematics(far).status == response.STATUS_NO_SOLUTION_FOUND
    with pytest.raises(sdk_errors.InvalidRequestError):
        ik.inverse_kinematics(inverse_kinematics_pb2.InverseKinematicsRequest(
            root_frame_name="hand", tool_pose_task=task))
