"""The simulated cameras' and lidar's renderer as it was before the render pool (cc0b485's
``perception/scene.py`` and ``perception/sensors.py``, reduced to what a render needs): the
oracle that ``test_perception_render_sim.py`` holds the faster renderer to. Frozen on
purpose: not shared with the simulator, so a change there cannot change the oracle.
"""

import numpy as np

NOTHING, FLOOR = -1, 0
_NEAR = 1e-4
_EDGES = [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1]


def _floor(o, d, max_t):
    d[np.abs(d) < 1e-9] = np.float32(1e-9)
    inv = np.float32(1.0) / d
    best = np.full(d.shape[1:], np.inf, dtype=np.float32)
    surface = np.full(d.shape[1:], NOTHING, dtype=np.int16)
    t_floor = -o[2] * inv[2]
    hit = (t_floor > 0) & (t_floor < max_t)
    best[hit] = t_floor[hit]
    surface[hit] = FLOOR
    return best, surface, inv


def _hit_box(box, index, o, inv, best, surface):
    near = np.full(best.shape, -np.inf, np.float32)
    far = np.full(best.shape, np.inf, np.float32)
    for axis in range(3):
        t1 = inv[axis] * np.float32(box.lo[axis] - o[axis])
        t2 = inv[axis] * np.float32(box.hi[axis] - o[axis])
        np.maximum(near, np.minimum(t1, t2), out=near)
        np.minimum(far, np.maximum(t1, t2), out=far)
    hit = (near <= far) & (near > 0) & (near < best)
    best[hit] = near[hit]
    surface[hit] = index


def _beyond(best, surface, max_t):
    best[best >= max_t] = np.inf
    surface[~np.isfinite(best)] = NOTHING
    return best, surface


def _window(box, o, rot, xs, ys):
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
    x, y = visible[:, 0] / visible[:, 2], visible[:, 1] / visible[:, 2]
    c0 = max(int(np.searchsorted(xs, x.min())) - 1, 0)
    c1 = min(int(np.searchsorted(xs, x.max(), side="right")) + 1, len(xs))
    r0 = max(int(np.searchsorted(ys, y.min())) - 1, 0)
    r1 = min(int(np.searchsorted(ys, y.max(), side="right")) + 1, len(ys))
    if c0 >= c1 or r0 >= r1:
        return None
    return slice(r0, r1), slice(c0, c1)


def raycast(boxes, origin, directions, max_t):
    d = np.array(np.asarray(directions, dtype=np.float32).T, order="C")
    o = np.asarray(origin, dtype=np.float32)
    best, surface, inv = _floor(o, d, max_t)
    for index, box in enumerate(boxes, start=1):
        _hit_box(box, index, o, inv, best, surface)
    return _beyond(best, surface, max_t)


def raycast_grid(boxes, origin, rotation, xs, ys, max_t):
    rot = np.asarray(rotation, dtype=np.float32)
    o = np.asarray(origin, dtype=np.float32)
    d = rot[:, 0, None, None] * xs[None, None, :] + (
        rot[:, 1, None, None] * ys[None, :, None] + rot[:, 2, None, None])
    best, surface, inv = _floor(o, d, max_t)
    for index, box in enumerate(boxes, start=1):
        window = _window(box, o, rot, xs, ys)
        if window is not None:
            rows, cols = window
            _hit_box(box, index, o, inv[:, rows, cols], best[rows, cols], surface[rows, cols])
    best, surface = _beyond(best, surface, max_t)
    return best, surface, d


def shade(boxes, surface, origin, directions, t):
    table = np.array([0] + [b.shade for b in boxes], dtype=np.float32)
    grey = table[np.clip(surface, 0, None)]
    floor = surface == FLOOR
    reach = t[floor]
    checker = (np.floor((origin[0] + directions[0][floor] * reach) * 2)
               + np.floor((origin[1] + directions[1][floor] * reach) * 2)) % 2
    grey[floor] = 95 + 50 * checker
    boxes_hit = surface > 0
    height = origin[2] + directions[2][boxes_hit] * t[boxes_hit]
    grey[boxes_hit] -= (np.floor(height * 4) % 2) * 25
    hit = surface != NOTHING
    grey[hit] /= 1.0 + 0.04 * t[hit]
    grey[~hit] = 30
    return np.clip(grey, 0, 255).astype(np.uint8)


def colorize(boxes, surface, grey):
    palette = np.array([(160, 160, 150)] + [b.color for b in boxes], dtype=np.float32)
    rgb = palette[np.clip(surface, 0, None)] * (grey[:, None].astype(np.float32) / 160.0)
    return np.clip(rgb, 0, 255).astype(np.uint8)


def camera(boxes, model, origin, rotation, depth: bool, color: bool) -> np.ndarray:
    """A body camera's raw image: depth (uint16 mm, 0 beyond 10 m), or grey / RGB (uint8)
    with the sensor's fixed noise, as the simulated robot rendered it before the pool."""
    xs, ys = model.axes()
    t, surface, d = raycast_grid(boxes, np.asarray(origin, float), rotation, xs, ys, 40.0)
    t, surface, d = t.ravel(), surface.ravel(), d.reshape(3, -1)
    shape = (model.rows, model.cols)
    if depth:
        out = np.where((surface != NOTHING) & (t <= 10.0), t * 1000.0, 0)
        return np.rint(out).astype(np.uint16).reshape(shape)
    grey = shade(boxes, surface, np.asarray(origin, float), d, t)
    noise = np.random.default_rng(len(grey)).integers(-6, 7, len(grey), dtype=np.int16)
    grey = np.clip(grey.astype(np.int16) + noise, 0, 255).astype(np.uint8)
    if not color:
        return grey.reshape(shape)
    return colorize(boxes, surface, grey).reshape((*shape, 3))


def lidar(boxes, origin, rotation, rays, max_range: float = 30.0) -> np.ndarray:
    t, surface = raycast(boxes, np.asarray(origin, float), rays @ rotation.T, max_range)
    hit = surface != NOTHING
    return (rays[hit] * t[hit, None]).astype(np.float32)
