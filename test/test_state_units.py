"""The state capability's pure conversions, without ROS graph or robot: the frame tree
re-rooted and split into /tf and /tf_static, odometry, robot time, joint names."""

import math

import numpy as np
import pytest
from bosdyn.api import robot_state_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose
from hypothesis import given, settings
from hypothesis import strategies as st

from spot_driver.conversions import frames
from spot_driver.conversions.time import robot_stamp_to_msg, robot_to_local_nsec
from spot_driver.state.joint_states import joint_state_msg, urdf_joint_name
from spot_driver.state.odometry import odometry_msg
from spot_sim.body.frame_tree import build_snapshot

angles = st.floats(-math.pi, math.pi)

coords = st.floats(-50, 50)

def _snapshot(x=1.0, y=2.0, yaw=0.5, drift=(0.1, -0.2, 0.05)):
    odom_body = SE3Pose(x, y, 0.52, Quat.from_yaw(yaw))
    vision_odom = SE3Pose(drift[0], drift[1], 0.0, Quat.from_yaw(drift[2]))
    return build_snapshot(odom_body, vision_odom * odom_body, has_arm=True)

def _chain(edges, root, frame) -> SE3Pose:
    parent_of = {e.child: e for e in edges}
    pose = SE3Pose.from_identity()
    while frame != root:
        edge = parent_of[frame]
        pose = edge.pose * pose
        frame = edge.parent
    return pose

@settings(max_examples=50, deadline=None)
@given(coords, coords, angles, st.sampled_from(["odom", "vision"]))
def test_rerooted_tree_keeps_every_transform(x, y, yaw, root):
    snapshot = _snapshot(x, y, yaw)
    edges = frames.reroot(snapshot, root)
    children = [e.child for e in edges]
    assert len(children) == len(set(children)), "a frame has two parents"
    assert root not in children
    assert set(children) | {root} == set(snapshot.child_to_parent_edge_map)
    for frame in ("body", "frontleft_fisheye", "hand", "gpe", "flat_body"):
        expected = get_a_tform_b(snapshot, root, frame)
        got = _chain(edges, root, frame)
        assert np.allclose(got.to_matrix(), expected.to_matrix(), atol=1e-9)

def test_reroot_at_unknown_frame_is_a_clear_error():
    with pytest.raises(KeyError, match="not in the robot's frame tree"):
        frames.reroot(_snapshot(), "map")

def test_static_split_keeps_moving_frames_dynamic():
    dynamic, static = frames.split_transforms(_snapshot(), "odom", stamp=None, prefix="spot/")
    static_children = {t.child_frame_id for t in static}
    dynamic_children = {t.child_frame_id for t in dynamic}
    assert {"spot/frontleft_fisheye", "spot/head", "spot/back"} <= static_children
    assert {"spot/body", "spot/vision", "spot/gpe", "spot/flat_body",
            "spot/hand"} <= dynamic_children
    assert all(t.header.frame_id.startswith("spot/") for t in dynamic + static)

def test_odometry_twist_is_expressed_in_the_body_frame():
    kin = robot_state_pb2.KinematicState()
    kin.transforms_snapshot.CopyFrom(_snapshot(yaw=math.pi / 2))
    kin.velocity_of_body_in_odom.linear.y = 0.5  # walking forward while facing +y
    kin.velocity_of_body_in_odom.angular.z = 0.2
    kin.acquisition_timestamp.seconds = 100
    msg = odometry_msg(kin, "odom", skew_nsec=10_000_000_000, prefix="r/")
    assert msg.header.frame_id == "r/odom" and msg.child_frame_id == "r/body"
    assert msg.twist.twist.linear.x == pytest.approx(0.5)
    assert msg.twist.twist.linear.y == pytest.approx(0.0, abs=1e-12)
    assert msg.twist.twist.angular.z == pytest.approx(0.2)
    assert (msg.pose.pose.position.x, msg.pose.pose.position.y) == pytest.approx((1.0, 2.0))
    assert msg.header.stamp.sec == 90
    assert msg.pose.covariance[0] > 0 and msg.twist.covariance[35] > 0

def test_robot_time_converts_with_skew_for_scalars_and_arrays():
    assert robot_to_local_nsec(5_000, 2_000) == 3_000
    arr = np.array([10, 20, 30], dtype=np.int64)
    assert list(robot_to_local_nsec(arr, 5)) == [5, 15, 25]
    stamp = robot_state_pb2.KinematicState().acquisition_timestamp
    stamp.seconds, stamp.nanos = 20, 500
    msg = robot_stamp_to_msg(stamp, skew_nsec=-1_000_000_000)
    assert (msg.sec, msg.nanosec) == (21, 500)

def test_joint_names_follow_the_urdf():
    assert urdf_joint_name("hr.kn") == "rear_right_knee"
    assert urdf_joint_name("fl.hx") == "front_left_hip_x"
    assert urdf_joint_name("arm0.wr1") == "arm_wr1"
    kin = robot_state_pb2.KinematicState()
    joint = kin.joint_states.add(name="fr.hy")
    joint.position.value, joint.velocity.value, joint.load.value = 0.1, 0.2, 0.3
    msg = joint_state_msg(kin, 0, "spot/")
    assert msg.name == ["spot/front_right_hip_y"]
    assert (msg.position[0], msg.velocity[0], msg.effort[0]) == (0.1, 0.2, 0.3)
