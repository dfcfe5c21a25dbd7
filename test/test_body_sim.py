"""The simulated Spot's lease, e-stop, power and commands, driven by the official SDK only;
stance with feedback, fan commands, the safety-rated stop, Spot Check."""

import contextlib
import time

import pytest
from bosdyn.api import (
    estop_pb2,
    lease_pb2,
    power_pb2,
)
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.estop import EstopClient, EstopEndpoint, EstopKeepAlive
from bosdyn.client.exceptions import LeaseUseError
from bosdyn.client.frame_helpers import ODOM_FRAME_NAME, VISION_FRAME_NAME, get_a_tform_b
from bosdyn.client.lease import (
    LeaseClient,
    LeaseKeepAlive,
    ResourceAlreadyClaimedError,
)
from bosdyn.client.math_helpers import Quat, SE3Pose, Vec2
from bosdyn.client.power import EstoppedError, power_on_motors, safe_power_off_motors
from bosdyn.client.robot_command import (
    ExpiredError,
    NotPoweredOnError,
    RobotCommandBuilder,
    RobotCommandClient,
    blocking_sit,
    blocking_stand,
)
from bosdyn.client.robot_state import RobotStateClient
from bosdyn.client.spot_check import SpotCheckClient, run_spot_check

from conftest import USERNAME, client, connect, running_sim

ESTOP_TIMEOUT = 9.0  # s: the SDK examples' operator endpoint (wasd, mission_recorder)


@contextlib.contextmanager
def operated(robot, estop_timeout: float = ESTOP_TIMEOUT):
    """Hold an e-stop endpoint and the body lease while the block runs, as an operator does."""
    estop_client = robot.ensure_client(EstopClient.default_service_name)
    endpoint = EstopEndpoint(estop_client, "test-estop", estop_timeout)
    endpoint.force_simple_setup()
    lease_client = robot.ensure_client(LeaseClient.default_service_name)
    robot.time_sync.wait_for_sync(timeout_sec=5.0)
    with EstopKeepAlive(endpoint) as estop_keepalive, \
            LeaseKeepAlive(lease_client, must_acquire=True, return_at_exit=True):
        yield estop_keepalive


def state_of(robot):
    return robot.ensure_client(RobotStateClient.default_service_name).get_robot_state()


def odom_tform_body(robot):
    return get_a_tform_b(state_of(robot).kinematic_state.transforms_snapshot,
                         ODOM_FRAME_NAME, "body")


def commander(robot) -> RobotCommandClient:
    return robot.ensure_client(RobotCommandClient.default_service_name)


def wait_for(predicate, timeout: float = 5.0, period: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period)
    return predicate()


def test_power_stand_walk_sit_and_safe_power_off(sim, robot):
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        assert robot.is_powered_on()
        blocking_stand(commander(robot), timeout_sec=10)
        assert odom_tform_body(robot).z == pytest.approx(0.52, abs=0.01)

        start = odom_tform_body(robot)
        speed, duration = 0.5, 2.0
        commander(robot).robot_command(
            RobotCommandBuilder.synchro_velocity_command(v_x=speed, v_y=0.0, v_rot=0.0),
            end_time_secs=time.time() + duration)
        time.sleep(duration)  # sleep: the command's length (velocity has no feedback)

        def at_rest() -> bool:
            kin = state_of(robot).kinematic_state  # velocity and pose from one snapshot
            return abs(kin.velocity_of_body_in_odom.linear.x) < 0.05 and get_a_tform_b(
                kin.transforms_snapshot, ODOM_FRAME_NAME, "body").x > start.x + 0.5

        # The robot stops by itself once the end time passes.
        assert wait_for(at_rest, timeout=4.0)
        moved = odom_tform_body(robot).x - start.x
        # Ramping up loses v^2/2a against the commanded profile; braking after the end time
        # regains v^2/2d.
        config = sim.config
        expected = speed * duration - speed**2 / (2 * config.max_linear_accel) \
            + speed**2 / (2 * config.linear_decel)
        assert moved == pytest.approx(expected, abs=0.03)

        blocking_sit(commander(robot), timeout_sec=10)
        assert odom_tform_body(robot).z == pytest.approx(0.18, abs=0.01)
        safe_power_off_motors(commander(robot), robot.ensure_client("robot-state"),
                              timeout_sec=10)
        assert not robot.is_powered_on()


def test_a_busy_host_loses_no_walking_time(sim, robot):
    """Physics ticks 200 ms apart (a host busy elsewhere) still walk the commanded distance:
    the late time is made up in short ticks, as a real robot keeps walking."""
    def busy(_robot, _now) -> None:
        time.sleep(0.2)  # sleep: the host busy elsewhere during this tick

    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        start = odom_tform_body(robot)
        speed, duration = 0.5, 2.0
        sim.robot.add_step_hook(busy)
        try:
            commander(robot).robot_command(
                RobotCommandBuilder.synchro_velocity_command(v_x=speed, v_y=0.0, v_rot=0.0),
                end_time_secs=time.time() + duration)
            assert wait_for(lambda: odom_tform_body(robot).x > start.x + 0.3, timeout=3.0)
            assert wait_for(lambda: abs(state_of(robot).kinematic_state
                                        .velocity_of_body_in_odom.linear.x) < 0.01,
                            timeout=duration + 3.0)
        finally:
            sim.robot.remove_step_hook(busy)
        config = sim.config
        expected = speed * duration - speed**2 / (2 * config.max_linear_accel) \
            + speed**2 / (2 * config.linear_decel)
        # a command arrives up to one slow tick late, and a tick checks its end that late
        assert odom_tform_body(robot).x - start.x == pytest.approx(expected, abs=0.1)


def test_trajectory_reaches_goal_in_odom_vision_and_body(robot):
    with operated(robot):
        robot.power_on(timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        client = commander(robot)

        def go(x, y, yaw, frame):
            command = RobotCommandBuilder.synchro_se2_trajectory_point_command(
                goal_x=x, goal_y=y, goal_heading=yaw, frame_name=frame)
            command_id = client.robot_command(command, end_time_secs=time.time() + 15)

            def at_goal():
                fb = client.robot_command_feedback(command_id).feedback
                traj = fb.synchronized_feedback.mobility_command_feedback.se2_trajectory_feedback
                return traj.status == traj.STATUS_AT_GOAL and \
                    traj.body_movement_status == traj.BODY_STATUS_SETTLED

            assert wait_for(at_goal, timeout=15.0)

        go(1.0, 0.5, 0.5, ODOM_FRAME_NAME)
        pose = odom_tform_body(robot)
        assert (pose.x, pose.y) == pytest.approx((1.0, 0.5), abs=0.04)
        assert pose.rot.to_yaw() == pytest.approx(0.5, abs=0.04)

        # Vision has drifted from odom while walking; a vision goal is reached in vision.
        vision_body = get_a_tform_b(state_of(robot).kinematic_state.transforms_snapshot,
                                    VISION_FRAME_NAME, "body")
        assert abs(vision_body.x - pose.x) + abs(vision_body.y - pose.y) > 1e-3
        go(vision_body.x - 0.5, vision_body.y, 0.0, VISION_FRAME_NAME)
        vision_body = get_a_tform_b(state_of(robot).kinematic_state.transforms_snapshot,
                                    VISION_FRAME_NAME, "body")
        assert vision_body.rot.to_yaw() == pytest.approx(0.0, abs=0.04)

        # A goal in the body frame is relative to where the robot stands when it is sent.
        before = odom_tform_body(robot)
        go(0.5, 0.0, 0.0, "flat_body")
        after = odom_tform_body(robot)
        assert after.x - before.x == pytest.approx(0.5, abs=0.04)


def test_body_height_offset_through_mobility_params(robot):
    with operated(robot):
        robot.power_on(timeout_sec=10)
        params = RobotCommandBuilder.mobility_params(body_height=-0.1)
        blocking_stand(commander(robot), timeout_sec=10, params=params)
        assert wait_for(lambda: abs(odom_tform_body(robot).z - 0.42) < 0.01, timeout=3.0)


def test_commands_without_power_are_refused(robot):
    with operated(robot):
        with pytest.raises(NotPoweredOnError):
            commander(robot).robot_command(RobotCommandBuilder.synchro_stand_command())


def test_expired_velocity_command_is_refused(robot):
    with operated(robot):
        robot.power_on(timeout_sec=10)
        with pytest.raises(ExpiredError):
            commander(robot).robot_command(
                RobotCommandBuilder.synchro_velocity_command(0.3, 0, 0),
                end_time_secs=time.time() - 1.0)


def test_estop_cuts_power_and_blocks_power_on(robot):
    with operated(robot) as estop_keepalive:
        robot.power_on(timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        estop_keepalive.stop()  # first: its check-ins would race the STOP's challenge
        estop_keepalive.endpoint.stop()
        assert wait_for(lambda: not robot.is_powered_on(), timeout=2.0)
        state = state_of(robot)
        assert any(e.state == e.STATE_ESTOPPED for e in state.estop_states)
        with pytest.raises(NotPoweredOnError):
            commander(robot).robot_command(RobotCommandBuilder.synchro_stand_command())
        with pytest.raises(EstoppedError):
            power_on_motors(robot.ensure_client("power"), timeout_sec=3)


def test_estop_endpoint_timeout_cuts_motor_power(sim, robot):
    """The endpoint stops checking in, as if its process hung (``shutdown``; ``stop`` would
    check in at CUT): the motors are cut once its last valid check-in is one timeout old, not
    before. The timeout is the SDK's e-stop programs' default (5 s); 2 s lapsed on a loaded
    machine while the robot stood up."""
    timeout = 5.0
    with operated(robot, estop_timeout=timeout) as estop_keepalive:
        robot.power_on(timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        estop_keepalive.shutdown()
        assert wait_for(lambda: not sim.robot.powered, timeout=timeout + 3.0)
        (endpoint, level, since_ns), = sim.robot.estop.endpoint_states()
        assert endpoint.name == "test-estop" and level == estop_pb2.ESTOP_LEVEL_CUT
        assert timeout <= since_ns / 1e9 < timeout + 1.5, since_ns / 1e9


def test_power_on_without_estop_endpoint_is_estopped(robot):
    lease_client = robot.ensure_client(LeaseClient.default_service_name)
    with LeaseKeepAlive(lease_client, must_acquire=True, return_at_exit=True):
        with pytest.raises(EstoppedError):
            power_on_motors(robot.ensure_client("power"), timeout_sec=3)


def test_lease_taken_by_another_client_makes_old_lease_stale(sim, robot):
    with operated(robot):
        robot.power_on(timeout_sec=10)
        other = connect(sim)
        other_leases = other.ensure_client(LeaseClient.default_service_name)
        with pytest.raises(ResourceAlreadyClaimedError):
            other_leases.acquire()
        before = {r.resource: r.lease_owner for r in other_leases.list_leases()}
        taken = other_leases.take()
        assert taken.lease_proto.sequence[0] > 0
        after = {r.resource: r.lease_owner for r in other_leases.list_leases()}
        assert after["mobility"].user_name == USERNAME
        assert after["mobility"].client_name != before["mobility"].client_name
        with pytest.raises(LeaseUseError) as error:
            commander(robot).robot_command(RobotCommandBuilder.synchro_stand_command())
        assert error.value.response.lease_use_result.status == \
            lease_pb2.LeaseUseResult.STATUS_OLDER
        # The new holder commands the robot.
        other_commands = other.ensure_client(RobotCommandClient.default_service_name)
        other.time_sync.wait_for_sync(timeout_sec=5.0)
        blocking_stand(other_commands, timeout_sec=10)
        other.time_sync.stop()


def test_lease_return_and_reacquire(robot):
    leases = robot.ensure_client(LeaseClient.default_service_name)
    lease = leases.acquire()
    assert leases.retain_lease(lease).lease_use_result.status == \
        lease_pb2.LeaseUseResult.STATUS_OK
    leases.return_lease(lease)
    again = leases.acquire()
    assert again.lease_proto.sequence[0] > lease.lease_proto.sequence[0]
    with pytest.raises(LeaseUseError):
        leases.retain_lease(lease)


def test_battery_discharges_faster_with_motors_on(robot):
    with operated(robot):
        first = state_of(robot).battery_states[0].charge_percentage.value
        robot.power_on(timeout_sec=10)
        assert wait_for(lambda: state_of(robot).battery_states[0].charge_percentage.value
                        < first, 3.0)  # the motors draw


def test_stance_command_with_feedback(sim, robot):
    from bosdyn.api import basic_command_pb2

    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        snapshot = state_of(robot).kinematic_state.transforms_snapshot
        odom_t_body = get_a_tform_b(snapshot, "odom", "body")
        feet = [odom_t_body * SE3Pose(x, y, 0, Quat())
                for x, y in ((0.3, 0.15), (0.3, -0.15), (-0.3, 0.15), (-0.3, -0.15))]
        command = RobotCommandBuilder.stance_command(
            "odom", *[Vec2(f.x, f.y).to_proto() for f in feet])
        command_id = commander(robot).robot_command(command, end_time_secs=time.time() + 5)
        Stance = basic_command_pb2.StanceCommand.Feedback

        def status():
            feedback = commander(robot).robot_command_feedback(command_id)
            return (feedback.feedback.synchronized_feedback.mobility_command_feedback
                    .stance_feedback.status)

        assert wait_for(lambda: status() == Stance.STATUS_STANCED, timeout=5)
        far = RobotCommandBuilder.stance_command(
            "odom", *[Vec2(f.x + 3.0, f.y).to_proto() for f in feet])
        far_id = commander(robot).robot_command(far, end_time_secs=time.time() + 5)
        command_id = far_id
        assert status() == Stance.STATUS_TOO_FAR_AWAY
        missing = RobotCommandBuilder.stance_command(
            "odom", *[Vec2(f.x, f.y).to_proto() for f in feet])
        del missing.synchronized_command.mobility_command.stance_request.stance \
            .foot_positions["hr"]
        with pytest.raises(sdk_errors.InvalidRequestError):
            commander(robot).robot_command(missing, end_time_secs=time.time() + 5)


def test_fan_commands_run_for_their_duration_and_a_newer_one_takes_over(sim, robot):
    from bosdyn.client.power import PowerClient

    power = client(robot, PowerClient)
    Feedback = power_pb2.FanPowerCommandFeedbackResponse
    with operated(robot):
        with pytest.raises(sdk_errors.InvalidRequestError):
            power.fan_power_command(percent_power=150, duration=1)
        first = power.fan_power_command(percent_power=50, duration=10)
        assert first.status == first.STATUS_OK
        assert power.fan_power_command_feedback(first.command_id).status == \
            Feedback.STATUS_RUNNING
        second = power.fan_power_command(percent_power=100, duration=1)
        overridden = power.fan_power_command_feedback(first.command_id)
        assert overridden.status == Feedback.STATUS_OVERRIDDEN_BY_COMMAND
        assert overridden.HasField("early_stop_time")
        assert wait_for(lambda: power.fan_power_command_feedback(second.command_id).status
                        == Feedback.STATUS_COMPLETE, 3.0)


def test_a_safety_stop_resets_only_on_a_robot_with_the_safety_rated_stop(tmp_path):
    """The plain robot has no safety-rated stop function (its hardware configuration says
    so) and refuses; one fitted with it (``safety_rated_stop``) resets either stop."""
    from bosdyn.client.power import (
        PowerClient,
        SafetyStopIncompatibleHardwareError,
        SafetyStopUnknownStopTypeError,
    )

    Request = power_pb2.ResetSafetyStopRequest
    for config, works in (({}, False), ({"safety_rated_stop": True}, True)):
        with running_sim(tmp_path / f"certs{works}", **config) as fitted:
            spot = connect(fitted)
            hardware = spot.ensure_client(RobotStateClient.default_service_name) \
                .get_robot_hardware_configuration()
            assert hardware.redundant_safety_stop_enabled == works
            power = client(spot, PowerClient)
            with operated(spot):
                with pytest.raises(SafetyStopUnknownStopTypeError):
                    power.reset_safety_stop(Request.SAFETY_STOP_UNKNOWN)
                for kind in (Request.SAFETY_STOP_PRIMARY, Request.SAFETY_STOP_REDUNDANT):
                    if works:
                        assert power.reset_safety_stop(kind).status == \
                            power_pb2.ResetSafetyStopResponse.STATUS_OK
                    else:
                        with pytest.raises(SafetyStopIncompatibleHardwareError):
                            power.reset_safety_stop(kind)
            spot.time_sync.stop()


def test_spot_check_runs_with_feedback_and_refuses_a_standing_robot(sim, robot):
    from bosdyn.client.spot_check import SpotCheckNotSittingError

    checks = client(robot, SpotCheckClient)
    with operated(robot):
        result = run_spot_check(checks, robot.lease_wallet.get_lease(), timeout_sec=20,
                                update_frequency=2.0)
        assert result.state == result.STATE_FINISHED and result.progress == pytest.approx(1.0)
        assert set(result.camera_results) == {"frontleft", "frontright", "left", "right",
                                              "back"}
        assert sim.robot.powered  # Spot Check powers the motors on itself
        blocking_stand(commander(robot), timeout_sec=10)
        with pytest.raises(SpotCheckNotSittingError):
            run_spot_check(checks, robot.lease_wallet.get_lease(), timeout_sec=10,
                           update_frequency=2.0)
