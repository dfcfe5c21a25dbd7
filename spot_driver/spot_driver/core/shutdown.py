"""SIGINT/SIGTERM as a request to shut down in order, never as an exception mid-cleanup.

``ros2 launch`` without a terminal forwards SIGINT to each node, so a node that gets a SIGINT
from its process group too sees two (systemd, containers, scripts). rclpy's own handler and
Python's default (``KeyboardInterrupt``) would end the process wherever it is, possibly in
the middle of returning the lease. ``ShutdownRequest`` records the first signal and ignores
the rest; the main thread then stops streams, the robot and the lease, in that order.
"""

import signal
import threading
from collections.abc import Callable

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class ShutdownRequest:
    """Set by the first SIGINT/SIGTERM (or by ``request()``); later signals are ignored."""

    def __init__(self, on_repeat: Callable[[str], None] | None = None) -> None:
        self._event = threading.Event()
        self._on_repeat = on_repeat or (lambda name: None)
        self.signal_name = ""

    def install(self) -> None:
        """Take over SIGINT and SIGTERM; call from the main thread."""
        for sig in SIGNALS:
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame) -> None:
        name = signal.Signals(signum).name
        if self._event.is_set():
            self._on_repeat(name)
            return
        self.signal_name = name
        self._event.set()

    def ignore_further(self) -> None:
        """Ignore SIGINT/SIGTERM from now on: at interpreter exit Python resets its handlers to
        the default, so a signal arriving then (launch forwards one after the group got it)
        would kill the process with status -2 after a clean shutdown."""
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)

    def request(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)
