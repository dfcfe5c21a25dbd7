"""RobotStateStreamResponse to ROS messages, one function per message; pure (no node, no
I/O). Stamps are the robot's acquisition times in local time (``skew_nsec``: robot clock
minus local clock, from time sync)."""

from bosdyn.api import robot_state_pb2
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Header

from spot_driver.conversions.time import robot_stamp_to_msg, timestamp_to_nsec
from spot_msgs.msg import FootState, FootStateArray

Stream = robot_state_pb2.RobotStateStreamResponse
G = 9.80665  # m/s^2, standard gravity (REP-145: accelerometers report it)


def joint_state(message: Stream, names: list[str], skew_nsec: int) -> JointState:
    """Every joint of the message; ``names`` in JointIndex order (as many as it has)."""
    joints = message.joint_states
    return JointState(header=_header(joints.acquisition_timestamp, skew_nsec, ""),
                      name=names[:len(joints.position)], position=list(joints.position),
                      velocity=list(joints.velocity), effort=list(joints.load))


def imus(message: Stream, prefix: str, skew_nsec: int) -> list[Imu]:
    """One sensor_msgs/Imu per IMU packet, each with its own sample time. The API gives
    acceleration relative to odom; an accelerometer (REP-145) also reads gravity, added here
    in the link frame. Orientation is the link's in odom."""
    state = message.inertial_state
    frame = prefix + state.mounting_link_name
    out = []
    for packet in state.packets:
        q = packet.odom_rot_link
        msg = Imu()
        msg.header.stamp = robot_stamp_to_msg(packet.timestamp, skew_nsec)
        msg.header.frame_id = frame
        msg.orientation.w, msg.orientation.x = q.w, q.x
        msg.orientation.y, msg.orientation.z = q.y, q.z
        w = packet.angular_velocity_rt_odom_in_link_frame
        msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = w.x, w.y, w.z
        a = packet.acceleration_rt_odom_in_link_frame
        gx, gy, gz = gravity_in_link(q.w, q.x, q.y, q.z)
        acc = msg.linear_acceleration
        acc.x, acc.y, acc.z = a.x + gx, a.y + gy, a.z + gz
        out.append(msg)
    return out


def gravity_in_link(w: float, x: float, y: float, z: float) -> tuple[float, float, float]:
    """(0, 0, +G) of odom (the reaction to gravity) in the link frame: R^T (0, 0, G)."""
    return (2 * (x * z - w * y) * G, 2 * (y * z + w * x) * G, (1 - 2 * (x * x + y * y)) * G)


def rotate_inverse(q: tuple[float, float, float, float], v) -> tuple[float, float, float]:
    """R(q)^T v for q = (w, x, y, z): a vector in the rotated frame."""
    w, x, y, z = q
    vx, vy, vz = v
    tx, ty, tz = 2 * (-y * vz + z * vy), 2 * (-z * vx + x * vz), 2 * (-x * vy + y * vx)
    return (vx + w * tx + (-y * tz + z * ty), vy + w * ty + (-z * tx + x * tz),
            vz + w * tz + (-x * ty + y * tx))


def imu_mount(message: Stream, prefix: str) -> TransformStamped:
    """mounting link -> ``<prefix>imu`` (the IMU's position in its link), for /tf_static."""
    state = message.inertial_state
    tf = TransformStamped()
    tf.header.frame_id = prefix + state.mounting_link_name
    tf.child_frame_id = prefix + "imu"
    p = state.position_imu_rt_link
    tf.transform.translation.x, tf.transform.translation.y = p.x, p.y
    tf.transform.translation.z = p.z
    tf.transform.rotation.w = 1.0
    return tf


def odometry(message: Stream, prefix: str, skew_nsec: int) -> Odometry:
    """Body pose in odom and its velocity in the body frame (nav_msgs/Odometry's twist is in
    the child frame; the API gives it in odom), REP-105 frames."""
    kin = message.kinematic_state
    msg = Odometry(header=_header(kin.acquisition_timestamp, skew_nsec, prefix + "odom"),
                   child_frame_id=prefix + "body")
    pose = kin.odom_tform_body
    position, rotation = msg.pose.pose.position, msg.pose.pose.orientation
    position.x, position.y, position.z = pose.position.x, pose.position.y, pose.position.z
    rotation.w, rotation.x = pose.rotation.w, pose.rotation.x
    rotation.y, rotation.z = pose.rotation.y, pose.rotation.z
    v = kin.velocity_of_body_in_odom
    q = (pose.rotation.w, pose.rotation.x, pose.rotation.y, pose.rotation.z)
    twist = msg.twist.twist
    twist.linear.x, twist.linear.y, twist.linear.z = rotate_inverse(
        q, (v.linear.x, v.linear.y, v.linear.z))
    twist.angular.x, twist.angular.y, twist.angular.z = rotate_inverse(
        q, (v.angular.x, v.angular.y, v.angular.z))
    return msg


def contacts(message: Stream, prefix: str, skew_nsec: int) -> FootStateArray:
    """Foot contacts, front-left, front-right, hind-left, hind-right. The stream carries no
    foot positions: they are NaN (robot_state's feet topic has them)."""
    msg = FootStateArray(header=_header(message.joint_states.acquisition_timestamp, skew_nsec,
                                        prefix + "body"))
    nan = float("nan")
    for contact in message.contact_states:
        foot = FootState(contact=int(contact), ground_mu_estimate=nan)
        foot.foot_position_rt_body.x = foot.foot_position_rt_body.y = nan
        foot.foot_position_rt_body.z = nan
        msg.states.append(foot)
    return msg


def echoed_key(message: Stream) -> tuple[int, int]:
    """(user_command_key, robot time ns it was received) of the last command; key 0: none."""
    last = message.last_command
    return last.user_command_key, timestamp_to_nsec(last.received_timestamp)


def _header(stamp, skew_nsec: int, frame: str) -> Header:
    return Header(stamp=robot_stamp_to_msg(stamp, skew_nsec), frame_id=frame)
