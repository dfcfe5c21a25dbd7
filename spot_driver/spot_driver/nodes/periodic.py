"""Periodic work of a node on a thread of its own, not on an executor timer.

An executor timer wakes its executor, and every wake rebuilds the wait set of all the entities
of the executor's nodes in Python (hundreds of services and publisher events): two or three
rebuilds per firing, about a millisecond each. The driver's status polls tick at 1-5 Hz in a
dozen nodes, so on timers they cost the executors more than the polls themselves. Each such
poll already ran in a callback group of its own (concurrent with everything but itself), so a
thread of its own changes nothing else.
"""

import threading
import time
from collections.abc import Callable

from spot_driver.core.errors import describe


class Periodic:
    """Calls ``callback()`` every ``period_s`` until ``stop()``; a late call is not made up
    (no bursts: calls at least half a period apart), and an exception goes to ``report`` and
    the ticking goes on."""

    def __init__(self, name: str, period_s: float, callback: Callable[[], None],
                 report: Callable[[str], None]) -> None:
        if not period_s > 0:
            raise ValueError(f"{name}: period must be above 0 s, not {period_s}")
        self.name, self.period = name, period_s
        self._callback, self._report = callback, report
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> "Periodic":
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        due = time.monotonic() + self.period
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            try:
                self._callback()
            except Exception as exc:
                self._report(f"{self.name}: {describe(exc)}")
            due += self.period
            now = time.monotonic()
            # late by half a period or more (a slow call, a busy host): the next call one
            # period from now, so no two calls come closer than half a period
            if due < now + self.period / 2:
                due = now + self.period


class PeriodicWork:
    """Mixin for a node (before ``Node`` in its bases): ``self.every(period, callback)``;
    ``stop_streaming()`` (called by the driver before it stops the executors) and
    ``destroy_node()`` stop them."""

    def every(self, period_s: float, callback: Callable[[], None], name: str = "") -> Periodic:
        if not hasattr(self, "_periodic"):
            self._periodic: list[Periodic] = []
        logger = self.get_logger()
        periodic = Periodic(name or f"{self.get_name()}-{callback.__name__}", period_s,
                            callback, lambda message: logger.error(message,
                                                                   throttle_duration_sec=5.0))
        self._periodic.append(periodic.start())
        return periodic

    def stop_streaming(self) -> None:
        for periodic in getattr(self, "_periodic", ()):
            periodic.stop()

    def destroy_node(self) -> None:
        self.stop_streaming()
        super().destroy_node()
