"""Robot timestamps to local ROS time, using the time-sync clock skew.

The SDK defines ``clock_skew = robot_time - local_time``; local = robot - skew.
"""

import numpy as np
from builtin_interfaces.msg import Duration, Time
from google.protobuf.duration_pb2 import Duration as DurationProto
from google.protobuf.timestamp_pb2 import Timestamp

NSEC = 1_000_000_000
Stamp = tuple[int, int]  # (sec, nanosec) of a builtin_interfaces Time or Duration


def robot_to_local_nsec(robot_nsec: int | np.ndarray, skew_nsec: int) -> int | np.ndarray:
    """Local time (ns) of robot time(s) ``robot_nsec``; works on scalars and arrays."""
    return robot_nsec - skew_nsec


def timestamp_to_nsec(stamp: Timestamp) -> int:
    return stamp.seconds * NSEC + stamp.nanos


def local_stamp(stamp: Timestamp, skew_nsec: int) -> Stamp:
    """(sec, nanosec) in local time of a robot Timestamp (clamped at 0), for CDR writers."""
    nsec = stamp.seconds * NSEC + stamp.nanos - skew_nsec
    return divmod(nsec, NSEC) if nsec > 0 else (0, 0)


def local_nsec(stamp: Timestamp, skew_nsec: int) -> int:
    """Local time (ns, clamped at 0) of a robot Timestamp: ``local_stamp`` as one number."""
    return max(stamp.seconds * NSEC + stamp.nanos - skew_nsec, 0)


def local_time_msg(nsec: int) -> Time:
    """A builtin_interfaces/Time for local time ``nsec`` (clamped at 0)."""
    nsec = max(int(nsec), 0)
    return Time(sec=nsec // NSEC, nanosec=nsec % NSEC)


def robot_stamp_to_msg(stamp: Timestamp, skew_nsec: int) -> Time:
    """The local-time header stamp of a robot Timestamp."""
    return local_time_msg(robot_to_local_nsec(timestamp_to_nsec(stamp), skew_nsec))


def duration_parts(duration: DurationProto) -> Stamp:
    """(sec, nanosec) of a protobuf Duration, nanosec made non-negative as ROS wants."""
    seconds, nanos = duration.seconds, duration.nanos
    return (seconds, nanos) if nanos >= 0 else (seconds - 1, nanos + NSEC)


def duration_msg(duration: DurationProto) -> Duration:
    sec, nanosec = duration_parts(duration)
    return Duration(sec=sec, nanosec=nanosec)


def duration_msg_from_nsec(nsec: int) -> Duration:
    return Duration(sec=int(nsec) // NSEC, nanosec=int(nsec) % NSEC)
