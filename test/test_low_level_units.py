"""Joint-level pieces without a robot: the stream's CDR bytes against the same messages built
with rclpy, joint command checks, and the command stream's request builder."""

import math

import numpy as np
import pytest
from bosdyn.api import robot_state_pb2
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Imu, JointState

from spot_driver.low_level import conversions, joints
from spot_driver.low_level.commands import JointCommandError, JointTargets, update_request
from spot_driver.low_level.stream_cdr import StreamSerializer
from spot_msgs.msg import FootStateArray

SKEW = 12_345_000_000


def _message(rng) -> robot_state_pb2.RobotStateStreamResponse:
    m = robot_state_pb2.RobotStateStreamResponse()
    m.joint_states.acquisition_timestamp.FromNanoseconds(1_800_000_000_123_456_789)
    m.joint_states.position.extend(rng.normal(size=12).tolist())
    m.joint_states.velocity.extend(rng.normal(size=12).tolist())
    m.joint_states.load.extend(rng.normal(size=12).tolist())
    imu = m.inertial_state
    imu.mounting_link_name = "body"
    for k in range(2):
        packet = imu.packets.add()
        packet.timestamp.FromNanoseconds(1_800_000_000_120_000_000 + k * 3_000_000)
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        packet.odom_rot_link.w, packet.odom_rot_link.x, packet.odom_rot_link.y, \
            packet.odom_rot_link.z = q.tolist()
        packet.acceleration_rt_odom_in_link_frame.x = float(rng.normal())
        packet.angular_velocity_rt_odom_in_link_frame.z = float(rng.normal())
    kin = m.kinematic_state
    kin.acquisition_timestamp.CopyFrom(m.joint_states.acquisition_timestamp)
    kin.odom_tform_body.position.x, kin.odom_tform_body.position.z = 1.5, 0.52
    yaw = 0.7
    kin.odom_tform_body.rotation.w, kin.odom_tform_body.rotation.z = math.cos(yaw / 2), \
        math.sin(yaw / 2)
    kin.velocity_of_body_in_odom.linear.x = 0.4
    kin.velocity_of_body_in_odom.angular.z = 0.2
    m.contact_states.extend([1, 1, 2, 1])
    return m


def test_stream_cdr_bytes_are_what_rclpy_serializes():
    rng = np.random.default_rng(3)
    message = _message(rng)
    names = joints.names(12, "spot1/")
    cdr = StreamSerializer(names, "spot1/")
    # (compared as messages: CDR padding bytes are undefined and differ)
    assert deserialize_message(cdr.joint_states(message, SKEW), JointState) == \
        conversions.joint_state(message, names, SKEW)
    for mine, theirs in zip(cdr.imus(message, SKEW), conversions.imus(message, "spot1/", SKEW),
                            strict=True):
        assert deserialize_message(mine, Imu) == theirs
    assert deserialize_message(cdr.odometry(message, SKEW), Odometry) == \
        conversions.odometry(message, "spot1/", SKEW)
    contacts = deserialize_message(cdr.contacts(message, SKEW), FootStateArray)
    assert [s.contact for s in contacts.states] == [1, 1, 2, 1]
    assert contacts.header.frame_id == "spot1/body"


def test_odometry_twist_is_in_the_body_frame_and_imu_reads_gravity():
    message = _message(np.random.default_rng(1))
    odometry = conversions.odometry(message, "", SKEW)
    twist = odometry.twist.twist
    # 0.4 m/s along odom x, body turned 0.7 rad: in the body frame
    assert twist.linear.x == pytest.approx(0.4 * math.cos(0.7))
    assert twist.linear.y == pytest.approx(-0.4 * math.sin(0.7))
    assert twist.angular.z == pytest.approx(0.2)
    level = robot_state_pb2.RobotStateStreamResponse()
    level.inertial_state.mounting_link_name = "body"
    packet = level.inertial_state.packets.add()
    packet.odom_rot_link.w = 1.0
    imu = conversions.imus(level, "", 0)[0]
    assert imu.linear_acceleration.z == pytest.approx(conversions.G)
    stamp = conversions.joint_state(message, joints.names(12), SKEW).header.stamp
    assert stamp.sec * 10**9 + stamp.nanosec == 1_800_000_000_123_456_789 - SKEW


def _targets() -> JointTargets:
    targets = JointTargets(joints.names(12), joints.limits(12))
    stand = [0.0, 0.755, -1.397] * 4
    targets.hold(stand, [0.0, 0.0, 15.0] * 4)
    return targets


@pytest.mark.parametrize("fields, reason", [
    (dict(name=["front_left_knee"], position=[float("nan")], k_q_p=[1], k_qd_p=[1]),
     "not finite"),
    (dict(name=["front_left_elbow"], position=[0.0]), "unknown joint names"),
    (dict(name=["front_left_knee", "front_left_knee"], position=[-1.0, -1.0]), "named twice"),
    (dict(name=["front_left_knee"], position=[-3.0], k_q_p=[1], k_qd_p=[1]), "outside"),
    (dict(name=["front_left_knee"], position=[-1.0], k_q_p=[-1], k_qd_p=[1]), "negative"),
    (dict(name=["front_left_knee"], position=[-1.0], k_q_p=[1]), "together"),
    (dict(name=["front_left_knee"], position=[-1.0], k_q_p=[1], k_qd_p=[1]), "no gains"),
    (dict(name=["front_left_knee"], position=[-1.0], velocity=[1, 2]), "values for 1"),
    (dict(name=[], position=[]), "no joints"),
])
def test_bad_joint_commands_are_refused_and_change_nothing(fields, reason):
    targets = _targets()
    before = (targets.position.copy(), targets.k_q_p.copy())
    with pytest.raises(JointCommandError, match=reason):
        targets.merge(**fields)
    assert np.array_equal(targets.position, before[0])
    assert np.array_equal(targets.k_q_p, before[1], equal_nan=True)


def test_a_subset_keeps_the_other_joints_where_they_were():
    targets = _targets()
    all_gains = dict(k_q_p=[100.0] * 12, k_qd_p=[1.0] * 12)
    first = targets.merge(joints.names(12), [0.0, 0.755, -1.397] * 4, **all_gains)
    second = targets.merge(["front_left_knee"], [-1.5], load=[20.0])
    assert second.position[2] == -1.5 and second.load[2] == 20.0
    assert np.array_equal(np.delete(second.position, 2), np.delete(first.position, 2))
    assert second.load[5] == 0.0  # named in the first command with no load: zero
    request = update_request(second, 7, 1_800_000_000_000_000_000, 0.005, gains=True)
    command = request.joint_command
    assert np.allclose(command.position, second.position, atol=1e-6)
    assert command.user_command_key == 7 and len(command.gains.k_q_p) == 12
    assert command.end_time.seconds == 1_800_000_000
    assert command.extrapolation_duration.nanos == 5_000_000
