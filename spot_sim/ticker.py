"""A thread that calls a function at a fixed rate (late ticks are dropped, not bunched):
the physics loop, the mission runner."""

import logging
import threading
import time
from collections.abc import Callable

from spot_sim import crash_log

_LOG = logging.getLogger(__name__)


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
