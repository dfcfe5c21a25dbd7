"""A thread that calls a function at a fixed rate (late ticks are dropped, not bunched):
the physics loop, the mission runner; and the ticks that make up a late one's time."""

import logging
import math
import threading
import time
from collections.abc import Callable

from spot_common import crash_log

_LOG = logging.getLogger(__name__)


def catch_up(last_ns: int, now_ns: int, max_tick_s: float,
             max_gap_s: float) -> list[tuple[int, float]]:
    """The ticks (time in ns, length in s) that take a simulation from ``last_ns`` to
    ``now_ns``: equal ticks of at most ``max_tick_s``, so a late tick (the host was busy)
    loses no simulated time. A gap over ``max_gap_s`` is a clock jump, not elapsed time, and
    a backward one is no time at either: one tick of at most ``max_tick_s``."""
    gap = now_ns - last_ns
    if gap <= 0 or gap > max_gap_s * 1e9:
        return [(now_ns, min(max(gap / 1e9, 0.0), max_tick_s))]
    count = math.ceil(gap / (max_tick_s * 1e9))
    return [(last_ns + gap * index // count, gap / count / 1e9) for index in range(1, count + 1)]


class Ticker:
    def __init__(self, name: str, step: Callable[[], None], rate_hz: float) -> None:
        self._name, self._step, self._period = name, step, 1.0 / rate_hz
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    def _run(self) -> None:
        next_time = time.monotonic()
        while not self._stop.is_set():
            try:
                self._step()
            except Exception as exc:  # the loop must survive a bad state; log it loudly
                _LOG.exception("%s: a step failed", self._name)
                crash_log.record(f"{self._name} step", exc)
            next_time += self._period
            delay = next_time - time.monotonic()
            if delay < 0:
                next_time = time.monotonic()
                delay = 0
            self._stop.wait(delay)
