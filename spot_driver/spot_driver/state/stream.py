"""Robot state requested at a fixed rate on the acquisition scheduler (not an executor timer),
with several requests in flight, so the state rate holds while the executors are busy and
over a link whose round trip is longer than the period (Wi-Fi: tens of milliseconds)."""

import math
from collections.abc import Callable

from spot_common import stage_stamps
from spot_driver.core.acquisition import DEFAULT_MAX_IN_FLIGHT, Stream
from spot_driver.core.connection import RobotConnection

OUT_OF_ORDER_NSEC = 1_000_000_000


class RobotStateStream(Stream):
    """Robot state at a fixed rate; responses older than one already handled are dropped."""

    name = "robot_state"
    max_rate = 500.0

    def __init__(self, rate_hz: float, connection: RobotConnection,
                 on_state: Callable[[object], None],
                 report: Callable[[str], None] | None = None,
                 max_in_flight: int = DEFAULT_MAX_IN_FLIGHT) -> None:
        super().__init__(rate_hz, max_in_flight=max_in_flight, report=report)
        self._connection = connection
        self._on_state = on_state
        self._newest = -1
        self._timeout = max(0.5, 5.0 / rate_hz)

    def wanted(self) -> bool:
        return self._connection.connected  # the supervisor reconnects; diagnostics say why

    def fetch(self):
        state = self._connection.state_client.get_robot_state(timeout=self._timeout)
        if stage_stamps.ENABLED:
            velocity = state.kinematic_state.velocity_of_body_in_odom.linear
            stage_stamps.stamp("state_received", math.hypot(velocity.x, velocity.y))
        return state

    def handle(self, state) -> None:
        stamp = state.kinematic_state.acquisition_timestamp
        nsec = stamp.seconds * 1_000_000_000 + stamp.nanos
        if self._newest - OUT_OF_ORDER_NSEC < nsec < self._newest:
            self.stats.overtaken += 1  # a larger step back is a new robot clock
            return
        self._newest = nsec
        self._on_state(state)
        self.stats.delivered += 1
