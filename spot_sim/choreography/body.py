"""The body track of a dance: each body move's offset from the standing pose, and the leg
state postures (kneeling, sprawled) that transition moves blend between.

An offset is ``(x, y, z, roll, pitch, yaw)`` in the body frame, in m and rad. The amplitudes of
postures and of moves without parameters are the simulator's own.
"""

import bisect
import math

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


def body_offset(placed: Placed, slice_now: float, slice_seconds: float) -> Offset:
    """The body's offset from its standing pose for one active body-track move."""
    name, v = placed.spec.name, placed.value
    length = max(placed.end - placed.start, 1)
    into = slice_now - placed.start
    p = min(max(into / length, 0.0), 1.0)
    beats = into / SLICES_PER_BEAT
    envelope = math.sin(math.pi * p)
    if name == "body_hold":
        entry, exit_ = v("entry_slices"), v("exit_slices")
        ramp = min(1.0, into / max(entry, 1e-6),
                   (length - into) / exit_ if exit_ > 0 else 1.0)
        return tuple(ramp * v(path) for path in (
            "translation.x", "translation.y", "translation.z",
            "rotation.roll", "rotation.pitch", "rotation.yaw"))
    if name in ("rotate_body", "rotate_body_sharp"):
        rise = 0.2 if name == "rotate_body_sharp" else 0.5  # the sharp one gets there fast
        scale = math.sin(0.5 * math.pi * min(p / rise, 1.0))
        if placed.flag("return_to_start_pose", True) and p > rise:
            scale = math.cos(0.5 * math.pi * (p - rise) / (1.0 - rise))
        return _rotation(v, scale)
    if name == "sway":
        return (0.0, v("horizontal") * _wave(beats / 2), v("vertical") * _wave(beats),
                v("roll") * _wave(beats / 2), 0.0, 0.0)
    if name == "butt_circle":
        circles = v("number_of_circles") or length / SLICES_PER_BEAT / v("beats_per_circle")
        sign = -1.0 if placed.flag("clockwise", False) else 1.0
        angle = v("starting_angle") + sign * 2.0 * math.pi * circles * p
        return (0.0, 0.0, 0.0, 2.0 * v("radius") * math.sin(angle),
                2.0 * v("radius") * math.cos(angle), 0.0)
    if name == "twerk":
        return (0.0, 0.0, -v("height") * envelope, 0.0, 0.0, 0.0)
    if name == "random_rotate":
        t = into * slice_seconds
        return (0.0, 0.0, 0.0,
                v("amplitude.roll") * math.sin(2 * math.pi * v("speed.roll") * t),
                v("amplitude.pitch") * math.sin(2 * math.pi * v("speed.pitch") * t + 1.0),
                v("amplitude.yaw") * math.sin(2 * math.pi * v("speed.yaw") * t + 2.0))
    if name == "fidget_stand":
        t = into * slice_seconds
        middle = (v("breath_min_z") + v("breath_max_z")) / 2
        half = (v("breath_max_z") - v("breath_min_z")) / 2
        return (0.0, 0.0, middle + half * math.sin(2 * math.pi * t / v("breath_max_period")),
                0.0, 0.5 * (v("min_gaze_pitch") + v("max_gaze_pitch")) * envelope, 0.0)
    if name == "front_up":
        pitch = 0.35 if placed.flag("mirror", False) else -0.35
        return (0.0, 0.0, 0.05 * envelope, 0.0, pitch * envelope, 0.0)
    if name in ("jump", "hop", "jog", "skip"):
        return (0.0, 0.0, 0.12 * abs(math.sin(math.pi * beats)), 0.0, 0.0, 0.0)
    if placed.spec.keyframes:
        return keyframe_pose(placed.spec.keyframes, p * placed.spec.keyframes[-1][0])
    return ZERO


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
