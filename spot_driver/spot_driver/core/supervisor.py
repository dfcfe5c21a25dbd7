"""Keeps the robot session alive: heartbeat, loss detection and reconnection with backoff.

A thread (not an executor callback, so it never competes with ROS work) sends a heartbeat
every ``period`` seconds. When no heartbeat has succeeded for ``link_timeout`` seconds, or the
session is broken (robot rebooted, user token rejected, robot clock jumped), the connection is
marked down and rebuilt: authenticate, time-sync, e-stop endpoint, lease. Retries back off
from ``min_backoff`` to ``max_backoff`` seconds. Nothing here ever ends the process.
"""

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from bosdyn.client.exceptions import UnauthenticatedError

from spot_driver.core.connection import RobotConnection, RobotConnectionError, SessionBrokenError
from spot_driver.core.errors import NotConnectedError, describe

_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class SupervisorConfig:
    period: float = 0.5  # heartbeat period while connected, s
    link_timeout: float = 1.5  # no successful heartbeat for this long: link lost, s
    min_backoff: float = 0.25  # first retry delay after a loss, s
    max_backoff: float = 1.0  # retry delay cap, s
    connect_timeout: float = 3.0  # per reconnection attempt, s

    def __post_init__(self) -> None:
        if not (0 < self.period < self.link_timeout and 0 < self.min_backoff <= self.max_backoff
                and self.connect_timeout > 0):
            raise ValueError("supervisor: need 0 < heartbeat_period < link_timeout, "
                             "0 < reconnect backoffs (min <= max) and connect_timeout > 0")


class ConnectionSupervisor:
    """Watches one ``RobotConnection`` and reconnects it whenever it breaks."""

    def __init__(self, connection: RobotConnection, config: SupervisorConfig = SupervisorConfig(),
                 log: Callable[[int, str], None] | None = None,
                 on_reconnect: Callable[[], None] | None = None) -> None:
        self._connection = connection
        self.config = config
        self._log = log or (lambda level, message: _LOG.log(level, message))
        self._on_reconnect = on_reconnect or (lambda: None)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="spot-connection-supervisor",
                                        daemon=True)
        self.last_heartbeat_ok = time.monotonic()
        self.heartbeat_rtt = 0.0
        self.outages: list[float] = []  # seconds each finished outage lasted

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (also before ``start``: a driver whose nodes failed to start)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def _run(self) -> None:
        delay = 0.0
        backoff = self.config.min_backoff
        while not self._stop.wait(delay):
            if self._connection.connected:
                delay = self._beat()
                backoff = self.config.min_backoff
            else:
                delay = self._try_reconnect(backoff)
                backoff = min(2 * backoff, self.config.max_backoff) if delay else \
                    self.config.min_backoff

    def _beat(self) -> float:
        """One heartbeat; returns the delay before the next step."""
        started = time.monotonic()
        try:
            self._connection.heartbeat(timeout=self.config.link_timeout)
        except SessionBrokenError as exc:
            self._connection.mark_down(str(exc))
            return 0.0
        except UnauthenticatedError:
            self._connection.mark_down("the robot rejected the user token (robot rebooted?)")
            return 0.0
        except NotConnectedError:
            return 0.0
        except Exception as exc:
            silent = time.monotonic() - self.last_heartbeat_ok
            if silent >= self.config.link_timeout:
                self._connection.mark_down(f"no answer for {silent:.1f} s ({describe(exc)})")
                return 0.0
            return min(self.config.period, 0.25)
        now = time.monotonic()
        self.last_heartbeat_ok, self.heartbeat_rtt = now, now - started
        return max(0.0, self.config.period - (now - started))

    def _try_reconnect(self, backoff: float) -> float:
        """One reconnection attempt; returns 0 on success, else the delay before the next."""
        _, reason, down_for = self._connection.status()
        try:
            self._connection.reconnect(self.config.connect_timeout)
        except Exception as exc:
            message = str(exc) if isinstance(exc, RobotConnectionError) else describe(exc)
            self._log(logging.DEBUG, f"reconnect failed: {message}")
            return backoff
        self.outages.append(down_for)
        self.last_heartbeat_ok = time.monotonic()
        self._log(logging.INFO, f"reconnected to the robot after {down_for:.1f} s ({reason})")
        try:
            self._on_reconnect()
        except Exception as exc:  # a node's hook must not stop supervision
            self._log(logging.ERROR, f"after reconnecting: {describe(exc)}")
        return 0.0
