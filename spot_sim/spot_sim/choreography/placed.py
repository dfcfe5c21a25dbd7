"""One move of a running sequence: where it sits in slices and how to read its parameters."""

import math
from dataclasses import dataclass

from bosdyn.api.spot import choreography_sequence_pb2

from spot_sim.choreography.catalog import MoveSpec
from spot_sim.choreography.validation import read_param

SLICES_PER_BEAT = 4


def ease(f: float) -> float:
    """0 -> 1 over ``f`` in [0, 1], starting and ending at rest (a cosine ramp)."""
    f = min(max(f, 0.0), 1.0)
    return 0.5 - 0.5 * math.cos(math.pi * f)


@dataclass
class Placed:
    move: choreography_sequence_pb2.MoveParams
    spec: MoveSpec
    start: int
    end: int
    slices_per_minute: float

    @property
    def seconds(self) -> float:
        return (self.end - self.start) * 60.0 / self.slices_per_minute

    def progress(self, slice_now: float) -> float:
        """How far through the move ``slice_now`` is, on [0, 1]."""
        return min(max((slice_now - self.start) / max(self.end - self.start, 1), 0.0), 1.0)

    def _params(self):
        return getattr(self.move, self.spec.params_field) if self.spec.params_field else None

    def value(self, path: str, default: float | None = None) -> float:
        """A numeric parameter: its set value, else the catalog's default, else ``default``."""
        params = self._params()
        found = read_param(params, path) if params is not None else None
        if found is not None:
            return found
        spec = self.spec.parameters.get(path)
        return spec.default if spec is not None else (default or 0.0)

    def is_set(self, path: str) -> bool:
        params = self._params()
        return params is not None and read_param(params, path) is not None

    def flag(self, path: str, default: bool) -> bool:
        """A boolean parameter (a BoolValue): its set value or ``default``."""
        params = self._params()
        found = read_param(params, path) if params is not None else None
        return default if found is None else bool(found)
