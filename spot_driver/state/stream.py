"""Robot state requested at a fixed rate on the acquisition scheduler (not an executor timer),
with several requests in flight, so the state rate holds while the executors are busy and
over a link whose round trip is longer than the period (Wi-Fi: tens of milliseconds)."""

from collections.abc import Callable

from spot_driver.acquisition import Stream
from spot_driver.connection import RobotConnection

OUT_OF_ORDER_NSEC = 1_000_000_000
# Requests in flight: at 50 Hz, 4 cover round trips up to 80 ms (with 2, a simulated Wi-Fi
# link of 8-55 ms round trips delivered 31-36 Hz of 50).
MAX_IN_FLIGHT = 4


class RobotStateStream(Stream):
    """Robot state at a fixed rate; responses older than one already handled are dropped."""

    name = "robot_state"
    max_rate = 500.0

    def __init__(self, rate_hz: float, connection: RobotConnection,
                 on_state: Callable[[object], None],
                 report: Callable[[str], None] | None = None) -> None:
        super().__init__(rate_hz, max_in_flight=MAX_IN_FLIGHT, report=report)
        self._connection = connection
        self._on_state = on_state
        self._newest = -1
        self._timeout = max(0.5, 5.0 / rate_hz)

    def wanted(self) -> bool:
        return self._connection.connected  # the supervisor reconnects; diagnostics say why

    def fetch(self):
        return self._connection.state_client.get_robot_state(timeout=self._timeout)

    def handle(self, state) -> None:
        stamp = state.kinematic_state.acquisition_timestamp
        nsec = stamp.seconds * 1_000_000_000 + stamp.nanos
        if self._newest - OUT_OF_ORDER_NSEC < nsec < self._newest:
            return  # overtaken by a newer response (a larger step back is a new robot clock)
        self._newest = nsec
        self._on_state(state)
        self.stats.delivered += 1
