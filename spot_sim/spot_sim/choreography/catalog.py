"""The moves the simulated robot can dance: built-in moves from ``moves.yaml`` and animations
uploaded with UploadAnimatedMove, as ListAllMoves reports them.

``move_param_config`` (the robot's MoveParamsConfig) is one line per bounded parameter:

    <move> <dotted parameter path> default=<value> min=<value> max=<value>
"""

import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from bosdyn.api.spot import choreography_sequence_pb2

MoveInfo = choreography_sequence_pb2.MoveInfo
State = MoveInfo.TransitionState
TRACKS = ("body", "legs", "arm", "gripper", "lights", "audio_visual_lights",
          "audio_visual_buzzer")
_CATALOG = Path(__file__).with_name("moves.yaml")
COLOR_RANGE = (0.0, 255.0)  # the move reference: "All colors are specified as RGB on a 0-255 scale"


@dataclass(frozen=True)
class ParamSpec:
    path: str
    default: float
    minimum: float
    maximum: float

    def contains(self, value: float) -> bool:
        return math.isfinite(value) and self.minimum <= value <= self.maximum


@dataclass
class MoveSpec:
    name: str
    params_field: str  # the MoveParams oneof field ("" for moves without parameters)
    slices: int
    extendable: bool = False
    min_slices: int = 0
    max_slices: int = 0
    entrance: tuple[int, ...] = (State.TRANSITION_STATE_STAND,)
    exit: int = State.TRANSITION_STATE_STAND
    min_seconds: float = 0.0  # a duration the move needs whatever the tempo
    controls: tuple[str, ...] = ("body",)
    category: str = "body"
    parameters: dict[str, ParamSpec] = field(default_factory=dict)
    # An animation's body keyframes: (time s, x, y, z, roll, pitch, yaw), times increasing.
    keyframes: tuple[tuple[float, ...], ...] = ()

    def length(self, requested: int) -> int:
        """The move's length in slices for a requested length (0: the default)."""
        if not requested or not self.extendable:
            return self.slices
        return min(max(requested, self.min_slices), self.max_slices)

    def min_slices_at(self, slices_per_minute: float) -> int:
        """The fewest slices the move may last at a tempo (its ``min_seconds`` included)."""
        least = self.min_slices if self.extendable else self.slices
        return max(least, math.ceil(self.min_seconds * slices_per_minute / 60.0 - 1e-9))

    def to_proto(self) -> MoveInfo:
        info = MoveInfo(name=self.name, move_length_slices=self.slices,
                        is_extendable=self.extendable,
                        min_move_length_slices=self.min_slices or self.slices,
                        max_move_length_slices=self.max_slices or self.slices,
                        min_time=self.min_seconds, exit_state=self.exit)
        info.entrance_states.extend(self.entrance)
        for track in self.controls:
            setattr(info, f"controls_{track}", True)
        enum = info.display.DESCRIPTOR.fields_by_name["category"].enum_type
        category = enum.values_by_name.get(f"CATEGORY_{self.category.upper()}")
        if category is not None:
            info.display.category = category.number
        info.display.description = f"{self.name} ({self.category})"
        return info


def _state(name: str) -> int:
    return State.Value(f"TRANSITION_STATE_{name}")


def _parameters(entry: dict) -> dict[str, ParamSpec]:
    out = {p: ParamSpec(p, *bounds) for p, bounds in (entry.get("parameters") or {}).items()}
    for color, default in (entry.get("colors") or {}).items():
        for channel in ("red", "green", "blue"):
            path = f"{color}.{channel}"
            out[path] = ParamSpec(path, float(default), *COLOR_RANGE)
    return out


def load_catalog(path: Path = _CATALOG) -> dict[str, MoveSpec]:
    """The moves of ``moves.yaml`` (its header says what each entry holds)."""
    out = {}
    for name, entry in yaml.safe_load(path.read_text()).items():
        length = entry["length"]
        nominal, least, most = length if isinstance(length, list) else (length, 0, 0)
        out[name] = MoveSpec(
            name=name, params_field=entry.get("params", ""), slices=nominal,
            extendable=isinstance(length, list), min_slices=least, max_slices=most,
            entrance=tuple(_state(s) for s in entry.get("entrance", ["STAND"])),
            exit=_state(entry.get("exit", "STAND")),
            min_seconds=float(entry.get("min_seconds", 0.0)),
            controls=tuple(entry["controls"]),
            category=entry["category"], parameters=_parameters(entry))
    return out


def param_config(moves: dict[str, MoveSpec]) -> str:
    lines = ["# <move> <parameter> default=<value> min=<value> max=<value>"]
    for move in moves.values():
        for spec in move.parameters.values():
            lines.append(f"{move.name} {spec.path} default={spec.default:g} "
                         f"min={spec.minimum:g} max={spec.maximum:g}")
    return "\n".join(lines) + "\n"


ANIMATION_SLICES_PER_BEAT = 4
_ANIMATE_BOUNDED = ("speed", "body_entry_slices", "body_exit_slices", "offset_slices",
                    "body_tracking_stiffness")


def animation_move(animation: choreography_sequence_pb2.Animation) -> MoveSpec:
    """An uploaded animation as a move: its length in slices at its own ``bpm`` (120 when
    unset), the tracks it controls, and bounds from its minimum/default/maximum parameters."""
    duration = max((k.time for k in animation.animation_keyframes), default=0.0)
    bpm = animation.bpm or 120.0
    slices = max(1, round(duration * bpm / 60.0 * ANIMATION_SLICES_PER_BEAT))
    controls = tuple(t for t in ("arm", "legs", "body", "gripper")
                     if getattr(animation, f"controls_{t}"))
    parameters = {}
    for name in _ANIMATE_BOUNDED:
        low, high = animation.minimum_parameters, animation.maximum_parameters
        if low.HasField(name) and high.HasField(name):
            default = animation.default_parameters
            value = getattr(default, name).value if default.HasField(name) else \
                getattr(low, name).value
            parameters[name] = ParamSpec(name, value, getattr(low, name).value,
                                         getattr(high, name).value)
    keyframes = tuple(
        (k.time, k.body.body_pos.x.value, k.body.body_pos.y.value, k.body.body_pos.z.value,
         k.body.euler_angles.roll.value, k.body.euler_angles.pitch.value,
         k.body.euler_angles.yaw.value) for k in animation.animation_keyframes)
    return MoveSpec(name=animation.name, params_field="animate_params", slices=slices,
                    keyframes=keyframes,
                    extendable=animation.extendable, min_slices=slices if not
                    animation.truncatable else 1, max_slices=4 * slices,
                    controls=controls or ("body",), category="animation",
                    entrance=(State.TRANSITION_STATE_SIT,) if animation.starts_sitting
                    else (State.TRANSITION_STATE_STAND,), parameters=parameters)
