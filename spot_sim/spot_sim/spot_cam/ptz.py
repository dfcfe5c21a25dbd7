"""The Spot CAM's pan-tilt-zoom heads: the mechanical PTZ ("mech") and the digital view of
the panorama ("digi").

Limits are the API's published ones (``bosdyn/api/spot_cam/ptz.proto``: the mech head pans
[0, 360] degrees, tilts about [-30, 100] and zooms 1x to 30x; the SDK's example gives the
digital view's tilt as [-90, 90]). A position command moves the mech head at its slew rates,
so it takes time to get there; the digital view jumps. Velocity commands move the digital
view only ("The mech ptz cannot be used with Velocity").
"""

import math
from dataclasses import dataclass, replace

from spot_sim.core.lock_order import LEAF, OrderedLock

# Slew rates of the mechanical head: no published figure; chosen as plausible for a compact
# PTZ and stated in the README (tests wait for the position instead of assuming a time).
PAN_TILT_SLEW_DEG_S = 60.0
ZOOM_SLEW_PER_S = 10.0


class PtzError(ValueError):
    """A request the Spot CAM refuses (unknown head, a position outside its limits)."""


@dataclass(frozen=True)
class Head:
    name: str
    pan: tuple[float, float]
    tilt: tuple[float, float]
    zoom: tuple[float, float]
    mechanical: bool


HEADS = (Head("mech", (0.0, 360.0), (-30.0, 100.0), (1.0, 30.0), True),
         Head("digi", (0.0, 360.0), (-90.0, 90.0), (1.0, 30.0), False))


@dataclass(frozen=True)
class Pose:
    """Pan and tilt (degrees) and zoom (level)."""

    pan: float
    tilt: float
    zoom: float


@dataclass(frozen=True)
class _Motion:
    start: Pose
    target: Pose
    t0_ns: int
    velocity: Pose = Pose(0.0, 0.0, 0.0)  # a velocity command's rates (digital view)


def _toward(start: float, target: float, rate: float, dt: float) -> float:
    step = rate * dt
    return target if abs(target - start) <= step else start + math.copysign(step, target - start)


def _pan_delta(start: float, target: float) -> float:
    """The shorter way round from ``start`` to ``target`` (degrees)."""
    return (target - start + 180.0) % 360.0 - 180.0


class PtzHeads:
    """Where each head points now and where it is going. Thread-safe."""

    def __init__(self, now_ns: int) -> None:
        self._lock = OrderedLock("ptz", LEAF)
        self.heads = {head.name: head for head in HEADS}
        home = Pose(0.0, 0.0, 1.0)
        self._motion = {name: _Motion(home, home, now_ns) for name in self.heads}
        self.lens_initializations = 0

    def head(self, name: str) -> Head:
        head = self.heads.get(name)
        if head is None:
            raise PtzError(f"unknown ptz {name!r}; this Spot CAM has {sorted(self.heads)}")
        return head

    def position(self, name: str, now_ns: int) -> Pose:
        with self._lock:
            return self._position(self.head(name), now_ns)

    def velocity(self, name: str, now_ns: int) -> Pose:
        """Degrees per second and zoom levels per second."""
        dt = 0.01
        before, after = (self.position(name, now_ns - int(dt * 1e9)),
                         self.position(name, now_ns))
        return Pose(_pan_delta(before.pan, after.pan) / dt, (after.tilt - before.tilt) / dt,
                    (after.zoom - before.zoom) / dt)

    def _position(self, head: Head, now_ns: int) -> Pose:
        motion = self._motion[head.name]
        dt = max(0.0, (now_ns - motion.t0_ns) / 1e9)
        if motion.velocity != Pose(0.0, 0.0, 0.0):
            v, s = motion.velocity, motion.start
            return Pose((s.pan + v.pan * dt) % 360.0,
                        min(max(s.tilt + v.tilt * dt, head.tilt[0]), head.tilt[1]),
                        min(max(s.zoom + v.zoom * dt, head.zoom[0]), head.zoom[1]))
        if not head.mechanical:
            return motion.target
        start, target = motion.start, motion.target
        pan = (start.pan + _toward(0.0, _pan_delta(start.pan, target.pan),
                                   PAN_TILT_SLEW_DEG_S, dt)) % 360.0
        return Pose(pan, _toward(start.tilt, target.tilt, PAN_TILT_SLEW_DEG_S, dt),
                    _toward(start.zoom, target.zoom, ZOOM_SLEW_PER_S, dt))

    def set_position(self, name: str, target: Pose, now_ns: int) -> None:
        """Point ``name`` at ``target`` (PtzError if outside its limits; nothing moves then)."""
        head = self.head(name)
        for axis in ("pan", "tilt", "zoom"):
            low, high = getattr(head, axis)
            value = getattr(target, axis)
            if not (math.isfinite(value) and low <= value <= high):
                raise PtzError(f"{name} {axis} {value} is outside [{low:g}, {high:g}]")
        with self._lock:
            here = self._position(head, now_ns)
            self._motion[name] = _Motion(here, replace(target, pan=target.pan % 360.0), now_ns)

    def set_velocity(self, name: str, velocity: Pose, now_ns: int) -> None:
        head = self.head(name)
        if head.mechanical:
            raise PtzError("the mech ptz cannot be moved by velocity")
        if not all(math.isfinite(v) for v in (velocity.pan, velocity.tilt, velocity.zoom)):
            raise PtzError("ptz velocity must be finite")
        with self._lock:
            here = self._position(head, now_ns)
            self._motion[name] = _Motion(here, here, now_ns, velocity)

    def initialize_lens(self) -> None:
        """Reset the autofocus (the mech head keeps pointing where it points)."""
        with self._lock:
            self.lens_initializations += 1
