"""The Spot CAM's pure parts: the driver's PTZ move checks and the head's frame; the
simulated heads' limits, slew and short way round (no robot, no ROS graph)."""

import math

import pytest
from builtin_interfaces.msg import Time
from transforms3d.quaternions import rotate_vector

from spot_driver.spot_cam.conversions import Limits, check_move, head_transform
from spot_sim.spot_cam.ptz import PAN_TILT_SLEW_DEG_S, Pose, PtzError, PtzHeads

HEADS = {"mech": Limits("mech", (0.0, 360.0), (-30.0, 100.0), (1.0, 30.0)),
         "digi": Limits("digi", (None, None), (-90.0, 90.0), (1.0, 30.0))}


@pytest.mark.parametrize("name, pose, sentence", [
    ("mech", (361.0, 0.0, 1.0), "mech pan 361 degrees is outside [0, 360] degrees"),
    ("mech", (0.0, 100.5, 1.0), "mech tilt 100.5 degrees is outside [-30, 100] degrees"),
    ("mech", (0.0, 0.0, 0.5), "mech zoom 0.5 is outside [1, 30]"),
    ("mech", (0.0, math.inf, 1.0), "tilt must be a finite number, not inf"),
    ("zoom", (0.0, 0.0, 1.0), "unknown PTZ 'zoom'; this Spot CAM has digi, mech"),
])
def test_a_move_outside_a_heads_limits_is_refused_with_a_sentence(name, pose, sentence):
    with pytest.raises(ValueError) as refused:
        check_move(HEADS, name, *pose)
    assert str(refused.value) == sentence


def test_moves_within_the_limits_and_an_unlimited_axis_pass():
    check_move(HEADS, "mech", 0.0, -30.0, 30.0)
    check_move(HEADS, "mech", 360.0, 100.0, 1.0)
    check_move(HEADS, "digi", 720.0, 0.0, 1.0)  # no pan limit listed


@pytest.mark.parametrize("pan, tilt, looks", [
    (0.0, 0.0, (1.0, 0.0, 0.0)),
    (90.0, 0.0, (0.0, -1.0, 0.0)),  # clockwise seen from above: to the right
    (270.0, 0.0, (0.0, 1.0, 0.0)),
    (0.0, 90.0, (0.0, 0.0, 1.0)),  # tilt up
    (180.0, -30.0, (-math.cos(math.radians(30)), 0.0, -0.5)),
])
def test_the_head_frame_looks_where_pan_and_tilt_point(pan, tilt, looks):
    transform = head_transform(pan, tilt, (0.1, 0.0, 0.2), "body", "spot_cam_ptz", Time())
    r = transform.transform.rotation
    assert rotate_vector([1.0, 0.0, 0.0], [r.w, r.x, r.y, r.z]) == pytest.approx(looks,
                                                                                abs=1e-9)
    t = transform.transform.translation
    assert (t.x, t.y, t.z) == (0.1, 0.0, 0.2)
    assert (transform.header.frame_id, transform.child_frame_id) == ("body", "spot_cam_ptz")


def test_the_simulated_mech_head_slews_and_takes_the_short_way_round():
    heads = PtzHeads(0)
    heads.set_position("mech", Pose(350.0, 0.0, 1.0), 0)
    half = int(10.0 / PAN_TILT_SLEW_DEG_S / 2 * 1e9)
    midway = heads.position("mech", half).pan  # 10 degrees the short way is 5 at half time
    assert midway == pytest.approx(355.0)
    assert heads.position("mech", 10**10) == Pose(350.0, 0.0, 1.0)
    with pytest.raises(PtzError, match="outside"):
        heads.set_position("mech", Pose(0.0, 120.0, 1.0), 10**10)
    assert heads.position("mech", 2 * 10**10) == Pose(350.0, 0.0, 1.0)  # nothing moved
