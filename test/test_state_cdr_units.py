"""The CDR hot path produces what rclpy serializes from the message path, byte for byte."""

import math
import operator

import numpy as np
import pytest
from bosdyn.api import robot_state_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose
from geometry_msgs.msg import TwistWithCovarianceStamped
from hypothesis import given, settings
from hypothesis import strategies as st
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from spot_driver.conversions import frames
from spot_driver.conversions.time import local_stamp, robot_stamp_to_msg
from spot_driver.state.joint_states import joint_state_msg
from spot_driver.state.odometry import odometry_msg
from spot_driver.state.pipeline import StatePipeline
from spot_driver.state.state_cdr import StateSerializer
from spot_msgs.msg import TimeSyncState
from spot_sim import SimConfig
from spot_sim.body.frame_tree import build_snapshot
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import RobotClock
from spot_sim.state import state_report

finite = st.floats(-100, 100)


def _kinematic_state(x, y, z, yaw, roll, joints, velocity, stamp_ns, has_arm):
    kin = robot_state_pb2.KinematicState()
    rotation = Quat.from_yaw(yaw) * Quat.from_roll(roll)
    odom_body = SE3Pose(x, y, z, rotation)
    vision_body = SE3Pose(0.3, -0.1, 0.0, Quat.from_yaw(0.05)) * odom_body
    kin.transforms_snapshot.CopyFrom(build_snapshot(odom_body, vision_body, has_arm))
    names = ["fl.hx", "fl.hy", "fl.kn", "hr.kn", "arm0.sh0"][:len(joints)]
    for name, value in zip(names, joints, strict=False):
        joint = kin.joint_states.add(name=name)
        joint.position.value, joint.velocity.value, joint.load.value = value, -value, 2 * value
    for field in (kin.velocity_of_body_in_odom, kin.velocity_of_body_in_vision):
        field.linear.x, field.linear.y, field.linear.z = velocity
        field.angular.z = velocity[0] / 3
    kin.acquisition_timestamp.seconds, kin.acquisition_timestamp.nanos = divmod(stamp_ns, 10**9)
    return kin


def _same_outside_padding(fast: bytes, slow: bytes, padding: list[int]) -> None:
    assert len(fast) == len(slow)
    mask = np.ones(len(fast), dtype=bool)
    mask[padding] = False
    a, b = np.frombuffer(fast, np.uint8), np.frombuffer(slow, np.uint8)
    assert np.array_equal(a[mask], b[mask])


@settings(max_examples=60, deadline=None)
@given(finite, finite, st.floats(0.1, 1.0), st.floats(-math.pi, math.pi),
       st.floats(-0.4, 0.4), st.lists(finite, min_size=1, max_size=5),
       st.tuples(finite, finite, finite), st.integers(20 * 10**9, 2 * 10**18),
       st.booleans(), st.sampled_from(["odom", "vision", "body"]), st.sampled_from(["", "spot1/"]))
def test_fast_path_equals_message_path(x, y, z, yaw, roll, joints, velocity, stamp_ns, has_arm,
                                       root, prefix):
    kin = _kinematic_state(x, y, z, yaw, roll, joints, velocity, stamp_ns, has_arm)
    serializer = StateSerializer(root, prefix)
    _assert_like_message_path(serializer, kin, root, prefix)


zero_or_finite = st.one_of(st.just(0.0), finite)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(zero_or_finite, zero_or_finite, st.floats(-math.pi, math.pi),
                          st.lists(zero_or_finite, min_size=3, max_size=3),
                          st.tuples(zero_or_finite, zero_or_finite, zero_or_finite),
                          st.integers(20 * 10**9, 2 * 10**18)), min_size=2, max_size=8),
       st.booleans(), st.sampled_from(["odom", "vision", "body"]))
def test_state_after_state_equals_message_path(sequence, has_arm, root):
    """One serializer over changing states (values that turn 0 and back, new stamps): every
    state equal to the message path."""
    serializer = StateSerializer(root, "r/")
    for x, y, yaw, joints, velocity, stamp_ns in sequence:
        kin = _kinematic_state(x, y, 0.4, yaw, 0.0, joints, velocity, stamp_ns, has_arm)
        _assert_like_message_path(serializer, kin, root, "r/")


def test_a_state_with_unknown_fields_equals_message_path():
    kin = _kinematic_state(1.0, 2.0, 0.5, 0.3, 0.1, [0.1, 0.2], (0.1, 0.2, 0.3), 10**12, True)
    kin.MergeFromString(b"\xa8\x06\x01")  # field 101, from a newer robot
    serializer = StateSerializer("odom")
    for _ in range(3):
        _assert_like_message_path(serializer, kin, "odom", "")


def decoded_stamp(odometry: Odometry) -> tuple[int, int]:
    return odometry.header.stamp.sec, odometry.header.stamp.nanosec


def _assert_like_message_path(serializer, kin, root, prefix):
    skew = 12_345_678_901
    fast_joints, fast_odom, fast_tf = serializer.serialize(
        kin, local_stamp(kin.acquisition_timestamp, skew))

    slow_joints = joint_state_msg(kin, skew, prefix)
    _same_outside_padding(fast_joints, serialize_message(slow_joints),
                          serializer._joints[tuple(j.name for j in kin.joint_states)]
                          .layout.padding)
    assert deserialize_message(fast_joints, JointState) == slow_joints

    slow_odom = odometry_msg(kin, root, skew, prefix)
    decoded = deserialize_message(fast_odom, Odometry)
    assert decoded.header == slow_odom.header and decoded.child_frame_id == slow_odom.child_frame_id
    for got, want in ((decoded.pose.pose, slow_odom.pose.pose),
                      (decoded.twist.twist, slow_odom.twist.twist)):
        a = [getattr(getattr(got, f), c) for f in got.get_fields_and_field_types()
             for c in ("x", "y", "z", "w") if hasattr(getattr(got, f), c)]
        b = [getattr(getattr(want, f), c) for f in want.get_fields_and_field_types()
             for c in ("x", "y", "z", "w") if hasattr(getattr(want, f), c)]
        assert a == pytest.approx(b, abs=1e-9)
    assert list(decoded.pose.covariance) == list(slow_odom.pose.covariance)
    assert list(decoded.twist.covariance) == list(slow_odom.twist.covariance)
    twist = deserialize_message(serializer.body_twist(decoded_stamp(decoded), fast_odom),
                                TwistWithCovarianceStamped)
    assert twist.header.stamp == decoded.header.stamp
    assert twist.header.frame_id == decoded.child_frame_id
    assert twist.twist == decoded.twist

    stamp = robot_stamp_to_msg(kin.acquisition_timestamp, skew)
    dynamic, _ = frames.split_transforms(kin.transforms_snapshot, root, stamp, prefix)
    slow_tf = TFMessage(transforms=dynamic)
    decoded_tf = deserialize_message(fast_tf, TFMessage)
    by_child = operator.attrgetter("child_frame_id")
    if list(map(by_child, decoded_tf.transforms)) == list(map(by_child, slow_tf.transforms)):
        assert len(fast_tf) == len(serialize_message(slow_tf))
    # else the layout of this tree shape came from a state whose map iterated in another
    # order (upb's map order can differ between copies): TFMessage order carries no meaning
    for got, want in zip(sorted(decoded_tf.transforms, key=by_child),
                         sorted(slow_tf.transforms, key=by_child), strict=True):
        assert got.header == want.header and got.child_frame_id == want.child_frame_id
        g, w = got.transform, want.transform
        assert [g.translation.x, g.translation.y, g.translation.z, g.rotation.x, g.rotation.y,
                g.rotation.z, g.rotation.w] == pytest.approx(
            [w.translation.x, w.translation.y, w.translation.z, w.rotation.x, w.rotation.y,
             w.rotation.z, w.rotation.w], abs=1e-9)


def test_fast_tf_is_bit_identical_when_no_inversion_is_involved():
    kin = _kinematic_state(1.0, 2.0, 0.5, 0.3, 0.0, [0.1, 0.2], (0.1, 0.0, 0.0), 10**12, True)
    serializer = StateSerializer("odom")
    fast_tf, _ = serializer.transforms(kin, local_stamp(kin.acquisition_timestamp, 0))
    stamp = robot_stamp_to_msg(kin.acquisition_timestamp, 0)
    dynamic, _ = frames.split_transforms(kin.transforms_snapshot, "odom", stamp)
    layout = serializer._tf_layout(kin.transforms_snapshot)
    keep = [i for i, t in enumerate(dynamic) if t.child_frame_id != "body"]
    decoded = deserialize_message(fast_tf, TFMessage)
    for i in keep:
        assert decoded.transforms[i] == dynamic[i]
    assert len(layout.plan) == len(dynamic)


def test_the_pipeline_turns_one_state_into_every_message():
    """One call: kinematics, statuses on the cycles that carry them, the time-sync status,
    and /tf_static only for the first state and when the tree changes."""
    robot = SimRobot(SimConfig(has_arm=False), RobotClock(12.345))
    pipeline = StatePipeline("odom", "spot1/")
    skew, now = 12_345_000_000, (1_700_000_000, 5)
    robot.step()
    state = state_report.robot_state(robot)
    assert pipeline.messages(state, skew, (True, skew, 0), now).tf_static is None  # a real
    # Spot's robot state has no static edges; a tree with fixed frames (the simulator's full
    # one: head, cameras) gets them on /tf_static
    state.kinematic_state.transforms_snapshot.CopyFrom(robot.transforms_snapshot())
    first = pipeline.messages(state, skew, (True, skew, 3_000_000), now)
    assert deserialize_message(first.joint_states, JointState).name[0].startswith("spot1/")
    assert deserialize_message(first.odometry, Odometry).child_frame_id == "spot1/body"
    assert deserialize_message(first.tf, TFMessage).transforms
    assert first.tf_static is not None and all(
        t.header.frame_id.startswith("spot1/") for t in first.tf_static.transforms)
    assert {"battery", "battery_state", "power", "estop", "wifi", "feet", "system_faults",
            "behavior_faults"} <= set(first.statuses)
    sync = deserialize_message(first.time_sync, TimeSyncState)
    assert sync.clock_skew.sec == 12 and sync.header.stamp.sec == now[0]
    second = pipeline.messages(state, skew, (True, skew, 0), now, with_statuses=False)
    assert second.tf_static is None and second.statuses == {} and second.time_sync is None
    del state.kinematic_state.transforms_snapshot.child_to_parent_edge_map["flat_body"]
    assert pipeline.messages(state, skew, (True, skew, 0), now).tf_static is not None


def test_the_pipeline_refuses_an_unknown_tf_root():
    with pytest.raises(ValueError, match="tf_root"):
        StatePipeline("map")


def test_a_time_sync_correction_never_sends_the_state_stamps_back():
    """The skew moves with each time-sync estimate: a state acquired 5 ms after the previous
    one, converted with a skew 20 ms larger, still gets a later stamp."""
    robot = SimRobot(SimConfig(has_arm=False), RobotClock(0.0))
    pipeline = StatePipeline("odom")
    robot.step()
    state = state_report.robot_state(robot)
    first = deserialize_message(pipeline.messages(state, 0, (True, 0, 0), (0, 0)).joint_states,
                                JointState).header.stamp
    stamp = state.kinematic_state.acquisition_timestamp
    stamp.FromNanoseconds(stamp.ToNanoseconds() + 5_000_000)
    second = deserialize_message(pipeline.messages(state, 20_000_000, (True, 0, 0), (0, 0))
                                 .joint_states, JointState).header.stamp
    assert (second.sec, second.nanosec) > (first.sec, first.nanosec)
    stamp.FromNanoseconds(stamp.ToNanoseconds() - 13_000_000_000)  # the robot clock jumped
    third = deserialize_message(pipeline.messages(state, 20_000_000, (True, 0, 0), (0, 0))
                                .joint_states, JointState).header.stamp
    assert third.sec < second.sec - 12  # a new clock goes through
