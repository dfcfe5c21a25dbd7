"""Any arm surface contact request from ROS (``bosdyn.api.ArmSurfaceContact.Request``): parsed
and checked before it is sent, and how long the robot runs it. Pure."""

import itertools

from bosdyn.api import arm_surface_contact_pb2

from spot_driver.core.errors import CommandError
from spot_driver.core.proto_input import check_values, parse_one_form

Request = arm_surface_contact_pb2.ArmSurfaceContact.Request
AXES = ("x_axis", "y_axis", "z_axis")
SETTLE_S = 0.5  # the goal ends this long after the trajectory's last point
MAX_SECONDS = 600.0


def parse(serialized: bytes, text: str, robot_frames: set[str]) -> Request:
    """The goal's request; CommandError when it does not parse, names no root frame or one
    the robot's tree lacks, has a non-finite value, a press force outside [-1, 1], or neither
    a trajectory nor an axis in force mode."""
    request = parse_one_form(Request(), serialized, text, ("request", "request_text"))
    if not request.root_frame_name:
        raise CommandError("root_frame_name is required (the frame the trajectory and task "
                           "frame are given in, e.g. 'odom' or 'body')")
    check_values(request, robot_frames)
    press = request.press_force_percentage
    if max(abs(press.x), abs(press.y), abs(press.z)) > 1.0:
        raise CommandError("press_force_percentage is a fraction of the arm's press force: "
                           "each axis within [-1, 1]")
    force_axes = [axis for axis in AXES if getattr(request, axis) == Request.AXIS_MODE_FORCE]
    points = request.pose_trajectory_in_task.points
    if not points and not force_axes:
        raise CommandError("the request has no pose_trajectory_in_task points and no axis in "
                           "AXIS_MODE_FORCE: it would do nothing")
    times = [p.time_since_reference.seconds + p.time_since_reference.nanos * 1e-9
             for p in points]
    if any(b <= a for a, b in itertools.pairwise(times)):
        raise CommandError("the trajectory's points must have increasing times")
    if times and not 0.0 <= times[-1] <= MAX_SECONDS:
        raise CommandError(f"the trajectory must end within [0, {MAX_SECONDS:g}] s")
    return request


def seconds(request: Request, now: float) -> float:
    """How long from ``now`` (local seconds since the epoch) the robot runs the request: to
    the trajectory's last point, timed from its reference time when set (else from now),
    plus SETTLE_S."""
    trajectory = request.pose_trajectory_in_task
    if not trajectory.points:
        return SETTLE_S
    last = trajectory.points[-1].time_since_reference
    start = now
    if trajectory.HasField("reference_time"):
        start = trajectory.reference_time.seconds + trajectory.reference_time.nanos * 1e-9
    return max(0.0, start + last.seconds + last.nanos * 1e-9 - now) + SETTLE_S
