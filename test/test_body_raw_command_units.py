"""Any RobotCommand from ROS (``body/raw_command.py``): the goal's two forms parsed, what is
refused before anything is sent, and when the robot's feedback says the command is done."""

import math
import re

import pytest
from bosdyn.api import arm_command_pb2, basic_command_pb2, robot_command_pb2
from bosdyn.client.robot_command import RobotCommandBuilder

from spot_driver.body import raw_command
from spot_driver.core.errors import CommandError

FRAMES = {"odom", "vision", "body", "flat_body", "hand", "gpe"}
Container = basic_command_pb2.RobotCommandFeedbackStatus
Feedback = robot_command_pb2.RobotCommandFeedback


def test_one_form_parsed_and_bad_text_refused_with_the_parsers_reason():
    stand = RobotCommandBuilder.synchro_stand_command()
    assert raw_command.parse(stand.SerializeToString(), "") == stand
    text = "synchronized_command { mobility_command { stand_request {} } }"
    stand.synchronized_command.mobility_command.ClearField("params")
    assert raw_command.parse(b"", text) == stand
    for serialized, words in ((b"", "exactly one"), (stand.SerializeToString(), "exactly one")):
        with pytest.raises(CommandError, match=words):
            raw_command.parse(serialized, text if serialized else "  ")
    with pytest.raises(CommandError, match=re.escape(
            '1:24 : Message type "bosdyn.api.SynchronizedCommand.Request" has no field named '
            '"legs"')):
        raw_command.parse(b"", "synchronized_command { legs {} }")
    with pytest.raises(CommandError, match=re.escape("not a bosdyn.api.RobotCommand")):
        raw_command.parse(b"\xff\xff\xff", "")
    with pytest.raises(CommandError, match="is empty"):
        raw_command.parse(b"", "# nothing\n")


def test_non_finite_values_unknown_frames_and_missing_end_times_are_refused():
    velocity = RobotCommandBuilder.synchro_velocity_command(v_x=0.3, v_y=0.0, v_rot=0.1)
    raw_command.check(velocity, FRAMES, duration=2.0)
    with pytest.raises(CommandError, match="se2_velocity_request runs until an end time"):
        raw_command.check(velocity, FRAMES, duration=0.0)
    for duration in (-1.0, math.nan, 301.0):
        with pytest.raises(CommandError, match="outside"):
            raw_command.check(velocity, FRAMES, duration)
    bad = RobotCommandBuilder.synchro_velocity_command(v_x=math.nan, v_y=0.0, v_rot=0.0)
    with pytest.raises(CommandError,
                       match=re.escape("se2_velocity_request.velocity.linear.x is nan")):
        raw_command.check(bad, FRAMES, 1.0)
    elsewhere = RobotCommandBuilder.synchro_se2_trajectory_point_command(
        goal_x=1.0, goal_y=0.0, goal_heading=0.0, frame_name="kitchen")
    with pytest.raises(CommandError, match="se2_frame_name: unknown frame 'kitchen'"):
        raw_command.check(elsewhere, FRAMES, 5.0)
    params = RobotCommandBuilder.mobility_params(body_height=math.inf)
    tall = RobotCommandBuilder.synchro_stand_command(params=params)
    with pytest.raises(CommandError, match=re.escape("body_control.base_offset_rt_footprint")):
        raw_command.check(tall, FRAMES, 0.0)
    tall.synchronized_command.mobility_command.params.Pack(basic_command_pb2.StopCommand())
    with pytest.raises(CommandError, match=re.escape("not bosdyn.api.spot.MobilityParams")):
        raw_command.check(tall, FRAMES, 0.0)
    nothing = robot_command_pb2.RobotCommand()
    nothing.synchronized_command.SetInParent()
    with pytest.raises(CommandError, match="no mobility, arm or gripper part"):
        raw_command.check(nothing, FRAMES, 0.0)


def _mobility(container: int, **inner) -> Feedback:
    feedback = Feedback()
    part = feedback.synchronized_feedback.mobility_command_feedback
    part.status = container
    for name, values in inner.items():
        for field, value in values.items():
            setattr(getattr(part, name), field, value)
    return feedback


def test_done_when_the_robots_feedback_says_so():
    stand = RobotCommandBuilder.synchro_stand_command()
    Stand = basic_command_pb2.StandCommand.Feedback
    assert raw_command.judge(stand, _mobility(
        Container.STATUS_PROCESSING, stand_feedback={"status": Stand.STATUS_IN_PROGRESS})) == \
        (False, False, "mobility: STATUS_IN_PROGRESS")
    assert raw_command.judge(stand, _mobility(
        Container.STATUS_PROCESSING, stand_feedback={"status": Stand.STATUS_IS_STANDING})) == \
        (True, True, "mobility: STATUS_IS_STANDING")
    assert raw_command.judge(stand, _mobility(Container.STATUS_COMMAND_OVERRIDDEN)) == \
        (True, False, "mobility: STATUS_COMMAND_OVERRIDDEN")
    walk = RobotCommandBuilder.synchro_se2_trajectory_point_command(
        goal_x=1.0, goal_y=0.0, goal_heading=0.0, frame_name="odom")
    Traj = basic_command_pb2.SE2TrajectoryCommand.Feedback
    moving = _mobility(Container.STATUS_PROCESSING, se2_trajectory_feedback={
        "status": Traj.STATUS_AT_GOAL, "body_movement_status": Traj.BODY_STATUS_MOVING})
    assert raw_command.judge(walk, moving)[0] is False
    moving.synchronized_feedback.mobility_command_feedback.se2_trajectory_feedback\
        .body_movement_status = Traj.BODY_STATUS_SETTLED
    assert raw_command.judge(walk, moving) == (True, True, "mobility: STATUS_STOPPED")
    velocity = RobotCommandBuilder.synchro_velocity_command(v_x=0.3, v_y=0.0, v_rot=0.0)
    assert raw_command.judge(velocity, _mobility(
        Container.STATUS_PROCESSING, se2_velocity_feedback={}))[0] is False
    assert raw_command.judge(velocity, _mobility(Container.STATUS_COMMAND_TIMED_OUT)) == \
        (True, True, "mobility: STATUS_COMMAND_TIMED_OUT")
    stop = RobotCommandBuilder.stop_command()
    stopped = Feedback()
    stopped.full_body_feedback.status = Container.STATUS_PROCESSING
    stopped.full_body_feedback.stop_feedback.SetInParent()
    assert raw_command.judge(stop, stopped) == (True, True, "full_body: STATUS_PROCESSING")


def test_a_goal_is_refused_before_anything_is_sent():
    from types import SimpleNamespace

    from spot_driver.body.any_command import AnyCommandTask

    def goal(**fields):
        return SimpleNamespace(**{"command": b"", "command_text": "", "duration": 0.0,
                                  "timeout": 0.0, **fields})

    stand = "synchronized_command { mobility_command { stand_request {} } }"
    no_commander = None  # the checks run before the commander is used
    task = AnyCommandTask(no_commander, lambda: FRAMES, goal(command_text=stand))
    assert task.timeout == 60.0
    assert AnyCommandTask(no_commander, lambda: FRAMES,
                          goal(command_text=stand, duration=2.0)).timeout == 32.0
    for bad, words in ((goal(command_text=stand, timeout=-1.0), "timeout -1.0 s"),
                       (goal(command_text=stand, duration=math.inf), "duration inf s")):
        with pytest.raises(CommandError, match=words):
            AnyCommandTask(no_commander, lambda: FRAMES, bad)


def test_spot_check_results_name_each_part_and_the_findings():
    from bosdyn.api.spot import spot_check_pb2 as pb

    from spot_driver.body.spot_check import findings, results

    feedback = pb.SpotCheckFeedbackResponse()
    feedback.camera_results["left"].status = pb.DepthPlaneSpotCheckResult.STATUS_ERROR
    feedback.camera_results["back"].status = pb.DepthPlaneSpotCheckResult.STATUS_OK
    feedback.load_cell_results["fl"].error = pb.LoadCellSpotCheckResult.ERROR_NONE
    lines = results(feedback)
    assert lines == ["camera back: STATUS_OK", "camera left: STATUS_ERROR",
                     "load cell fl: ERROR_NONE"]
    assert findings(lines) == ["camera left: STATUS_ERROR"]


def test_manipulation_requests_are_parsed_and_checked_against_their_own_frames():
    from spot_driver.manipulation import api_request

    request = api_request.parse(
        b"", "pick_object_ray_in_world { frame_name: 'body' ray_end_rt_frame { x: 1 } }",
        FRAMES)
    assert request.WhichOneof("manipulation_cmd") == "pick_object_ray_in_world"
    in_image = ("pick_object_in_image { frame_name_image_sensor: 'frontleft_fisheye' "
                "transforms_snapshot_for_camera { child_to_parent_edge_map { "
                "key: 'frontleft_fisheye' value { parent_frame_name: 'body' } } } }")
    api_request.parse(b"", in_image, FRAMES)  # the camera frame is in the request's tree
    for text, words in (("header { }", "sets no command"),
                        ("pick_object { frame_name: 'shelf' }", "unknown frame 'shelf'")):
        with pytest.raises(CommandError, match=words):
            api_request.parse(b"", text, FRAMES)
    assert api_request.timeout(0.0) == api_request.DEFAULT_TIMEOUT_S
    with pytest.raises(CommandError, match="outside"):
        api_request.timeout(math.nan)


def test_arm_velocity_is_checked_and_clamped():
    from spot_driver.manipulation import arm_velocity

    command, clamped = arm_velocity.arm_velocity((0.1, 0.0, 0.2), (0.0, 0.0, 0.5))
    request = command.synchronized_command.arm_command.arm_velocity_command
    assert request.cartesian_velocity.frame_name == "body" and not clamped
    assert request.cartesian_velocity.velocity_in_frame_name.z == pytest.approx(0.2)
    command, clamped = arm_velocity.arm_velocity((3.0, 4.0, 0.0), (0.0, 0.0, 0.0))
    v = command.synchronized_command.arm_command.arm_velocity_command.cartesian_velocity
    assert clamped and math.hypot(v.velocity_in_frame_name.x, v.velocity_in_frame_name.y) == \
        pytest.approx(arm_velocity.MAX_LINEAR)
    with pytest.raises(CommandError, match="not finite"):
        arm_velocity.arm_velocity((math.nan, 0.0, 0.0), (0.0, 0.0, 0.0))


def test_surface_contact_requests_are_checked_and_timed():
    from spot_driver.manipulation import surface_contact

    press = ("root_frame_name: 'flat_body' z_axis: AXIS_MODE_FORCE "
             "press_force_percentage { z: -0.05 } pose_trajectory_in_task { "
             "points { pose { position { x: 0.75 } rotation { w: 1 } } } "
             "points { pose { position { x: 0.75 y: -0.2 } rotation { w: 1 } } "
             "time_since_reference { seconds: 2 } } }")
    request = surface_contact.parse(b"", press, FRAMES)
    assert surface_contact.seconds(request, 1000.0) == pytest.approx(2.0 + surface_contact.SETTLE_S)
    request.pose_trajectory_in_task.reference_time.seconds = 1001
    assert surface_contact.seconds(request, 1000.0) == pytest.approx(3.0 + surface_contact.SETTLE_S)
    only_force = "root_frame_name: 'body' z_axis: AXIS_MODE_FORCE press_force_percentage { z: -1 }"
    assert surface_contact.seconds(surface_contact.parse(b"", only_force, FRAMES), 0.0) == \
        surface_contact.SETTLE_S
    for text, words in (
            (press.replace("root_frame_name: 'flat_body' ", ""), "root_frame_name is required"),
            (press.replace("'flat_body'", "'table'"), "unknown frame 'table'"),
            (press.replace("z: -0.05", "z: -1.5"), r"within \[-1, 1\]"),
            (press.replace("x: 0.75 y", "x: nan y"), "must be finite"),
            ("root_frame_name: 'body'", "would do nothing"),
            (press.replace("seconds: 2", "seconds: 0"), "increasing times"),
            ("root_frame_name: 'body' x_axs: 1", "not a bosdyn.api.ArmSurfaceContact.Request")):
        with pytest.raises(CommandError, match=words):
            surface_contact.parse(b"", text, FRAMES)


def test_follow_arm_and_constrained_manipulation_are_timed_and_judged():
    """Follow-arm has no status and no end: the arm part decides. Constrained manipulation
    runs until its end time (the goal's duration sets it) and has run its course when the
    robot times it out still running; a lost grasp fails it at once."""
    ArmFb = arm_command_pb2.ArmCartesianCommand.Feedback
    follow = RobotCommandBuilder.build_synchro_command(
        RobotCommandBuilder.follow_arm_command(),
        RobotCommandBuilder.arm_pose_command(1.0, 0, 0.3, 1, 0, 0, 0, "odom", 2.0))
    raw_command.check(follow, FRAMES, duration=0.0)
    feedback = Feedback()
    sync = feedback.synchronized_feedback
    sync.mobility_command_feedback.status = Container.STATUS_PROCESSING
    sync.mobility_command_feedback.follow_arm_feedback.SetInParent()
    sync.arm_command_feedback.status = Container.STATUS_PROCESSING
    sync.arm_command_feedback.arm_cartesian_feedback.status = ArmFb.STATUS_IN_PROGRESS
    assert raw_command.judge(follow, feedback)[0] is False
    sync.arm_command_feedback.arm_cartesian_feedback.status = ArmFb.STATUS_TRAJECTORY_COMPLETE
    assert raw_command.judge(follow, feedback) == (
        True, True, "mobility: STATUS_PROCESSING; arm: STATUS_TRAJECTORY_COMPLETE")

    Request = basic_command_pb2.ConstrainedManipulationCommand.Request
    Fb = basic_command_pb2.ConstrainedManipulationCommand.Feedback
    pull = robot_command_pb2.RobotCommand()
    pull.full_body_command.constrained_manipulation_request.CopyFrom(Request(
        task_type=Request.TASK_TYPE_R3_LINEAR_FORCE, frame_name="hand", tangential_speed=0.1))
    pull.full_body_command.constrained_manipulation_request \
        .init_wrench_direction_in_frame_name.force.x = -1.0
    with pytest.raises(CommandError, match="constrained_manipulation_request runs until an "
                                           "end time"):
        raw_command.check(pull, FRAMES, duration=0.0)
    raw_command.check(pull, FRAMES, duration=3.0)
    state = Feedback()
    state.full_body_feedback.status = Container.STATUS_PROCESSING
    state.full_body_feedback.constrained_manipulation_feedback.status = Fb.STATUS_RUNNING
    assert raw_command.judge(pull, state)[0] is False
    state.full_body_feedback.status = Container.STATUS_COMMAND_TIMED_OUT
    assert raw_command.judge(pull, state) == (True, True,
                                              "full_body: STATUS_COMMAND_TIMED_OUT")
    state.full_body_feedback.status = Container.STATUS_PROCESSING
    state.full_body_feedback.constrained_manipulation_feedback.status = \
        Fb.STATUS_GRASP_IS_LOST
    assert raw_command.judge(pull, state) == (True, False, "full_body: STATUS_GRASP_IS_LOST")
