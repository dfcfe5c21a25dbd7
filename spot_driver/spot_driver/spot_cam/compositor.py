"""The Spot CAM's compositor over the SDK's ``CompositorClient``: screens (checked against
the Spot CAM's own list), the IR colour map and the IR meter, checked before anything is
sent."""

import math

from bosdyn.api.spot_cam import compositor_pb2
from bosdyn.client.spot_cam.compositor import CompositorClient

from spot_driver.core.errors import CommandError
from spot_driver.spot_cam.clients import spot_cam_client

ColorMap = compositor_pb2.IrColorMap
COLORMAPS = {"greyscale": ColorMap.COLORMAP_GREYSCALE, "jet": ColorMap.COLORMAP_JET,
             "inferno": ColorMap.COLORMAP_INFERNO, "turbo": ColorMap.COLORMAP_TURBO}
CELSIUS = compositor_pb2.IrMeterOverlay.TempUnit(
    value=compositor_pb2.IrMeterOverlay.TempUnit.TEMPUNIT_CELSIUS)


def check_colormap(name: str, auto_scale: bool, low: float, high: float) -> int:
    """The colour map's enum value; CommandError for an unknown map or a bad scale."""
    colormap = COLORMAPS.get(name)
    if colormap is None:
        raise CommandError(f"unknown IR colormap {name!r}; maps: {', '.join(COLORMAPS)}")
    if not auto_scale and not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise CommandError(f"IR colour scale [{low}, {high}] C is not a range (min_celsius < "
                           "max_celsius)")
    return colormap


def check_meter(x: float, y: float) -> None:
    if not (0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
        raise CommandError(f"IR meter x, y ({x}, {y}) is outside the image ([0, 1] each way)")


class Compositor:
    def __init__(self, connection) -> None:
        self._connection = connection

    def _client(self) -> CompositorClient:
        return spot_cam_client(self._connection, CompositorClient)

    def screens(self) -> tuple[list[str], str]:
        client = self._client()
        return [s.name for s in client.list_screens()], client.get_screen()

    def set_screen(self, name: str) -> None:
        screens = self.screens()[0]
        if name not in screens:
            raise CommandError(f"unknown screen name {name!r}; screens: {', '.join(screens)}")
        self._client().set_screen(name)

    def set_colormap(self, name: str, auto_scale: bool, low: float, high: float) -> None:
        colormap = check_colormap(name, auto_scale, low, high)
        self._client().set_ir_colormap(colormap, low, high, auto_scale)

    def set_meter(self, enable: bool, x: float, y: float) -> None:
        check_meter(x, y)
        self._client().set_ir_meter_overlay(x, y, enable, CELSIUS)
