"""The battery: charge drained by time (faster with motors on) and refilled on the dock."""


class Battery:
    def __init__(self, percent: float, runtime_motors_on_sec: float, runtime_idle_sec: float,
                 charge_sec: float) -> None:
        self.percent = percent
        self._runtime_on, self._runtime_idle = runtime_motors_on_sec, runtime_idle_sec
        self._charge_sec = charge_sec

    def _runtime(self, powered: bool) -> float:
        return self._runtime_on if powered else self._runtime_idle

    def step(self, dt: float, powered: bool, charging: bool) -> None:
        charge = 100.0 * dt / self._charge_sec if charging else 0.0
        self.percent = min(100.0, max(0.0, self.percent - 100.0 * dt / self._runtime(powered)
                                      + charge))

    def runtime_sec(self, powered: bool) -> float:
        """Time left at the present drain."""
        return self._runtime(powered) * self.percent / 100.0

    @property
    def empty(self) -> bool:
        return self.percent <= 0.0
