"""The Spot CAM's LEDs: four lights, each with a brightness from 0 (off) to 1 (full)."""

import math

from spot_sim.core.lock_order import LEAF, OrderedLock

LED_COUNT = 4


class LightsError(ValueError):
    """A brightness the Spot CAM refuses: an LED it lacks, or a value outside [0, 1]."""


class Lights:
    """The brightness of each LED; a request changes all it names or none."""

    def __init__(self) -> None:
        self._lock = OrderedLock("spot_cam lights", LEAF)
        self._brightness = [0.0] * LED_COUNT

    def set(self, brightnesses: dict[int, float]) -> None:
        for index, value in brightnesses.items():
            if not 0 <= index < LED_COUNT:
                raise LightsError(f"LED {index} does not exist (the Spot CAM has "
                                  f"{LED_COUNT}: 0-{LED_COUNT - 1})")
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise LightsError(f"LED {index} brightness {value} is outside [0, 1]")
        with self._lock:
            for index, value in brightnesses.items():
                self._brightness[index] = float(value)

    def get(self) -> list[float]:
        with self._lock:
            return list(self._brightness)
