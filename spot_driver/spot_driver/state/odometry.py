"""KinematicState to nav_msgs/Odometry in the odom or vision frame."""

from bosdyn.api import robot_state_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from nav_msgs.msg import Odometry

from spot_driver.conversions import frames
from spot_driver.conversions.time import robot_stamp_to_msg

# Leg odometry drifts about 1-2 % of the distance walked; these diagonal covariances
# (x, y, z, roll, pitch, yaw) describe that order of uncertainty for one reading.
POSE_COVARIANCE = (0.01, 0.01, 0.01, 0.001, 0.001, 0.005)  # m^2 and rad^2
TWIST_COVARIANCE = (0.0025, 0.0025, 0.0025, 0.001, 0.001, 0.0025)  # (m/s)^2 and (rad/s)^2


def _diagonal(values: tuple[float, ...]) -> list[float]:
    out = [0.0] * 36
    for i, v in enumerate(values):
        out[i * 7] = v
    return out


_POSE_COV = _diagonal(POSE_COVARIANCE)
_TWIST_COV = _diagonal(TWIST_COVARIANCE)


def odometry_msg(kinematic_state: robot_state_pb2.KinematicState, root: str, skew_nsec: int,
                 prefix: str = "", body_frame: str = "body") -> Odometry:
    """Pose of the body in ``root``'s odometry frame (the root; odom under a body root) and
    its twist expressed in the body frame (REP-105)."""
    root = frames.odometry_frame(root)
    snapshot = kinematic_state.transforms_snapshot
    root_tform_body = get_a_tform_b(snapshot, root, body_frame)
    if root_tform_body is None:
        raise KeyError(f"no transform from {root!r} to {body_frame!r} in the robot's tree")
    velocity = (kinematic_state.velocity_of_body_in_vision if root == "vision"
                else kinematic_state.velocity_of_body_in_odom)
    msg = Odometry()
    msg.header.stamp = robot_stamp_to_msg(kinematic_state.acquisition_timestamp, skew_nsec)
    msg.header.frame_id = prefix + root
    msg.child_frame_id = prefix + body_frame
    pose = msg.pose.pose
    pose.position.x, pose.position.y, pose.position.z = (
        float(root_tform_body.x), float(root_tform_body.y), float(root_tform_body.z))
    q = root_tform_body.rotation
    pose.orientation.w, pose.orientation.x, pose.orientation.y, pose.orientation.z = (
        float(q.w), float(q.x), float(q.y), float(q.z))
    body_rot_inverse = q.inverse()
    linear = body_rot_inverse.transform_point(velocity.linear.x, velocity.linear.y,
                                              velocity.linear.z)
    angular = body_rot_inverse.transform_point(velocity.angular.x, velocity.angular.y,
                                               velocity.angular.z)
    twist = msg.twist.twist
    twist.linear.x, twist.linear.y, twist.linear.z = (float(v) for v in linear)
    twist.angular.x, twist.angular.y, twist.angular.z = (float(v) for v in angular)
    msg.pose.covariance = _POSE_COV
    msg.twist.covariance = _TWIST_COV
    return msg
