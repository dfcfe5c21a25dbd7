"""The Spot CAM's switchable power rails: the PTZ, two auxiliary outputs and the external
microphone. A power cycle turns a rail off and back on CYCLE_S later."""

from spot_sim.core.lock_order import LEAF, OrderedLock

RAILS = ("ptz", "aux1", "aux2", "external_mic")
CYCLE_S = 2.0  # ours: no published figure for how long a cycled rail stays off


class PowerRails:
    """Which rails are on, as of a time (a cycled rail comes back on by itself)."""

    def __init__(self) -> None:
        self._lock = OrderedLock("spot_cam power", LEAF)
        self._on = {"ptz": True, "aux1": False, "aux2": False, "external_mic": False}
        self._back_at: dict[str, int] = {}  # rail -> when a power cycle turns it back on

    def _settle(self, now_ns: int) -> None:
        for rail, back_at in list(self._back_at.items()):
            if now_ns >= back_at:
                self._on[rail] = True
                del self._back_at[rail]

    def status(self, now_ns: int) -> dict[str, bool]:
        with self._lock:
            self._settle(now_ns)
            return dict(self._on)

    def is_on(self, rail: str, now_ns: int) -> bool:
        return self.status(now_ns)[rail]

    def set(self, wanted: dict[str, bool], now_ns: int) -> dict[str, bool]:
        """Switch the named rails; returns every rail's state after."""
        with self._lock:
            self._settle(now_ns)
            for rail, on in wanted.items():
                self._on[rail] = on
                self._back_at.pop(rail, None)
            return dict(self._on)

    def cycle(self, rails: list[str], now_ns: int) -> dict[str, bool]:
        """Turn ``rails`` off now and on again CYCLE_S later."""
        with self._lock:
            self._settle(now_ns)
            for rail in rails:
                self._on[rail] = False
                self._back_at[rail] = now_ns + int(CYCLE_S * 1e9)
            return dict(self._on)
