"""The Spot CAM's compositor: the screen layout its video stream shows, the IR colour map
(also used for IR images in the media log) and the IR meter overlay.

Screen names are ours, modelled on the Spot CAM's (a panorama with a PTZ inset, full-screen
views of each camera, PTZ beside IR); the stream is 1920x1080.
"""

import math

import numpy as np
from bosdyn.api.spot_cam import compositor_pb2

from spot_sim.core.lock_order import LEAF, OrderedLock

ColorMap = compositor_pb2.IrColorMap
Overlay = compositor_pb2.IrMeterOverlay
STREAM = (1920, 1080)
_W, _H = STREAM
SCREENS: dict[str, tuple[tuple[str, tuple[int, int, int, int]], ...]] = {
    "pano_full": (("pano", (0, 0, _W, _H)),),
    "mech": (("pano", (0, 0, _W, _H // 3)), ("ptz", (0, _H // 3, _W, _H - _H // 3))),
    "mech_full": (("ptz", (0, 0, _W, _H)),),
    "ir": (("ir", (0, 0, _W, _H)),),
    "mech_ir": (("ptz", (0, 0, _W // 2, _H)), ("ir", (_W // 2, 0, _W // 2, _H))),
    **{f"c{i}": ((f"c{i}", (0, 0, _W, _H)),) for i in range(5)},
}
# Control points (0..1 -> RGB) of the colour maps, sampled from their usual definitions.
_MAPS = {
    ColorMap.COLORMAP_GREYSCALE: ((0, 0, 0), (255, 255, 255)),
    ColorMap.COLORMAP_JET: ((0, 0, 128), (0, 0, 255), (0, 255, 255), (255, 255, 0),
                            (255, 0, 0), (128, 0, 0)),
    ColorMap.COLORMAP_INFERNO: ((0, 0, 4), (87, 16, 110), (188, 55, 84), (249, 142, 9),
                                (252, 255, 164)),
    ColorMap.COLORMAP_TURBO: ((48, 18, 59), (70, 134, 251), (27, 229, 181), (164, 252, 60),
                              (251, 185, 56), (228, 70, 11), (122, 4, 3)),
}


class CompositorError(ValueError):
    """A setting the compositor refuses: unknown screen, colour map or a bad range."""


def colorize(celsius: np.ndarray, colormap: ColorMap) -> np.ndarray:
    """Temperatures (rows, cols) as RGB (rows, cols, 3) uint8 through ``colormap``."""
    if colormap.auto_scale.value or not colormap.HasField("scale"):
        low, high = float(np.min(celsius)), float(np.max(celsius))
    else:
        low, high = colormap.scale.min, colormap.scale.max
    level = np.clip((celsius - low) / max(high - low, 1e-6), 0.0, 1.0)
    points = np.array(_MAPS[colormap.colormap], dtype=np.float32)
    stops = np.linspace(0.0, 1.0, len(points))
    rgb = [np.interp(level, stops, points[:, channel]) for channel in range(3)]
    return np.stack(rgb, axis=-1).astype(np.uint8)


def _check_colormap(colormap: ColorMap) -> None:
    if colormap.colormap not in _MAPS:
        raise CompositorError(f"unknown IR colour map {colormap.colormap}")
    if colormap.HasField("scale") and not colormap.auto_scale.value:
        low, high = colormap.scale.min, colormap.scale.max
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise CompositorError(f"IR colour scale [{low}, {high}] is not a range")


def _check_overlay(overlay: Overlay) -> None:
    for point in overlay.meter:
        if not (0.0 <= point.x <= 1.0 and 0.0 <= point.y <= 1.0):
            raise CompositorError(f"IR meter at ({point.x}, {point.y}) is outside the "
                                  "image (coordinates are normalized to [0, 1])")
    for pair in overlay.delta:
        if not (0 <= pair.a < len(overlay.meter) and 0 <= pair.b < len(overlay.meter)):
            raise CompositorError(f"IR meter delta ({pair.a}, {pair.b}) names a meter "
                                  "that is not set")


class Compositor:
    """The screen in use, the IR colour map and the meter overlay."""

    def __init__(self) -> None:
        self._lock = OrderedLock("spot_cam compositor", LEAF)
        self._screen = "mech"
        self._colormap = ColorMap(colormap=ColorMap.COLORMAP_JET)
        self._colormap.auto_scale.value = True
        self._overlay = Overlay()

    def set_screen(self, name: str) -> None:
        if name not in SCREENS:
            raise CompositorError(f"unknown screen {name!r}; screens: {sorted(SCREENS)}")
        with self._lock:
            self._screen = name

    def screen(self) -> str:
        with self._lock:
            return self._screen

    def visible(self) -> tuple[tuple[str, tuple[int, int, int, int]], ...]:
        """The cameras of the screen in use with their windows (x, y, width, height)."""
        with self._lock:
            return SCREENS[self._screen]

    def set_colormap(self, colormap: ColorMap) -> None:
        _check_colormap(colormap)
        with self._lock:
            self._colormap = ColorMap()
            self._colormap.CopyFrom(colormap)

    def colormap(self) -> ColorMap:
        with self._lock:
            copy = ColorMap()
            copy.CopyFrom(self._colormap)
            return copy

    def set_overlay(self, overlay: Overlay) -> None:
        _check_overlay(overlay)
        with self._lock:
            self._overlay = Overlay()
            self._overlay.CopyFrom(overlay)

    def overlay(self) -> Overlay:
        with self._lock:
            copy = Overlay()
            copy.CopyFrom(self._overlay)
            return copy

