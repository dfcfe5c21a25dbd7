"""Each state-stream message's ROS messages as CDR bytes (fixed layouts, ``conversions.cdr``):
at 333 Hz, building rclpy messages field by field costs a core; packing numbers into a
constant byte image costs a few microseconds. Same content as ``conversions.py`` (which tests
compare against), published serialized."""

from bosdyn.api import robot_state_pb2

from spot_driver.conversions.cdr import Layout, LayoutWriter
from spot_driver.conversions.time import local_stamp
from spot_driver.low_level.conversions import gravity_in_link, rotate_inverse

Stream = robot_state_pb2.RobotStateStreamResponse
_NAN = float("nan")


def _joint_layout(names: list[str]) -> Layout:
    writer = LayoutWriter()
    writer.header("")
    writer.u32(len(names))
    for name in names:
        writer.string(name)
    for _ in range(3):  # position, velocity, effort
        writer.u32(len(names))
        writer.f64s(len(names))
    return writer.finish()


def _imu_layout(frame: str) -> Layout:
    writer = LayoutWriter()
    writer.header(frame)
    writer.f64s(4)  # orientation x y z w
    writer.constant_f64s([0.0] * 9)
    writer.f64s(3)  # angular velocity
    writer.constant_f64s([0.0] * 9)
    writer.f64s(3)  # linear acceleration
    writer.constant_f64s([0.0] * 9)
    return writer.finish()


def _odometry_layout(frame: str, child: str) -> Layout:
    writer = LayoutWriter()
    writer.header(frame)
    writer.string(child)
    writer.f64s(7)  # position, orientation x y z w
    writer.constant_f64s([0.0] * 36)
    writer.f64s(6)  # twist in the child frame
    writer.constant_f64s([0.0] * 36)
    return writer.finish()


def _contacts_layout(frame: str, feet: int) -> Layout:
    writer = LayoutWriter()
    writer.header(frame)
    writer.u32(feet)
    for _ in range(feet):
        writer.constant_f64s([_NAN] * 3)  # foot position: not in the stream
        writer.slots.append((len(writer.buf), "B"))
        writer.buf += b"\x00"
        writer.constant_f64s([_NAN])  # ground friction estimate: unknown
    return writer.finish()


class StreamSerializer:
    """CDR of joint_states, imu (one per packet), odometry and contacts for one stream."""

    def __init__(self, names: list[str], prefix: str) -> None:
        self.names = list(names)
        self.prefix = prefix
        self._joints = _joint_layout(self.names)
        self._imu: dict[str, Layout] = {}
        self._odometry = _odometry_layout(prefix + "odom", prefix + "body")
        self._contacts: dict[int, Layout] = {}

    def joint_states(self, message: Stream, skew_nsec: int) -> bytes:
        joints = message.joint_states
        stamp = local_stamp(joints.acquisition_timestamp, skew_nsec)
        return self._joints.fill((stamp, tuple(joints.position), tuple(joints.velocity),
                                  tuple(joints.load)))

    def imus(self, message: Stream, skew_nsec: int) -> list[bytes]:
        state = message.inertial_state
        layout = self._imu.get(state.mounting_link_name)
        if layout is None:
            layout = self._imu[state.mounting_link_name] = _imu_layout(
                self.prefix + state.mounting_link_name)
        out = []
        for packet in state.packets:
            q, w, a = (packet.odom_rot_link, packet.angular_velocity_rt_odom_in_link_frame,
                       packet.acceleration_rt_odom_in_link_frame)
            gx, gy, gz = gravity_in_link(q.w, q.x, q.y, q.z)
            out.append(layout.fill((local_stamp(packet.timestamp, skew_nsec),
                                    (q.x, q.y, q.z, q.w), (w.x, w.y, w.z),
                                    (a.x + gx, a.y + gy, a.z + gz))))
        return out

    def odometry(self, message: Stream, skew_nsec: int) -> bytes:
        """Pose in odom; twist in the body frame (nav_msgs/Odometry: the child frame)."""
        kin = message.kinematic_state
        pose = kin.odom_tform_body
        p, r = pose.position, pose.rotation
        q = (r.w, r.x, r.y, r.z)
        v = kin.velocity_of_body_in_odom
        twist = (*rotate_inverse(q, (v.linear.x, v.linear.y, v.linear.z)),
                 *rotate_inverse(q, (v.angular.x, v.angular.y, v.angular.z)))
        return self._odometry.fill((local_stamp(kin.acquisition_timestamp, skew_nsec),
                                    (p.x, p.y, p.z, r.x, r.y, r.z, r.w), twist))

    def contacts(self, message: Stream, skew_nsec: int) -> bytes:
        contacts = message.contact_states
        layout = self._contacts.get(len(contacts))
        if layout is None:
            layout = self._contacts[len(contacts)] = _contacts_layout(self.prefix + "body",
                                                                      len(contacts))
        stamp = local_stamp(message.joint_states.acquisition_timestamp, skew_nsec)
        return layout.fill((stamp, *((int(c),) for c in contacts)))
