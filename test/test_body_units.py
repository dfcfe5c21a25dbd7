"""The body's velocity and mobility rules without a robot: cmd_vel clamped (non-finite
refused), mobility settings checked and built, a trajectory's remaining distance and heading,
the simulator's planar helpers."""

import math

import pytest
from bosdyn.api import geometry_pb2
from hypothesis import given
from hypothesis import strategies as st

from spot_driver.body.commander import Se2Goal
from spot_driver.body.mobility import InvalidVelocityError, MobilitySettings, clamp_velocity
from spot_driver.body.trajectory import remaining
from spot_driver.core.errors import CommandError
from spot_sim.body.mobility import Se2


@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(-5, 5), st.floats(-5, 5))
def test_clamp_velocity_rejects_non_finite_and_bounds_the_rest(vx, vy, wz):
    limit = (1.0, 0.5, 1.0)
    if not math.isfinite(vx):
        with pytest.raises(InvalidVelocityError):
            clamp_velocity(vx, vy, wz, limit)
        return
    (cx, cy, cw), clamped = clamp_velocity(vx, vy, wz, limit)
    assert abs(cx) <= 1.0 and abs(cy) <= 0.5 and abs(cw) <= 1.0
    assert clamped == ((cx, cy, cw) != (vx, vy, wz))

def test_mobility_settings_validate_and_build_params():
    settings_ = MobilitySettings().with_body_pose(-0.1, (1, 0, 0, 0)).with_max_velocity(
        0.8, 0.3, 0.7).with_locomotion_hint(4).with_stairs_mode(2)
    params = settings_.to_proto()
    assert params.body_control.base_offset_rt_footprint.points[0].pose.position.z == -0.1
    assert params.vel_limit.max_vel.linear.x == pytest.approx(0.8)
    assert params.vel_limit.min_vel.angular == pytest.approx(-0.7)
    assert params.locomotion_hint == 4 and params.stairs_mode == 2 and params.stair_hint
    for bad in (lambda m: m.with_body_pose(0.5, (1, 0, 0, 0)),
                lambda m: m.with_body_pose(0.0, (0, 0, 0, 0)),
                lambda m: m.with_body_pose(math.nan, (1, 0, 0, 0)),
                lambda m: m.with_max_velocity(5.0, 0.1, 0.1),
                lambda m: m.with_max_velocity(0.0, 0.1, 0.1),
                lambda m: m.with_locomotion_hint(99),
                lambda m: m.with_stairs_mode(0)):
        with pytest.raises(CommandError):
            bad(MobilitySettings())

def test_sim_planar_helpers_are_consistent():
    from spot_sim.body import mobility
    pose = Se2(1.0, 2.0, 0.3)
    identity = mobility.compose(pose, mobility.inverse(pose))
    assert (identity.x, identity.y, identity.yaw) == pytest.approx((0, 0, 0), abs=1e-12)
    moved = mobility.integrate(Se2(0, 0, 0), Se2(1.0, 0.0, math.pi / 2), 1.0)
    assert (moved.x, moved.y, moved.yaw) == pytest.approx((2 / math.pi, 2 / math.pi,
                                                           math.pi / 2))


def test_trajectory_remaining_distance_and_heading():
    snapshot = geometry_pb2.FrameTreeSnapshot()
    edge = snapshot.child_to_parent_edge_map["body"]
    edge.parent_frame_name = "odom"
    edge.parent_tform_child.position.x = 1.0
    edge.parent_tform_child.rotation.w = 1.0
    snapshot.child_to_parent_edge_map["odom"].parent_frame_name = ""
    distance, angle = remaining(snapshot, Se2Goal(4.0, 4.0, math.pi / 2, "odom"))
    assert distance == pytest.approx(5.0) and angle == pytest.approx(math.pi / 2)
    unknown = remaining(snapshot, Se2Goal(0.0, 0.0, 0.0, "nowhere"))
    assert all(math.isnan(v) for v in unknown)
