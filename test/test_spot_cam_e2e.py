"""End to end: the Spot CAM's PTZ through ROS -> driver -> gRPC -> a simulated Spot with a
Spot CAM: the heads and their limits, a move the state topic and the frame follow until the
head gets there, moves outside the limits refused with nothing sent, and a robot without a
Spot CAM answering so."""

import math

import pytest
from ros_harness import DriverProcess, RosClient
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from transforms3d.quaternions import rotate_vector

from conftest import PASSWORD, USERNAME, running_sim
from spot_msgs.msg import PtzState
from spot_msgs.srv import GetPtzPosition, ListPtz, SetPtzPosition

MOUNT = [0.1, 0.0, 0.25]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs"), has_spot_cam=True) as sim:
        ros = RosClient("spot_cam_test_client")
        ros.subscribe("/spot_cam/ptz/state", PtzState)
        ros.subscribe("/tf", TFMessage)
        driver = DriverProcess(sim, tmp_path_factory.mktemp("logs") / "driver.log",
                               USERNAME, PASSWORD, params={"spot_cam_ptz_rate": 10.0,
                                                           "spot_cam_mount": MOUNT})
        try:
            assert ros.wait_for(lambda: ros.latest("/spot_cam/ptz/state") is not None,
                                timeout=30), driver.output()
            yield sim, ros
        finally:
            ros.close()
            driver.stop()


def ptz_frame(ros):
    """The newest body -> spot_cam_ptz transform on /tf."""
    for message in reversed(ros.received("/tf")):
        for transform in message.transforms:
            if transform.child_frame_id == "spot_cam_ptz":
                return transform
    return None


def looking(transform) -> tuple[float, float, float]:
    """Where the frame's +x points, in the body frame."""
    r = transform.transform.rotation
    return tuple(rotate_vector([1.0, 0.0, 0.0], [r.w, r.x, r.y, r.z]))


def set_position(ros, pan, tilt, zoom, name="mech"):
    return ros.call(SetPtzPosition, "/spot_cam/set_ptz_position",
                    SetPtzPosition.Request(name=name, pan=pan, tilt=tilt, zoom=zoom))


def test_the_heads_are_listed_with_their_limits(world):
    _, ros = world
    response = ros.call(ListPtz, "/spot_cam/list_ptz")
    assert response.success, response.message
    heads = {h.name: h for h in response.heads}
    mech = heads["mech"]
    assert (mech.pan_min, mech.pan_max, mech.tilt_min, mech.tilt_max, mech.zoom_min,
            mech.zoom_max) == (0.0, 360.0, -30.0, 100.0, 1.0, 30.0)


def test_ptz_moves_and_its_state_and_frame_follow(world):
    sim, ros = world
    response = set_position(ros, 90.0, 30.0, 5.0)
    assert response.success, response.message
    assert (response.position.pan, response.position.tilt) == (90.0, 30.0)

    def there() -> bool:
        state = ros.latest("/spot_cam/ptz/state")
        return (abs(state.pan - 90.0) < 0.5 and abs(state.tilt - 30.0) < 0.5
                and abs(state.zoom - 5.0) < 0.1)

    assert ros.wait_for(there, timeout=15)
    truth = sim.servicer("spot-cam-ptz").heads.position("mech", sim.clock.now_nsec())
    assert (truth.pan, truth.tilt) == pytest.approx((90.0, 30.0), abs=0.5)
    got = ros.call(GetPtzPosition, "/spot_cam/get_ptz_position",
                   GetPtzPosition.Request(name="mech"))
    assert got.success and got.position.pan == pytest.approx(90.0, abs=0.5)
    assert ros.wait_for(lambda: ptz_frame(ros) is not None and looking(ptz_frame(ros))[1]
                        < -0.8, timeout=5)
    frame = ptz_frame(ros)
    assert frame.header.frame_id == "body"
    t = frame.transform.translation
    assert [t.x, t.y, t.z] == pytest.approx(MOUNT)
    x, y, z = looking(frame)  # pan 90 clockwise: to the robot's right (-y), tilted up 30
    assert (x, y, z) == pytest.approx((0.0, -math.cos(math.radians(30)),
                                       math.sin(math.radians(30))), abs=0.02)


@pytest.mark.parametrize("pan, tilt, zoom, sentence", [
    (400.0, 0.0, 1.0, "mech pan 400 degrees is outside [0, 360] degrees"),
    (0.0, -45.0, 1.0, "mech tilt -45 degrees is outside [-30, 100] degrees"),
    (0.0, 0.0, 40.0, "mech zoom 40 is outside [1, 30]"),
    (math.nan, 0.0, 1.0, "pan must be a finite number, not nan"),
])
def test_a_move_outside_the_limits_is_refused_and_nothing_moves(world, pan, tilt, zoom,
                                                                 sentence):
    sim, ros = world
    heads = sim.servicer("spot-cam-ptz").heads
    before = heads.position("mech", sim.clock.now_nsec())
    response = set_position(ros, pan, tilt, zoom)
    assert not response.success and response.message == sentence
    assert heads.position("mech", sim.clock.now_nsec()) == before


def test_an_unknown_head_is_refused(world):
    _, ros = world
    response = set_position(ros, 0.0, 0.0, 1.0, name="periscope")
    assert not response.success
    assert response.message == "unknown PTZ 'periscope'; this Spot CAM has digi, mech"


def test_lens_initialization(world):
    sim, ros = world
    heads = sim.servicer("spot-cam-ptz").heads
    before = heads.lens_initializations
    response = ros.call(Trigger, "/spot_cam/initialize_lens")
    assert response.success, response.message
    assert heads.lens_initializations == before + 1


def test_a_robot_without_a_spot_cam_says_so(tmp_path):
    with running_sim(tmp_path / "certs") as sim:
        ros = RosClient("no_spot_cam_test_client")
        driver = DriverProcess(sim, tmp_path / "driver.log", USERNAME, PASSWORD,
                               namespace="/plain")  # beside the module's driver
        try:
            response = ros.call(ListPtz, "/plain/spot_cam/list_ptz", timeout=60)
            assert not response.success
            assert response.message == ("this robot has no Spot CAM (its directory lists no "
                                        "spot-cam-ptz service)")
        finally:
            ros.close()
            driver.stop()
