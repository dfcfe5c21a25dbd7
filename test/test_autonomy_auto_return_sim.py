"""The simulated Spot's auto-return, driven by the official SDK only: configured, started by
hand and triggered by comms loss, it walks the robot back along its path."""

import math
import time

import pytest
from bosdyn.api.auto_return import auto_return_pb2
from bosdyn.client.auto_return import AutoReturnClient, InvalidParameterError
from bosdyn.client.exceptions import InvalidRequestError
from bosdyn.client.lease import LeaseClient, LeaseKeepAlive
from bosdyn.client.power import power_on_motors
from bosdyn.client.robot_command import RobotCommandBuilder, blocking_stand
from test_body_sim import commander, odom_tform_body, operated, state_of, wait_for

from conftest import connect, holds, running_sim


def _walk(robot, metres: float) -> None:
    """Walk ``metres`` straight ahead at 0.5 m/s (velocity commands, as a joystick does)."""
    command = commander(robot)
    command.robot_command(RobotCommandBuilder.synchro_velocity_command(v_x=0.5, v_y=0, v_rot=0),
                          end_time_secs=time.time() + metres / 0.5)
    time.sleep(metres / 0.5)  # sleep: the walk's length (velocity has no feedback)

    def stopped() -> bool:  # two reads 0.3 s apart agree, and the body reports no velocity
        before = odom_tform_body(robot)
        time.sleep(0.3)  # sleep: the span the body must not move over
        after = odom_tform_body(robot)
        velocity = state_of(robot).kinematic_state.velocity_of_body_in_odom.linear
        return math.hypot(after.x - before.x, after.y - before.y) < 0.002 and \
            math.hypot(velocity.x, velocity.y) < 0.01

    assert wait_for(stopped, 10.0)  # a late physics step still walks the rest of the way


def _params(max_displacement: float) -> auto_return_pb2.Params:
    return auto_return_pb2.Params(max_displacement=max_displacement)


@pytest.fixture
def robot(tmp_path):
    with running_sim(tmp_path / "certs", lease_stale_sec=2.0, estop_required=False) as sim:
        robot = connect(sim)
        yield robot
        robot.time_sync.stop()


def test_started_it_walks_back_along_its_path_within_the_displacement(robot):
    client = robot.ensure_client(AutoReturnClient.default_service_name)
    leases = robot.ensure_client(LeaseClient.default_service_name)
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=5)
        blocking_stand(commander(robot), timeout_sec=5)
        start = odom_tform_body(robot)
        _walk(robot, 2.0)
        far = odom_tform_body(robot)
        assert far.x - start.x == pytest.approx(2.0, abs=0.2)
        with pytest.raises(InvalidRequestError):  # nothing configured, nothing given
            client.start()
        with pytest.raises(InvalidParameterError):
            client.configure(_params(0.0), [])
        assert not client.get_configuration().enabled
        client.configure(_params(1.0), [])  # no leases: it will not trigger by itself
        configuration = client.get_configuration()
        assert not configuration.enabled
        assert configuration.request.params.max_displacement == 1.0
        client.start(leases=[leases.lease_wallet.get_lease().create_newer()])
        assert wait_for(lambda: math.hypot(odom_tform_body(robot).x - far.x,
                                           odom_tform_body(robot).y - far.y) > 0.9, timeout=8)
        time.sleep(1.0)  # sleep: its last steps (auto-return reports no arrival)
        back = odom_tform_body(robot)
        assert math.hypot(back.x - far.x, back.y - far.y) == pytest.approx(1.0, abs=0.15)
        assert back.x > start.x + 0.7  # not all the way: max_displacement holds it


def test_comms_loss_triggers_the_return(robot):
    """The operator's client stops talking (its lease keepalive ends without returning the
    lease): once the lease is stale the robot returns with the configured lease."""
    client = robot.ensure_client(AutoReturnClient.default_service_name)
    leases = robot.ensure_client(LeaseClient.default_service_name)
    robot.time_sync.wait_for_sync(timeout_sec=5.0)
    leases.acquire()
    # checks in every 0.5 s: the SDK's default 2 s equals this robot's stale time (2 s), so
    # one late or refused check-in (an OLDER lease raced a command's) went stale in CI
    keepalive = LeaseKeepAlive(leases, return_at_exit=False, rpc_interval_seconds=0.5)
    power_on_motors(robot.ensure_client("power"), timeout_sec=5)
    blocking_stand(commander(robot), timeout_sec=5)
    _walk(robot, 1.5)
    far = odom_tform_body(robot)
    client.configure(_params(5.0), [leases.lease_wallet.get_lease().create_newer()])
    assert client.get_configuration().enabled
    # talking: the lease is fresh, the robot stays
    assert holds(lambda: math.hypot(odom_tform_body(robot).x - far.x,
                                    odom_tform_body(robot).y - far.y) < 0.05, 3.0, period=0.1)
    keepalive.shutdown()  # comms lost
    assert wait_for(lambda: math.hypot(odom_tform_body(robot).x - far.x,
                                       odom_tform_body(robot).y - far.y) > 1.0, timeout=10)
