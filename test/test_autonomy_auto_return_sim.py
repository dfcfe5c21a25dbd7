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
from spot_sim.autonomy.auto_return import Breadcrumbs
from spot_sim.body.mobility import Se2


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


@pytest.mark.parametrize("walked", [2.0, 2.02, 2.13, 2.24])
def test_the_return_goal_is_on_the_path_at_max_displacement(walked):
    """Wherever the walk ended between two crumbs, the goal is max_displacement back along
    the path (a crumb-only goal landed anywhere from 0.75 to 1.0 m back, as CI found)."""
    path = Breadcrumbs()
    for step in range(int(walked * 100) + 1):
        path.record(Se2(step / 100, 0.0, 0.0))
    goal, kept = path.return_goal(Se2(walked, 0.0, 0.0), 1.0)
    assert (goal.x, goal.y) == pytest.approx((walked - 1.0, 0.0), abs=1e-9)
    assert goal.yaw == pytest.approx(math.pi)
    path.walked_back_to(goal, kept)
    assert path.points[-1] == pytest.approx((goal.x, goal.y))  # the stretch walked back is gone
    assert path.points[-2][0] < goal.x  # the crumbs before it stay
    assert path.return_goal(Se2(goal.x, 0.0, math.pi), 0.5)[0].x == pytest.approx(goal.x - 0.5)


def test_the_return_goal_crosses_a_turn_and_stops_at_the_oldest_crumb():
    path = Breadcrumbs()
    for point in [(0.0, 0.0), (0.0, 0.25), (0.0, 0.5), (0.25, 0.5), (0.5, 0.5)]:
        path.record(Se2(*point, 0.0))
    goal, _ = path.return_goal(Se2(0.5, 0.5, 0.0), 0.6)
    assert math.dist((goal.x, goal.y), (0.5, 0.5)) == pytest.approx(0.6)
    assert goal.x == pytest.approx(0.0) and 0.0 < goal.y < 0.5  # on the leg walked first
    path = Breadcrumbs()
    path.record(Se2(0.0, 0.0, 0.0))
    path.record(Se2(0.3, 0.0, 0.0))
    assert path.return_goal(Se2(0.3, 0.0, 0.0), 5.0)[0].x == pytest.approx(0.0)  # all the way
    assert Breadcrumbs().return_goal(Se2(0.0, 0.0, 0.0), 1.0) is None  # nowhere to go


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
