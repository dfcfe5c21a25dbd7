"""The simulated world the robot's cameras and lidar see: a floor, walls and a few boxes.

Everything is axis-aligned in the ``odom`` frame the robot starts in, so one vectorised ray
cast (slab method) answers depth, surface and hit point for every pixel or lidar beam at once.
"""

from dataclasses import dataclass, field

import numpy as np

FLOOR = 0
NOTHING = -1  # negative, as the arm's contact geometry reads it (body/arm/contact.py)
FLOOR_C = 19.0  # a room's floor, a little below the air
SKY_C = -10.0  # what a thermal camera reads looking out of the open-topped room


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in odom: corners ``lo`` and ``hi`` (m), grey shade, RGB colour and
    surface temperature (degrees C, as a thermal camera sees it)."""

    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    shade: int
    color: tuple[int, int, int]
    temperature_c: float = 21.0


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
        Box((2.2, 0.4, 0.0), (2.8, 1.0, 0.8), 60, (200, 40, 40), temperature_c=65.0),
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
        d = np.array(np.asarray(directions, dtype=np.float32).T, order="C")
        o = np.asarray(origin, dtype=np.float32)
        best, surface, inv = self._floor(o, d, max_t)
        for index, box in enumerate(self.boxes, start=1):
            _hit_box(box, index, o, inv, best, surface)
        return _beyond(best, surface, max_t)

    def raycast_grid(self, origin: np.ndarray, rotation: np.ndarray, xs: np.ndarray,
                     ys: np.ndarray, max_t: float = np.inf
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A pinhole camera's rays: pixel (row, col) looks along (xs[col], ys[row], 1) in the
        camera frame, which ``rotation`` (3x3, camera -> odom) turns into odom at ``origin``.

        The same hits as :meth:`raycast`, faster: each box is tested only on the pixels its
        projection can cover. ``xs`` and ``ys`` must increase. Returns ``t`` (rows, cols)
        float32 (z-depth, ``inf`` for no hit), the surface ids (rows, cols) int16 and the odom
        directions (3, rows, cols) float32.
        """
        rot = np.asarray(rotation, dtype=np.float32)
        xs = np.asarray(xs, dtype=np.float32)
        ys = np.asarray(ys, dtype=np.float32)
        o = np.asarray(origin, dtype=np.float32)
        d = rot[:, 0, None, None] * xs[None, None, :] + (
            rot[:, 1, None, None] * ys[None, :, None] + rot[:, 2, None, None])
        best, surface, inv = self._floor(o, d, max_t)
        for index, box in enumerate(self.boxes, start=1):
            window = _window(box, o, rot, xs, ys)
            if window is not None:
                rows, cols = window
                _hit_box(box, index, o, inv[:, rows, cols], best[rows, cols],
                         surface[rows, cols])
        best, surface = _beyond(best, surface, max_t)
        return best, surface, d

    @staticmethod
    def _floor(o: np.ndarray, d: np.ndarray, max_t: float):
        """Hits of the floor (z = 0) for per-axis directions ``d`` (3, ...), and the inverses
        of ``d`` (a zero component's as if it were 1e-9).

        Here and below, masks select by arithmetic (a bool times a number), not by indexing
        or ``np.where``: on numpy's portable builds those take 30 times as long."""
        inv = np.float32(1.0) / (d + (d == 0) * np.float32(1e-9))
        t_floor = -o[2] * inv[2]
        missed = (t_floor <= 0) | (t_floor >= max_t)
        best = np.maximum(t_floor, missed * _FAR)
        surface = missed * np.int16(NOTHING)  # FLOOR (0) where hit
        return best, surface.astype(np.int16), inv

    def shade(self, surface: np.ndarray, origin: np.ndarray, directions: np.ndarray,
              t: np.ndarray) -> np.ndarray:
        """Greyscale (N,) uint8 appearance of the hits at ``origin + t * directions``
        (``directions`` (3, N), one row per odom axis): a checkered floor, striped walls,
        solid boxes, darker with distance."""
        o = np.asarray(origin, dtype=np.float64)  # hit points in float64: cell edges exact
        reach = np.minimum(t, _FAR) * (surface != NOTHING)  # 0 where nothing is hit
        cells = (np.floor(((directions[0] * reach) + o[0]) * 2)
                 + np.floor(((directions[1] * reach) + o[1]) * 2))
        bands = np.floor(((directions[2] * reach) + o[2]) * 4)
        table = np.array([30, 95] + [b.shade for b in self.boxes], dtype=np.float32)
        grey = np.take(table, surface + 1)
        grey += ((surface == FLOOR) * _odd(cells) * 50).astype(np.float32)
        grey -= ((surface > 0) * _odd(bands) * 25).astype(np.float32)
        grey /= reach * np.float32(0.04) + np.float32(1)
        return np.clip(grey, 0, 255).astype(np.uint8)

    def temperatures(self, surface: np.ndarray) -> np.ndarray:
        """Degrees C (N,) float32 of each hit surface; open sky reads SKY_C."""
        table = np.array([FLOOR_C] + [b.temperature_c for b in self.boxes], dtype=np.float32)
        return np.where(surface == NOTHING, np.float32(SKY_C), table[np.clip(surface, 0, None)])

    def colorize(self, surface: np.ndarray, grey: np.ndarray) -> np.ndarray:
        """RGB (N, 3) uint8: each surface's colour modulated by its grey shading."""
        palette = np.array([(160, 160, 150)] + [b.color for b in self.boxes], dtype=np.float32)
        base = palette[np.clip(surface, 0, None)]
        rgb = base * (grey[:, None].astype(np.float32) / 160.0)
        return np.clip(rgb, 0, 255).astype(np.uint8)


_FAR = np.float32(3e38)  # beyond any max_t: a miss until _beyond makes it inf
_NEAR = 1e-4  # m: hits closer to a camera than this are not looked for by raycast_grid
_EDGES = [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1]


def _odd(whole: np.ndarray) -> np.ndarray:
    """1 where the whole numbers ``whole`` are odd, 0 where even."""
    return whole - 2 * np.floor(whole * 0.5)


def _hit_box(box: Box, index: int, o: np.ndarray, inv: np.ndarray, best: np.ndarray,
             surface: np.ndarray) -> None:
    """Slab test of one box; where it is nearer than ``best``, write it there (in place)."""
    t1 = inv[0] * np.float32(box.lo[0] - o[0])
    t2 = inv[0] * np.float32(box.hi[0] - o[0])
    near, far = np.minimum(t1, t2), np.maximum(t1, t2)
    for axis in (1, 2):
        np.multiply(inv[axis], np.float32(box.lo[axis] - o[axis]), out=t1)
        np.multiply(inv[axis], np.float32(box.hi[axis] - o[axis]), out=t2)
        np.maximum(near, np.minimum(t1, t2), out=near)
        np.minimum(far, np.maximum(t1, t2), out=far)
    np.maximum(near, ((near > far) | (near <= 0)) * _FAR, out=near)
    nearer = near < best
    np.minimum(best, near, out=best)
    surface += nearer * (np.int16(index) - surface)


def _beyond(best: np.ndarray, surface: np.ndarray, max_t: float):
    """``inf`` and ``NOTHING`` where the nearest hit is at ``max_t`` or farther."""
    beyond = best >= max_t
    with np.errstate(divide="ignore"):
        best = best / ~beyond  # inf where beyond: every t here is positive
    return best, (surface - beyond * (surface - np.int16(NOTHING))).astype(np.int16)


def _window(box: Box, o: np.ndarray, rot: np.ndarray, xs: np.ndarray,
            ys: np.ndarray) -> tuple[slice, slice] | None:
    """Rows and columns of a pinhole grid the box can cover (None: none): the bounds of the
    box's corners and its edges' crossings of the near plane, projected."""
    corners = np.array([[(box.lo, box.hi)[(i >> axis) & 1][axis] for axis in range(3)]
                        for i in range(8)], dtype=np.float64)
    cam = (corners - o) @ rot.astype(np.float64)
    z = cam[:, 2]
    points = [cam[z > _NEAR]]
    for a, b in _EDGES:
        if (z[a] - _NEAR) * (z[b] - _NEAR) < 0:
            f = (_NEAR - z[a]) / (z[b] - z[a])
            points.append((cam[a] + f * (cam[b] - cam[a]))[None])
    visible = np.concatenate(points)
    if not len(visible):
        return None
    x = visible[:, 0] / visible[:, 2]
    y = visible[:, 1] / visible[:, 2]
    c0 = max(int(np.searchsorted(xs, x.min())) - 1, 0)
    c1 = min(int(np.searchsorted(xs, x.max(), side="right")) + 1, len(xs))
    r0 = max(int(np.searchsorted(ys, y.min())) - 1, 0)
    r1 = min(int(np.searchsorted(ys, y.max(), side="right")) + 1, len(ys))
    if c0 >= c1 or r0 >= r1:
        return None
    return slice(r0, r1), slice(c0, c1)
