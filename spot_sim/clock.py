"""The robot's clock: host time plus a deliberate offset, so clients must time-sync."""

import threading
import time

from google.protobuf.timestamp_pb2 import Timestamp


class RobotClock:
    """Robot time in nanoseconds, offset from the host clock by ``offset_sec``."""

    def __init__(self, offset_sec: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._offset_ns = round(offset_sec * 1e9)

    @property
    def offset_sec(self) -> float:
        with self._lock:
            return self._offset_ns / 1e9

    def jump(self, delta_sec: float) -> None:
        """Move the robot clock by ``delta_sec`` (a clock jump, as after an NTP step)."""
        with self._lock:
            self._offset_ns += round(delta_sec * 1e9)

    def now_nsec(self) -> int:
        with self._lock:
            return time.time_ns() + self._offset_ns

    def now_sec(self) -> float:
        return self.now_nsec() / 1e9

    def timestamp(self, nsec: int | None = None) -> Timestamp:
        """A Timestamp proto of robot time ``nsec`` (default: now)."""
        nsec = self.now_nsec() if nsec is None else nsec
        return Timestamp(seconds=nsec // 1_000_000_000, nanos=nsec % 1_000_000_000)


def timestamp_to_nsec(stamp: Timestamp) -> int:
    return stamp.seconds * 1_000_000_000 + stamp.nanos
