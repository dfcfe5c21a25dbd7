"""The simulated Spot CAM (optional hardware, off by default) through the SDK's own Spot CAM
clients: its services in the directory only when fitted; the PTZ heads with the API's
published limits, a mechanical head that takes time to get where it is sent, velocity on the
digital view only, focus; refusals that move nothing."""

import math
import time

import pytest
from bosdyn.api.spot_cam import ptz_pb2
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.spot_cam.ptz import PtzClient

from conftest import connect, holds, running_sim

MECH = ptz_pb2.PtzDescription(name="mech")
DIGI = ptz_pb2.PtzDescription(name="digi")


@pytest.fixture(scope="module")
def cam(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs"), has_spot_cam=True) as spot:
        robot = connect(spot)
        yield robot.ensure_client(PtzClient.default_service_name)
        robot.time_sync.stop()


def position(cam, desc=MECH) -> tuple[float, float, float]:
    p = cam.get_ptz_position(desc)
    return p.pan.value, p.tilt.value, p.zoom.value


def still(cam, desc=MECH) -> bool:
    v = cam.get_ptz_velocity(desc)
    return (v.pan.value, v.tilt.value, v.zoom.value) == (0.0, 0.0, 0.0)


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_spot_cam_services_are_listed_only_when_fitted(certs_dir):
    with running_sim(certs_dir) as plain:
        robot = connect(plain)
        names = {s.name for s in robot.ensure_client("directory").list()}
        robot.time_sync.stop()
    assert "spot-cam-ptz" not in names
    with running_sim(certs_dir, has_spot_cam=True) as fitted:
        robot = connect(fitted)
        names = {s.name for s in robot.ensure_client("directory").list()}
        robot.time_sync.stop()
    assert "spot-cam-ptz" in names


def test_ptz_heads_are_listed_with_the_published_limits(cam):
    heads = {d.name: d for d in cam.list_ptz()}
    mech = heads["mech"]
    assert (mech.pan_limit.min.value, mech.pan_limit.max.value) == (0.0, 360.0)
    assert (mech.tilt_limit.min.value, mech.tilt_limit.max.value) == (-30.0, 100.0)
    assert (mech.zoom_limit.min.value, mech.zoom_limit.max.value) == (1.0, 30.0)
    assert "digi" in heads


def test_the_mech_head_takes_time_to_get_where_it_is_sent(cam):
    cam.set_ptz_position(MECH, 0.0, 0.0, 1.0)
    assert wait_for(lambda: position(cam) == pytest.approx((0.0, 0.0, 1.0), abs=0.5), 10.0)
    cam.set_ptz_position(MECH, 90.0, 45.0, 10.0)
    pan, tilt, zoom = position(cam)
    assert pan < 80.0 and tilt < 40.0 and zoom < 9.5  # not there at once
    assert cam.get_ptz_velocity(MECH).pan.value > 0.0  # on its way
    assert wait_for(lambda: still(cam), 10.0)
    assert position(cam) == pytest.approx((90.0, 45.0, 10.0), abs=1e-3)


def test_pan_goes_the_short_way_round(cam):
    cam.set_ptz_position(MECH, 350.0, 0.0, 1.0)
    assert wait_for(lambda: position(cam)[0] == pytest.approx(350.0, abs=0.5), 15.0)
    cam.set_ptz_position(MECH, 10.0, 0.0, 1.0)
    time.sleep(0.1)  # sleep: a sample early in the move (which way it turns is tested)
    pan = position(cam)[0]
    assert pan > 350.0 or pan < 10.0, pan  # through 0, not back through 180


@pytest.mark.parametrize("pan, tilt, zoom", [(361.0, 0.0, 1.0), (-1.0, 0.0, 1.0),
                                             (0.0, 101.0, 1.0), (0.0, -31.0, 1.0),
                                             (0.0, 0.0, 0.5), (0.0, 0.0, 31.0),
                                             (math.nan, 0.0, 1.0)])
def test_a_position_outside_the_limits_is_refused_and_moves_nothing(cam, pan, tilt, zoom):
    assert wait_for(lambda: still(cam), 15.0)  # an earlier move has ended
    before = position(cam)
    with pytest.raises(sdk_errors.InvalidRequestError, match="outside"):
        cam.set_ptz_position(MECH, pan, tilt, zoom)
    assert holds(lambda: position(cam) == pytest.approx(before, abs=1e-6), 0.1)


def test_unknown_heads_and_velocity_on_the_mech_head_are_refused(cam):
    with pytest.raises(sdk_errors.InvalidRequestError, match="unknown ptz"):
        cam.get_ptz_position(ptz_pb2.PtzDescription(name="periscope"))
    with pytest.raises(sdk_errors.InvalidRequestError, match="velocity"):
        cam.set_ptz_velocity(MECH, 10.0, 0.0, 0.0)


def test_the_digital_view_moves_by_velocity(cam):
    cam.set_ptz_position(DIGI, 100.0, 0.0, 1.0)
    cam.set_ptz_velocity(DIGI, 20.0, 0.0, 0.0)
    start = position(cam, DIGI)[0]
    time.sleep(0.5)  # sleep: the span the turn rate is measured over
    moved = (position(cam, DIGI)[0] - start) % 360.0
    assert 5.0 < moved < 15.0  # 20 deg/s for about half a second
    cam.set_ptz_velocity(DIGI, 0.0, 0.0, 0.0)
    stopped = position(cam, DIGI)[0]
    assert holds(lambda: position(cam, DIGI)[0] == pytest.approx(stopped, abs=1e-6), 0.2)


def test_focus_and_lens_initialization(cam):
    assert cam.get_ptz_focus_state().mode == ptz_pb2.PtzFocusState.PTZ_FOCUS_AUTO
    cam.set_ptz_focus_state(ptz_pb2.PtzFocusState.PTZ_FOCUS_MANUAL, distance=5.0)
    focus = cam.get_ptz_focus_state()
    assert focus.mode == ptz_pb2.PtzFocusState.PTZ_FOCUS_MANUAL
    assert focus.approx_distance.value == pytest.approx(5.0)
    cam.initialize_lens()
    cam.set_ptz_focus_state(ptz_pb2.PtzFocusState.PTZ_FOCUS_AUTO)
    assert cam.get_ptz_focus_state().mode == ptz_pb2.PtzFocusState.PTZ_FOCUS_AUTO
