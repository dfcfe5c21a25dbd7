"""The Spot CAM's health: its thermometers, built-in-test (BIT) fault events and
degradations, and its system log.

Readings are plausible payload temperatures [ours], warmer while the PTZ is powered; a PTZ
rail switched off is reported as a PTZ degradation, as the API describes a unit without a
working mechanical PTZ. The system log is the payload's events as text (a robot's is
encrypted; the SDK's program only writes it to a file).
"""


from bosdyn.api.spot_cam import health_pb2

from spot_sim.core.lock_order import LEAF, OrderedLock

Degradation = health_pb2.GetBITStatusResponse.Degradation
AMBIENT_C = 30.0
CHANNELS = {"cpu": 18.0, "board": 8.0, "ptz": 12.0, "ir": 5.0}  # degrees C above ambient


class Health:
    """Thermometers, BIT events and the system log of one Spot CAM."""

    def __init__(self) -> None:
        self._lock = OrderedLock("spot_cam health", LEAF)
        self._events: list[tuple[int, str, str]] = []  # (time ns, name, description)
        self._log: list[str] = []

    def temperatures(self, ptz_on: bool) -> dict[str, float]:
        """Each channel's temperature in degrees C."""
        return {name: AMBIENT_C + rise * (1.0 if ptz_on or name != "ptz" else 0.2)
                for name, rise in CHANNELS.items()}

    def report(self, now_ns: int, name: str, description: str) -> None:
        """Record a fault event (a BIT event and a system log line)."""
        with self._lock:
            self._events.append((now_ns, name, description))
            self._log.append(f"{now_ns / 1e9:.3f} {name}: {description}")

    def note(self, now_ns: int, line: str) -> None:
        with self._lock:
            self._log.append(f"{now_ns / 1e9:.3f} {line}")

    def events(self) -> list[tuple[int, str, str]]:
        with self._lock:
            return list(self._events)

    def clear_events(self) -> None:
        with self._lock:
            self._events.clear()

    @staticmethod
    def degradations(ptz_on: bool) -> list[tuple[int, str]]:
        return [] if ptz_on else [(Degradation.PTZ, "the PTZ is powered off")]

    def system_log(self) -> str:
        with self._lock:
            return "\n".join(self._log) + "\n"
