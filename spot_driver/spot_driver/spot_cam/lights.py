"""The Spot CAM's four LEDs over the SDK's ``LightingClient``: a request names LEDs by index
and is checked whole (indices 0-3, brightness in [0, 1]) before anything is sent."""

import math

from bosdyn.client.spot_cam.lighting import LightingClient

from spot_driver.core.errors import CommandError
from spot_driver.spot_cam.clients import spot_cam_client

LED_COUNT = 4  # the API's: "LED located at indices [0, 3]"


def check_brightness(leds: list[int], brightness: list[float]) -> dict[int, float]:
    """``{led: brightness}``; CommandError unless every entry is a real LED and level."""
    if len(leds) != len(brightness):
        raise CommandError(f"{len(leds)} leds but {len(brightness)} brightness values")
    wanted: dict[int, float] = {}
    for led, level in zip(leds, brightness, strict=True):
        if not 0 <= led < LED_COUNT:
            raise CommandError(f"LED {led} does not exist (indices 0-{LED_COUNT - 1})")
        if not (math.isfinite(level) and 0.0 <= level <= 1.0):
            raise CommandError(f"LED {led} brightness {level} is outside [0, 1]")
        wanted[led] = float(level)
    return wanted


class Lights:
    def __init__(self, connection) -> None:
        self._connection = connection

    def _client(self) -> LightingClient:
        return spot_cam_client(self._connection, LightingClient)

    def set(self, leds: list[int], brightness: list[float]) -> list[float]:
        """Set the named LEDs (none: only read); returns every LED's brightness after."""
        wanted = check_brightness(leds, brightness)
        client = self._client()
        levels = list(client.get_led_brightness())
        if wanted:
            # The SDK's set_led_brightness takes every LED's level, from LED 0: the others
            # are sent as they were read.
            client.set_led_brightness([wanted.get(i, level) for i, level in enumerate(levels)])
            levels = list(client.get_led_brightness())
        return levels
