"""The robot's clock: host time plus a deliberate offset (and, in the field profile, a rate
error), so clients must time-sync."""

import time

from google.protobuf.timestamp_pb2 import Timestamp

from spot_sim.core.lock_order import INNERMOST, OrderedLock


class RobotClock:
    """Robot time in nanoseconds: the host clock plus ``offset_sec``, running ``drift_ppm``
    parts per million fast (a crystal's rate error: 50 ppm is 3 ms a minute)."""

    def __init__(self, offset_sec: float = 0.0, drift_ppm: float = 0.0) -> None:
        self._lock = OrderedLock("clock", INNERMOST)
        self._offset_ns = round(offset_sec * 1e9)
        self._drift = drift_ppm * 1e-6
        self._origin_ns = time.time_ns()

    @property
    def offset_sec(self) -> float:
        with self._lock:
            return self._offset_ns / 1e9

    def jump(self, delta_sec: float) -> None:
        """Move the robot clock by ``delta_sec`` (a clock jump, as after an NTP step)."""
        with self._lock:
            self._offset_ns += round(delta_sec * 1e9)

    def now_nsec(self) -> int:
        host = time.time_ns()
        with self._lock:
            if self._drift:
                return host + self._offset_ns + round((host - self._origin_ns) * self._drift)
            return host + self._offset_ns

    def now_sec(self) -> float:
        return self.now_nsec() / 1e9

    def timestamp(self, nsec: int | None = None) -> Timestamp:
        """A Timestamp proto of robot time ``nsec`` (default: now)."""
        nsec = self.now_nsec() if nsec is None else nsec
        return Timestamp(seconds=nsec // 1_000_000_000, nanos=nsec % 1_000_000_000)


def timestamp_to_nsec(stamp: Timestamp) -> int:
    return stamp.seconds * 1_000_000_000 + stamp.nanos
