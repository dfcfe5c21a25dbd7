"""The simulated world the robot's cameras and lidar see: a floor, walls and a few boxes.

Everything is axis-aligned in the ``odom`` frame the robot starts in, so one vectorised ray
cast (slab method) answers depth, surface and hit point for every pixel or lidar beam at once.
"""

from dataclasses import dataclass, field

import numpy as np

FLOOR = 0
NOTHING = -1


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in odom: corners ``lo`` and ``hi`` (m), grey shade and RGB colour."""

    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    shade: int
    color: tuple[int, int, int]


def _room(half: float, height: float, thickness: float = 0.2) -> list[Box]:
    wall = dict(shade=175, color=(190, 180, 160))
    return [
        Box((half, -half, 0.0), (half + thickness, half, height), **wall),
        Box((-half - thickness, -half, 0.0), (-half, half, height), **wall),
        Box((-half, half, 0.0), (half, half + thickness, height), **wall),
        Box((-half, -half - thickness, 0.0), (half, -half, height), **wall),
    ]


@dataclass(frozen=True)
class Scene:
    """Static geometry: the floor (z = 0) and boxes. Surface ids: 0 floor, 1.. boxes."""

    boxes: tuple[Box, ...] = field(default_factory=lambda: (
        *_room(6.0, 2.5),
        Box((2.2, 0.4, 0.0), (2.8, 1.0, 0.8), 60, (200, 40, 40)),
        Box((3.0, -1.8, 0.0), (4.0, -1.3, 0.5), 220, (40, 160, 60)),
        Box((-3.0, 1.5, 0.0), (-2.2, 2.5, 1.2), 110, (50, 70, 200)),
        Box((0.5, 3.5, 0.0), (1.5, 4.0, 0.6), 240, (230, 200, 40)),
    ))

    def raycast(self, origin: np.ndarray, directions: np.ndarray,
                max_t: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
        """Nearest hit along ``origin + t * directions`` for each of the (N, 3) directions.

        Returns ``t`` (N,) float32 (``inf`` where nothing is hit within ``max_t``) and the
        surface id (N,) int16 (``NOTHING`` where nothing is hit). ``t`` is in units of each
        direction's length, so directions with unit z in a camera frame give z-depth.
        """
        # Work on one contiguous array per axis: numpy is slow on (N, 3) arrays.
        d = np.ascontiguousarray(np.asarray(directions, dtype=np.float32).T)
        o = np.asarray(origin, dtype=np.float32)
        d[np.abs(d) < 1e-9] = np.float32(1e-9)
        inv = np.float32(1.0) / d
        n = d.shape[1]
        best = np.full(n, np.inf, dtype=np.float32)
        surface = np.full(n, NOTHING, dtype=np.int16)
        t_floor = -o[2] * inv[2]
        hit = (t_floor > 0) & (t_floor < max_t)
        best[hit] = t_floor[hit]
        surface[hit] = FLOOR
        near = np.empty(n, np.float32)
        far = np.empty(n, np.float32)
        t1 = np.empty(n, np.float32)
        t2 = np.empty(n, np.float32)
        for index, box in enumerate(self.boxes, start=1):
            near.fill(-np.inf)
            far.fill(np.inf)
            for axis in range(3):
                np.multiply(inv[axis], np.float32(box.lo[axis] - o[axis]), out=t1)
                np.multiply(inv[axis], np.float32(box.hi[axis] - o[axis]), out=t2)
                np.maximum(near, np.minimum(t1, t2), out=near)
                np.minimum(far, np.maximum(t1, t2), out=far)
            hit = (near <= far) & (near > 0) & (near < best)
            best[hit] = near[hit]
            surface[hit] = index
        best[best >= max_t] = np.inf
        surface[~np.isfinite(best)] = NOTHING
        return best, surface

    def shade(self, surface: np.ndarray, points: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Greyscale (N,) uint8 appearance: a checkered floor, striped walls, solid boxes."""
        table = np.array([0] + [b.shade for b in self.boxes], dtype=np.float32)
        grey = table[np.clip(surface, 0, None)]
        checker = (np.floor(points[:, 0] * 2) + np.floor(points[:, 1] * 2)) % 2
        floor = surface == FLOOR
        grey[floor] = 95 + 50 * checker[floor]
        stripes = (np.floor(points[:, 2] * 4) % 2) * 25
        grey[surface > 0] -= stripes[surface > 0]
        grey *= 1.0 / (1.0 + 0.04 * np.nan_to_num(t, posinf=0.0))
        grey[surface == NOTHING] = 30
        return np.clip(grey, 0, 255).astype(np.uint8)

    def colorize(self, surface: np.ndarray, grey: np.ndarray) -> np.ndarray:
        """RGB (N, 3) uint8: each surface's colour modulated by its grey shading."""
        palette = np.array([(160, 160, 150)] + [b.color for b in self.boxes], dtype=np.float32)
        base = palette[np.clip(surface, 0, None)]
        rgb = base * (grey[:, None].astype(np.float32) / 160.0)
        return np.clip(rgb, 0, 255).astype(np.uint8)
