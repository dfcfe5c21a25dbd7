"""The simulated Spot's raw arm modes, driven by the official SDK only: follow-arm, Cartesian
force axes, impedance control and constrained manipulation."""

import math
import os
import subprocess
import sys
import time

import pytest
import test_manipulation_sim
from bosdyn.api import (
    arm_command_pb2,
    basic_command_pb2,
    geometry_pb2,
    manipulation_api_pb2,
    robot_command_pb2,
    trajectory_pb2,
)
from bosdyn.client import frame_helpers
from bosdyn.client.lease import LeaseClient, LeaseKeepAlive
from bosdyn.client.manipulation_api_client import ManipulationApiClient
from bosdyn.client.math_helpers import Quat, SE3Pose
from bosdyn.client.power import power_on_motors
from bosdyn.client.robot_command import (
    InvalidRequestError,
    RobotCommandBuilder,
    block_until_arm_arrives,
    blocking_stand,
)
from bosdyn.util import seconds_to_duration
from test_body_sim import commander, state_of, wait_for

from conftest import PASSWORD, USERNAME, connect, holds, running_sim

# the arm's fixtures
arm_sim, arm_robot = test_manipulation_sim.arm_sim, test_manipulation_sim.arm_robot
Cartesian = arm_command_pb2.ArmCartesianCommand
Impedance = arm_command_pb2.ArmImpedanceCommand
ConstrainedFb = basic_command_pb2.ConstrainedManipulationCommand.Feedback
Task = basic_command_pb2.ConstrainedManipulationCommand.Request.TaskType
DOWN = Quat(0.7071068, 0.0, 0.7071068, 0.0)  # the hand's x axis pointing down


def _odom_t(robot, frame: str) -> SE3Pose:
    snapshot = state_of(robot).kinematic_state.transforms_snapshot
    return frame_helpers.get_a_tform_b(snapshot, "odom", frame)


def _force_in_odom(robot) -> tuple[float, float, float]:
    state = state_of(robot)
    hand = frame_helpers.get_a_tform_b(state.kinematic_state.transforms_snapshot, "odom",
                                       "hand")
    f = state.manipulator_state.estimated_end_effector_force_in_hand
    return hand.rot.transform_point(f.x, f.y, f.z)


def _arm_feedback(robot, command_id: int):
    feedback = commander(robot).robot_command_feedback(command_id).feedback
    return feedback.synchronized_feedback.arm_command_feedback


def _ready(robot) -> None:
    command = commander(robot)
    blocking_stand(command, timeout_sec=5)
    block_until_arm_arrives(command, command.robot_command(
        RobotCommandBuilder.arm_ready_command()), 5.0)


def _hand_goal_in_odom(robot, x: float, z: float) -> SE3Pose:
    return _odom_t(robot, "flat_body") * SE3Pose(x, 0.0, z, Quat())


def test_follow_arm_walks_the_body_to_a_hand_goal_beyond_reach(arm_robot):
    """Boston Dynamics' arm_with_body_follow: a hand goal 1.25 m ahead in odom is out of
    the arm's reach from where the body stands; with follow-arm the body walks until the
    hand reaches it, and stops 1.0 m behind it (the hand's offset at the ready pose);
    without, the arm stalls and the body stays."""
    command = commander(arm_robot)
    _ready(arm_robot)
    start = _odom_t(arm_robot, "body")
    far = _hand_goal_in_odom(arm_robot, 1.5, 0.25)
    command_id = command.robot_command(RobotCommandBuilder.arm_pose_command(
        far.x, far.y, far.z, 1, 0, 0, 0, "odom", 2.0))
    assert wait_for(lambda: _arm_feedback(arm_robot, command_id).arm_cartesian_feedback.status
                    == Cartesian.Feedback.STATUS_TRAJECTORY_STALLED, timeout=6)
    body = _odom_t(arm_robot, "body")
    assert math.hypot(body.x - start.x, body.y - start.y) < 0.01

    goal = _hand_goal_in_odom(arm_robot, 1.25, 0.25)
    arm = RobotCommandBuilder.arm_pose_command(goal.x, goal.y, goal.z, 1, 0, 0, 0, "odom", 2.0)
    follow = RobotCommandBuilder.build_synchro_command(
        RobotCommandBuilder.follow_arm_command(), RobotCommandBuilder.arm_pose_command(
            goal.x, goal.y, goal.z, 1, 0, 0, 0, "odom", 2.0))
    command_id = command.robot_command(follow)
    time.sleep(0.6)  # sleep: a sample during the 2 s move (its timing is tested)
    assert _arm_feedback(arm_robot, command_id).arm_cartesian_feedback.status == \
        Cartesian.Feedback.STATUS_IN_PROGRESS
    seen = set()  # not STALLED on the way: the arm moves on once the body stops

    def complete() -> bool:
        seen.add(_arm_feedback(arm_robot, command_id).arm_cartesian_feedback.status)
        return Cartesian.Feedback.STATUS_TRAJECTORY_COMPLETE in seen

    assert wait_for(complete, timeout=8, period=0.01)
    assert Cartesian.Feedback.STATUS_TRAJECTORY_STALLED not in seen
    hand, body = _odom_t(arm_robot, "hand"), _odom_t(arm_robot, "body")
    assert math.dist((hand.x, hand.y, hand.z), (goal.x, goal.y, goal.z)) < 0.02
    walked = math.hypot(body.x - start.x, body.y - start.y)
    assert walked == pytest.approx(0.25, abs=0.05)
    feedback = command.robot_command_feedback(command_id).feedback
    assert feedback.synchronized_feedback.mobility_command_feedback.HasField(
        "follow_arm_feedback")

    bad = RobotCommandBuilder.build_synchro_command(
        RobotCommandBuilder.follow_arm_command(), arm)
    bad.synchronized_command.mobility_command.follow_arm_request.body_offset_from_hand.x = \
        math.nan
    with pytest.raises(InvalidRequestError):
        command.robot_command(bad)


def _force_down_command(robot, force_z: float | None, x: float = 0.75):
    """An ArmCartesianCommand in odom: x and y hold the hand above a point ``x`` ahead of
    the body, z is in force mode pushing ``force_z`` N along odom z."""
    flat = _odom_t(robot, "flat_body")
    above = flat * SE3Pose(x, 0.0, 0.1, DOWN)
    request = Cartesian.Request(
        root_frame_name="odom", x_axis=Cartesian.Request.AXIS_MODE_POSITION,
        y_axis=Cartesian.Request.AXIS_MODE_POSITION, z_axis=Cartesian.Request.AXIS_MODE_FORCE,
        pose_trajectory_in_task=trajectory_pb2.SE3Trajectory(points=[
            trajectory_pb2.SE3TrajectoryPoint(pose=above.to_proto(),
                                              time_since_reference=seconds_to_duration(1.5))]))
    if force_z is not None:
        request.wrench_trajectory_in_task.points.add(
            wrench=geometry_pb2.Wrench(force=geometry_pb2.Vec3(z=force_z)),
            time_since_reference=seconds_to_duration(1.5))
    command = robot_command_pb2.RobotCommand()
    command.synchronized_command.arm_command.arm_cartesian_command.CopyFrom(request)
    return command, above


def test_a_force_axis_presses_the_hand_on_the_floor(arm_robot):
    """z in force mode (20 N down), x and y in position: the hand comes down onto the
    floor above the commanded point and the floor pushes back 20 N; a force axis without a
    wrench trajectory is refused and nothing moves."""
    command = commander(arm_robot)
    _ready(arm_robot)
    before = _odom_t(arm_robot, "hand")
    bad, _ = _force_down_command(arm_robot, None)
    with pytest.raises(InvalidRequestError):
        command.robot_command(bad)
    assert holds(lambda: _odom_t(arm_robot, "hand").z == pytest.approx(before.z, abs=1e-3), 0.3)
    good, above = _force_down_command(arm_robot, -20.0)
    command_id = command.robot_command(good)
    assert wait_for(lambda: _arm_feedback(arm_robot, command_id).arm_cartesian_feedback.status
                    == Cartesian.Feedback.STATUS_TRAJECTORY_COMPLETE, timeout=5)
    hand = _odom_t(arm_robot, "hand")
    assert (hand.x, hand.y) == pytest.approx((above.x, above.y), abs=0.02)
    assert hand.z == pytest.approx(0.0, abs=0.02)  # on the floor, not 0.1 m above it
    assert _force_in_odom(arm_robot) == pytest.approx((0.0, 0.0, 20.0), abs=0.5)


def _impedance(robot, desired: SE3Pose, stiffness, force=(0.0, 0.0, 0.0), seconds=1.5):
    request = Impedance.Request(
        root_frame_name="odom",
        task_tform_desired_tool=trajectory_pb2.SE3Trajectory(points=[
            trajectory_pb2.SE3TrajectoryPoint(pose=desired.to_proto(),
                                              time_since_reference=seconds_to_duration(
                                                  seconds))]),
        feed_forward_wrench_at_tool_in_desired_tool=geometry_pb2.Wrench(
            force=geometry_pb2.Vec3(x=force[0], y=force[1], z=force[2])))
    request.diagonal_stiffness_matrix.values.extend(stiffness)
    request.diagonal_damping_matrix.values.extend([2.5, 2.5, 2.5, 1.0, 1.0, 1.0])
    command = robot_command_pb2.RobotCommand()
    command.synchronized_command.arm_command.arm_impedance_command.CopyFrom(request)
    return command


def _tool(robot) -> SE3Pose:
    return _odom_t(robot, "arm0.link_wr1") * SE3Pose(0.19557, 0, 0, Quat())


def test_impedance_springs_balance_in_the_air_and_press_on_the_floor(arm_robot):
    """In free space the tool settles where the springs balance the feed-forward force
    (10 N against 500 N/m: 2 cm); a desired pose 5 cm under the floor leaves the tool on the
    floor, pushed back by the spring's 500 N/m x 5 cm = 25 N."""
    command = commander(arm_robot)
    _ready(arm_robot)
    stiffness = [500, 500, 500, 60, 60, 60]
    with pytest.raises(InvalidRequestError):
        command.robot_command(_impedance(arm_robot, _tool(arm_robot), stiffness[:5]))
    flat = _odom_t(arm_robot, "flat_body")
    desired = flat * SE3Pose(0.8, 0.0, 0.3, Quat())
    command_id = command.robot_command(_impedance(arm_robot, desired, stiffness, (10, 0, 0)))
    Fb = Impedance.Feedback
    assert wait_for(lambda: _arm_feedback(arm_robot, command_id).arm_impedance_feedback.status
                    == Fb.STATUS_TRAJECTORY_COMPLETE, timeout=5)
    tool = _tool(arm_robot)
    expected = desired * SE3Pose(0.02, 0, 0, Quat())
    assert (tool.x, tool.y, tool.z) == pytest.approx((expected.x, expected.y, expected.z),
                                                     abs=0.005)
    feedback = _arm_feedback(arm_robot, command_id).arm_impedance_feedback
    spring = feedback.commanded_wrench_from_stiffness_at_tool_in_desired_tool.force
    assert spring.x == pytest.approx(-10.0, abs=1.0)  # the spring holds the push
    assert _force_in_odom(arm_robot) == pytest.approx((0, 0, 0), abs=1e-6)

    ahead = flat * SE3Pose(0.8, 0.0, 0.0, Quat())
    under = SE3Pose(ahead.x, ahead.y, -0.05, ahead.rot * DOWN)  # 5 cm under the floor
    command_id = command.robot_command(_impedance(arm_robot, under, stiffness))
    assert wait_for(lambda: _arm_feedback(arm_robot, command_id).arm_impedance_feedback.status
                    == Fb.STATUS_TRAJECTORY_COMPLETE, timeout=5)
    assert _tool(arm_robot).z == pytest.approx(0.0, abs=0.01)
    assert _force_in_odom(arm_robot) == pytest.approx((0.0, 0.0, 25.0), abs=1.0)
    feedback = _arm_feedback(arm_robot, command_id).arm_impedance_feedback
    assert feedback.total_measured_wrench_at_tool_in_desired_tool.force.x == \
        pytest.approx(-25.0, abs=1.0)  # the desired tool's x points down


def _hold_something(robot) -> None:
    client = robot.ensure_client(ManipulationApiClient.default_service_name)
    Override = manipulation_api_pb2.ApiGraspOverride
    client.grasp_override_command(manipulation_api_pb2.ApiGraspOverrideRequest(
        api_grasp_override=Override(override_request=Override.OVERRIDE_HOLDING)))


def _constrained(robot, task_type: int, seconds: float, **fields):
    end = robot.time_sync.robot_timestamp_from_local_secs(time.time() + seconds)
    command = robot_command_pb2.RobotCommand()
    request = command.full_body_command.constrained_manipulation_request
    request.task_type, request.frame_name = task_type, "body"
    request.end_time.CopyFrom(end)
    for name, value in fields.items():
        if name in ("force", "torque"):
            getattr(request.init_wrench_direction_in_frame_name, name).CopyFrom(
                geometry_pb2.Vec3(x=value[0], y=value[1], z=value[2]))
        else:
            setattr(request, name, value)
    return command


def _constrained_feedback(robot, command_id: int):
    feedback = commander(robot).robot_command_feedback(command_id).feedback
    return feedback.full_body_feedback.constrained_manipulation_feedback


def test_constrained_manipulation_moves_what_the_hand_holds(arm_robot):
    """Nothing held: the grasp is lost and the hand stays. Holding: a drawer pull (linear
    task, 0.1 m/s toward the body) moves the hand at that speed until the end time, and a
    position move travels its distance; a rotational task turns the hand about its axis."""
    command = commander(arm_robot)
    _ready(arm_robot)
    with pytest.raises(InvalidRequestError):  # a linear task needs a force direction
        command.robot_command(_constrained(arm_robot, Task.TASK_TYPE_R3_LINEAR_FORCE, 2.0,
                                           tangential_speed=0.1))
    start = _odom_t(arm_robot, "hand")
    pull = dict(force=(-1.0, 0.0, 0.0), tangential_speed=0.1)
    command_id = command.robot_command(_constrained(arm_robot, Task.TASK_TYPE_R3_LINEAR_FORCE,
                                                    1.0, **pull))
    assert wait_for(lambda: _constrained_feedback(arm_robot, command_id).status ==
                    ConstrainedFb.STATUS_GRASP_IS_LOST)
    assert _odom_t(arm_robot, "hand").x == pytest.approx(start.x, abs=1e-3)

    _hold_something(arm_robot)
    command_id = command.robot_command(_constrained(arm_robot, Task.TASK_TYPE_R3_LINEAR_FORCE,
                                                    2.0, **pull))
    time.sleep(1.0)  # sleep: a sample during the 2 s pull (its timing is tested)
    feedback = _constrained_feedback(arm_robot, command_id)
    assert feedback.status == ConstrainedFb.STATUS_RUNNING
    assert feedback.desired_wrench_odom_frame.force.x < -30  # 40 N toward the body
    assert wait_for(lambda: commander(arm_robot).robot_command_feedback(
        command_id).feedback.full_body_feedback.status ==
        basic_command_pb2.RobotCommandFeedbackStatus.STATUS_COMMAND_TIMED_OUT, timeout=3)
    assert feedback.estimation_activated.value  # 0.1 m moved: enough to estimate
    moved = start.x - _odom_t(arm_robot, "hand").x
    assert moved == pytest.approx(0.2, abs=0.04)  # 0.1 m/s for 2 s

    before = _odom_t(arm_robot, "hand")
    command.robot_command(_constrained(
        arm_robot, Task.TASK_TYPE_R3_LINEAR_FORCE, 3.0, force=(0.0, 1.0, 0.0),
        tangential_speed=0.2, target_linear_position=0.1,
        control_mode=basic_command_pb2.ConstrainedManipulationCommand.Request
        .CONTROL_MODE_POSITION))
    time.sleep(2.0)  # sleep: past the task's end; where the hand stopped is tested
    after = _odom_t(arm_robot, "hand")
    assert after.y - before.y == pytest.approx(0.1, abs=0.01)
    assert after.x == pytest.approx(before.x, abs=0.01)

    command.robot_command(_constrained(arm_robot, Task.TASK_TYPE_SE3_ROTATIONAL_TORQUE, 1.0,
                                       torque=(1.0, 0.0, 0.0), rotational_speed=0.5))
    time.sleep(1.6)  # sleep: past the command's 1 s end; how far it turned is tested
    turned = (after.rot.inverse() * _odom_t(arm_robot, "hand").rot).to_axis_angle()
    assert turned[0] == pytest.approx(0.5, abs=0.1)


def test_the_sdk_constrained_manipulation_example_runs_unmodified(tmp_path, sdk_examples):
    """Boston Dynamics' run_constrained_manipulation.py expects a powered robot already
    holding a drawer handle (set up here as its README asks: power, stand, ready, grasp
    override); it pulls for 10 s and exits after 20 s."""
    with running_sim(tmp_path / "certs", estop_required=False, has_arm=True) as sim:
        robot = connect(sim)
        robot.time_sync.wait_for_sync(timeout_sec=5.0)
        leases = robot.ensure_client(LeaseClient.default_service_name)
        # No e-stop endpoint: one left behind would time out and cut power mid-run.
        with LeaseKeepAlive(leases, must_acquire=True, return_at_exit=True):
            power_on_motors(robot.ensure_client("power"), timeout_sec=5)
            _ready(robot)
            _hold_something(robot)
            start = _odom_t(robot, "hand")
        env = {**os.environ, "BOSDYN_CLIENT_USERNAME": USERNAME,
               "BOSDYN_CLIENT_PASSWORD": PASSWORD}
        program = sdk_examples / "arm_constrained_manipulation" \
            / "run_constrained_manipulation.py"
        result = subprocess.run(
            [sys.executable, "-m", "spot_sim.sdk_program", "--port", str(sim.port), "--ca",
             str(sim.ca_cert), str(program), "127.0.0.1", "--task-type", "drawer",
             "--task-velocity", "0.1"], capture_output=True, text=True, timeout=90, env=env)
        output = result.stdout[-2000:] + result.stderr[-3000:]
        # Its main() returns None, so it exits 1 after running well.
        assert result.returncode == 1, output
        assert "Lease check-in stopped" in result.stderr, output
        # A check-in may warn once: its older lease can race the program's first command, which
        # a robot answers STATUS_OLDER and the SDK's wallet ignores (lease.py). Nothing else.
        lines = result.stderr.splitlines()
        assert not [line for line in lines if " - ERROR - " in line or "Traceback" in line
                    or (" - WARNING - " in line and "during check-in" not in line)], output
        # It held the lease to the end: ReturnLease frees only the current lease.
        assert not any(entry.lease_owner.client_name for entry in leases.list_leases()), output
        hand = _odom_t(robot, "hand")
        moved = math.dist((hand.x, hand.y, hand.z), (start.x, start.y, start.z))
        assert moved > 0.1, (moved, output)
        robot.time_sync.stop()
