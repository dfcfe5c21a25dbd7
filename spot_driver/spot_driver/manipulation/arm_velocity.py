"""Arm velocity from ROS (``arm/cmd_vel``): a hand twist checked, clamped and turned into an
ArmVelocityCommand that ends by itself, so the arm stops when commands stop. Pure."""

import math

from bosdyn.api import robot_command_pb2

from spot_driver.core.errors import CommandError

MAX_LINEAR = 0.5  # m/s of the hand [ours: the API publishes no limit; Spot's examples use 0.5]
MAX_ANGULAR = 1.0  # rad/s


def _clamped(vector: tuple[float, float, float], limit: float) -> tuple[tuple, bool]:
    norm = math.sqrt(sum(v * v for v in vector))
    if norm <= limit:
        return vector, False
    return tuple(v * limit / norm for v in vector), True


def arm_velocity(linear: tuple[float, float, float], angular: tuple[float, float, float],
                 frame: str = "body") -> tuple[robot_command_pb2.RobotCommand, bool]:
    """(the command, whether it was clamped) for the hand moving at ``linear`` (m/s, in
    ``frame``) and turning at ``angular`` (rad/s, about the hand's own axes). CommandError
    for a non-finite value; the caller sets the end time."""
    if not all(math.isfinite(v) for v in (*linear, *angular)):
        raise CommandError(f"arm velocity linear {linear}, angular {angular} is not finite")
    linear, clamped_linear = _clamped(linear, MAX_LINEAR)
    angular, clamped_angular = _clamped(angular, MAX_ANGULAR)
    command = robot_command_pb2.RobotCommand()
    request = command.synchronized_command.arm_command.arm_velocity_command
    cartesian = request.cartesian_velocity
    cartesian.frame_name = frame
    v = cartesian.velocity_in_frame_name
    v.x, v.y, v.z = linear
    w = request.angular_velocity_of_hand_rt_odom_in_hand
    w.x, w.y, w.z = angular
    return command, clamped_linear or clamped_angular
