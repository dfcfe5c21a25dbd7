"""How hard the simulated robot is to work with: the default profile is deterministic (no
latency, exact clock, fresh noiseless sensors); the ``field`` profile plays a robot on Wi-Fi.

Every knob is a ``FieldProfile`` field and a ``spot-sim`` flag (``--profile field`` then
flags override single knobs). Ranges are (low, high) in seconds, drawn uniformly per event.
The field numbers are the simulator's own, chosen to match what users report of Spot over
Wi-Fi: round trips of tens of milliseconds with occasional stalls of a few hundred, images
that are 50-150 ms old on arrival, and a robot that brakes within about a body length.
"""

import math
import random
from dataclasses import dataclass, fields, replace

from spot_sim.core.lock_order import LEAF, OrderedLock

Range = tuple[float, float]


@dataclass(frozen=True)
class FieldProfile:
    """The knobs (their meaning and units in ``KNOB_HELP``); all zero: deterministic."""

    request_latency: Range = (0.0, 0.0)
    response_latency: Range = (0.0, 0.0)
    spike_probability: float = 0.0
    spike_latency: Range = (0.1, 0.3)
    rpc_failure_probability: float = 0.0
    clock_drift_ppm: float = 0.0
    capture_delay: Range = (0.0, 0.0)
    state_age: Range = (0.0, 0.0)
    joint_noise: float = 0.0
    joint_velocity_noise: float = 0.0
    body_velocity_noise: float = 0.0
    spot_check_failure_probability: float = 0.0
    max_linear_decel: float = 0.0
    max_angular_decel: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            values = value if isinstance(value, tuple) else (value,)
            if not all(isinstance(v, int | float) and math.isfinite(v) and v >= 0
                       for v in values):
                raise ValueError(f"{f.name} must be finite and not negative, not {value!r}")
            if isinstance(value, tuple) and (len(value) != 2 or value[0] > value[1]):
                raise ValueError(f"{f.name} must be a (low, high) range, not {value!r}")
        for name in ("spike_probability", "rpc_failure_probability",
                     "spot_check_failure_probability"):
            if getattr(self, name) > 1:
                raise ValueError(f"{name} must be on [0, 1]")

    @property
    def deterministic(self) -> bool:
        return self == replace(FieldProfile(), seed=self.seed)

    def with_knobs(self, **knobs) -> "FieldProfile":
        """A copy with the given knobs changed (None: unchanged), validated."""
        return replace(self, **{k: v for k, v in knobs.items() if v is not None})


PROFILES = {
    "default": FieldProfile(),
    "field": FieldProfile(
        request_latency=(0.003, 0.015), response_latency=(0.005, 0.040),
        spike_probability=0.01, spike_latency=(0.1, 0.3), rpc_failure_probability=0.002,
        clock_drift_ppm=50.0, capture_delay=(0.05, 0.15), state_age=(0.002, 0.008),
        joint_noise=0.002, joint_velocity_noise=0.02, body_velocity_noise=0.01,
        spot_check_failure_probability=0.3, max_linear_decel=2.0, max_angular_decel=4.0),
}


KNOB_HELP = {
    "request_latency": "client -> robot delay before the handler, s",
    "response_latency": "robot -> client delay after the handler, s",
    "spike_probability": "chance an RPC stalls in one direction",
    "spike_latency": "how long a stall lasts, s",
    "rpc_failure_probability": "chance a unary RPC fails UNAVAILABLE or DEADLINE_EXCEEDED",
    "clock_drift_ppm": "robot clock rate error against the host's, ppm",
    "capture_delay": "age of images and point clouds on response, s",
    "state_age": "robot state acquisition before its response, s",
    "joint_noise": "standard deviation of reported joint positions, rad",
    "joint_velocity_noise": "of reported joint velocities, rad/s",
    "body_velocity_noise": "of the reported body velocity, m/s and rad/s",
    "spot_check_failure_probability": "chance a Spot Check finds a problem",
    "max_linear_decel": "braking, m/s^2 (0: the robot's configured 10)",
    "max_angular_decel": "rad/s^2 (0: the robot's configured 10)",
    "seed": "seed of every random draw",
}


def knob_flags() -> dict[str, tuple[type, str]]:
    """Each knob's ``spot-sim`` flag name -> (type, help)."""
    out = {}
    for f in fields(FieldProfile):
        kind = tuple if isinstance(f.default, tuple) else type(f.default)
        out[f.name.replace("_", "-")] = (kind, KNOB_HELP[f.name])
    return out


def parse_range(text: str) -> Range:
    """``"LOW,HIGH"`` (or one number: both) in seconds."""
    parts = [float(p) for p in text.split(",")]
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2:
        raise ValueError(f"a range is LOW,HIGH, not {text!r}")
    return parts[0], parts[1]


class Draw:
    """Random draws for one consumer of a profile (its own seeded generator, so one service's
    traffic does not change another's sequence)."""

    def __init__(self, profile: FieldProfile, stream: str) -> None:
        self.profile = profile
        self._random = random.Random(f"{profile.seed}:{stream}")

    def uniform(self, span: Range) -> float:
        low, high = span
        return low if high <= low else self._random.uniform(low, high)

    def chance(self, probability: float) -> bool:
        return probability > 0 and self._random.random() < probability

    def choice(self, options):
        return self._random.choice(options)

    def gauss(self, sigma: float) -> float:
        return self._random.gauss(0.0, sigma) if sigma > 0 else 0.0


class Captures:
    """Acquisition times of each sensor's frames: ``capture_delay`` before the request, but
    never before a frame that sensor already delivered (a camera's pipeline hands frames on in
    the order it captured them; independent draws per request would not)."""

    def __init__(self) -> None:
        self._lock = OrderedLock("field", LEAF)
        self._last: dict[str, int] = {}

    def acquired(self, sensor: str, now_nsec: int, age_s: float) -> int:
        """The acquisition time (ns, robot clock) of ``sensor``'s frame served at ``now``."""
        with self._lock:
            stamp = max(now_nsec - round(age_s * 1e9), self._last.get(sensor, 0) + 1)
            self._last[sensor] = stamp
            return stamp
