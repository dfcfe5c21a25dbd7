"""The body track of a dance: each body move's offset from the standing pose, and the leg
state postures (kneeling, sprawled) that transition moves blend between.

An offset is ``(x, y, z, roll, pitch, yaw)`` in the body frame, in m and rad. The amplitudes of
postures and of moves without parameters are the simulator's own.
"""

import bisect
import math
from dataclasses import dataclass

from bosdyn.api.spot import choreography_params_pb2, choreography_sequence_pb2

from spot_sim.choreography.placed import SLICES_PER_BEAT, Placed, ease

Offset = tuple[float, float, float, float, float, float]
ZERO: Offset = (0.0,) * 6
State = choreography_sequence_pb2.MoveInfo.TransitionState
_KNEEL: Offset = (0.0, 0.0, -0.12, 0.0, -0.35, 0.0)  # hind legs folded: nose up
_SPRAWL_ROLL = 1.3  # rad: rolled onto its side


def _wave(phase: float) -> float:
    return math.sin(2.0 * math.pi * phase)


def _rotation(v, scale: float) -> Offset:
    return (0.0, 0.0, 0.0, scale * v("rotation.roll"), scale * v("rotation.pitch"),
            scale * v("rotation.yaw"))


@dataclass(frozen=True)
class _At:
    """How far into its move a body move is: slices in, its length, the fraction done, beats
    in, the sine envelope over the move and the seconds of one slice."""

    into: float
    length: float
    p: float
    beats: float
    envelope: float
    slice_seconds: float


def body_offset(placed: Placed, slice_now: float, slice_seconds: float) -> Offset:
    """The body's offset from its standing pose for one active body-track move."""
    length = max(placed.end - placed.start, 1)
    into = slice_now - placed.start
    p = min(max(into / length, 0.0), 1.0)
    at = _At(into, length, p, into / SLICES_PER_BEAT, math.sin(math.pi * p), slice_seconds)
    move = _MOVES.get(placed.spec.name)
    if move is not None:
        return move(placed, placed.value, at)
    if placed.spec.keyframes:
        return keyframe_pose(placed.spec.keyframes, p * placed.spec.keyframes[-1][0])
    return ZERO


def _body_hold(placed, v, at: _At) -> Offset:
    entry, exit_ = v("entry_slices"), v("exit_slices")
    ramp = min(1.0, at.into / max(entry, 1e-6),
               (at.length - at.into) / exit_ if exit_ > 0 else 1.0)
    return tuple(ramp * v(path) for path in (
        "translation.x", "translation.y", "translation.z",
        "rotation.roll", "rotation.pitch", "rotation.yaw"))


def _rotate_body(placed, v, at: _At) -> Offset:
    rise = 0.2 if placed.spec.name == "rotate_body_sharp" else 0.5  # sharp: gets there fast
    scale = math.sin(0.5 * math.pi * min(at.p / rise, 1.0))
    if placed.flag("return_to_start_pose", True) and at.p > rise:
        scale = math.cos(0.5 * math.pi * (at.p - rise) / (1.0 - rise))
    return _rotation(v, scale)


def _sway(placed, v, at: _At) -> Offset:
    return (0.0, v("horizontal") * _wave(at.beats / 2), v("vertical") * _wave(at.beats),
            v("roll") * _wave(at.beats / 2), 0.0, 0.0)


def _butt_circle(placed, v, at: _At) -> Offset:
    circles = v("number_of_circles") or at.length / SLICES_PER_BEAT / v("beats_per_circle")
    sign = -1.0 if placed.flag("clockwise", False) else 1.0
    angle = v("starting_angle") + sign * 2.0 * math.pi * circles * at.p
    return (0.0, 0.0, 0.0, 2.0 * v("radius") * math.sin(angle),
            2.0 * v("radius") * math.cos(angle), 0.0)


def _twerk(placed, v, at: _At) -> Offset:
    return (0.0, 0.0, -v("height") * at.envelope, 0.0, 0.0, 0.0)


def _random_rotate(placed, v, at: _At) -> Offset:
    t = at.into * at.slice_seconds
    return (0.0, 0.0, 0.0,
            v("amplitude.roll") * math.sin(2 * math.pi * v("speed.roll") * t),
            v("amplitude.pitch") * math.sin(2 * math.pi * v("speed.pitch") * t + 1.0),
            v("amplitude.yaw") * math.sin(2 * math.pi * v("speed.yaw") * t + 2.0))


def _fidget_stand(placed, v, at: _At) -> Offset:
    t = at.into * at.slice_seconds
    middle = (v("breath_min_z") + v("breath_max_z")) / 2
    half = (v("breath_max_z") - v("breath_min_z")) / 2
    return (0.0, 0.0, middle + half * math.sin(2 * math.pi * t / v("breath_max_period")),
            0.0, 0.5 * (v("min_gaze_pitch") + v("max_gaze_pitch")) * at.envelope, 0.0)


def _front_up(placed, v, at: _At) -> Offset:
    pitch = 0.35 if placed.flag("mirror", False) else -0.35
    return (0.0, 0.0, 0.05 * at.envelope, 0.0, pitch * at.envelope, 0.0)


def _bounce(placed, v, at: _At) -> Offset:
    return (0.0, 0.0, 0.12 * abs(math.sin(math.pi * at.beats)), 0.0, 0.0, 0.0)


# The body offset of each move with a shape of its own: fn(placed, value, at). Other moves
# follow their keyframes (animations) or leave the body where it stands.
_MOVES = {"body_hold": _body_hold, "rotate_body": _rotate_body,
          "rotate_body_sharp": _rotate_body, "sway": _sway, "butt_circle": _butt_circle,
          "twerk": _twerk, "random_rotate": _random_rotate, "fidget_stand": _fidget_stand,
          "front_up": _front_up, "jump": _bounce, "hop": _bounce, "jog": _bounce,
          "skip": _bounce}


def keyframe_pose(keyframes, t: float) -> Offset:
    """An animation's body pose at time ``t``, linear between keyframes."""
    times = [k[0] for k in keyframes]
    index = bisect.bisect_right(times, t)
    if index == 0:
        return keyframes[0][1:]
    if index >= len(keyframes):
        return keyframes[-1][1:]
    before, after = keyframes[index - 1], keyframes[index]
    f = (t - before[0]) / (after[0] - before[0])
    return tuple(a + f * (b - a) for a, b in zip(before[1:], after[1:], strict=True))


def state_posture(state: int, placed: Placed | None = None) -> Offset:
    """The body's offset in a leg state (standing and sitting poses are the robot's own)."""
    if state == State.TRANSITION_STATE_KNEEL:
        return _KNEEL
    if state == State.TRANSITION_STATE_SPRAWL:
        side = placed.move.side_params.side if placed is not None else 0
        sign = -1.0 if side == choreography_params_pb2.SideParams.SIDE_RIGHT else 1.0
        return (0.0, 0.0, 0.0, sign * _SPRAWL_ROLL, 0.0, 0.0)
    return ZERO


def blend(a: Offset, b: Offset, f: float) -> Offset:
    eased = ease(f)
    return tuple(x + eased * (y - x) for x, y in zip(a, b, strict=True))
