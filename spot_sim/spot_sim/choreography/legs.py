"""The legs track of a dance: where each stepping move takes the footprint, and the leg joint
offsets (from the robot's current posture) of steps, kneeling leg moves and leg poses.

Joint offsets are 12 values in LEG_JOINTS order (fl, fr, hl, hr; hx, hy, kn). The swing
shapes and the clap and circle amplitudes in joint space are the simulator's own.
"""

import math

import numpy as np
from bosdyn.api.spot import choreography_params_pb2

from spot_sim.body.mobility import Se2, compose, inverse, wrap_angle
from spot_sim.choreography.placed import SLICES_PER_BEAT, Placed, ease

_LEG_INDEX = {choreography_params_pb2.LEG_FRONT_LEFT: 0,
              choreography_params_pb2.LEG_FRONT_RIGHT: 1,
              choreography_params_pb2.LEG_HIND_LEFT: 2,
              choreography_params_pb2.LEG_HIND_RIGHT: 3}
_STEADY_GAITS = ("running_man", "bourree", "hop", "crawl", "trot", "pace", "jog", "skip")
# Trot-like stepping: diagonal pairs (FL+HR, FR+HL) swing half a beat apart.
_LEG_PHASE = np.repeat(np.array([0.0, 0.5, 0.5, 0.0]), 3)
_SWING_SHAPE = np.array([0.0, -0.6, 1.2])  # hip x, hip y, knee (rad per 0.1 m of lift)
_RAD_PER_M = 1.0 / 0.35  # a foot's displacement as joint angle, about one leg length


def _relative_or_absolute(placed: Placed, pose: Se2, frame: Se2, xy: str, yaw: str,
                          xy_absolute: bool, yaw_absolute: bool) -> Se2:
    """The displacement (in the body frame at the move's start) to a target given relative
    to the robot (``xy``, ``yaw``) or in the dance frame (``absolute_<...>``)."""
    v = placed.value
    if xy_absolute:
        target = compose(frame, Se2(v(f"absolute_{xy}.x"), v(f"absolute_{xy}.y"), 0.0))
        local = compose(inverse(pose), Se2(target.x, target.y, pose.yaw))
        dx, dy = local.x, local.y
    else:
        dx, dy = v(f"{xy}.x"), v(f"{xy}.y")
    if yaw_absolute:
        dyaw = wrap_angle(frame.yaw + v(f"absolute_{yaw}") - pose.yaw)
    else:
        dyaw = v(yaw)
    return Se2(dx, dy, dyaw)


def ground_motion(placed: Placed, pose: Se2, frame: Se2) -> Se2:
    """The footprint's whole displacement over one stepping move, decided when it starts from
    the robot's pose and the dance frame (both in odom)."""
    name, v, flag = placed.spec.name, placed.value, placed.flag
    if name in ("turn_2step", "pace_2step"):
        old = flag("absolute", False)  # deprecated: both absolute
        return _relative_or_absolute(placed, pose, frame, "motion", "yaw",
                                     flag("motion_is_absolute", old),
                                     flag("yaw_is_absolute", old))
    if name == "jump":
        old = flag("absolute", False)
        return _relative_or_absolute(placed, pose, frame, "translation", "yaw",
                                     flag("translation_is_absolute", old),
                                     flag("yaw_is_absolute", old))
    if name == "goto":
        if flag("relative", False):
            return Se2(v("relative_position.x"), v("relative_position.y"), v("relative_yaw"))
        return _relative_or_absolute(placed, pose, frame, "position", "yaw", True, True)
    if name in _STEADY_GAITS:
        seconds = placed.seconds
        if "stand_time" in placed.spec.parameters:
            seconds = max(seconds - v("stand_time"), 0.0)
        yaw_rate = v("yaw_rate") if "yaw_rate" in placed.spec.parameters else 0.0
        return Se2(v("velocity.x") * seconds, v("velocity.y") * seconds, yaw_rate * seconds)
    return Se2()


def _hold(target: np.ndarray, placed: Placed, slice_now: float) -> np.ndarray:
    """Move to ``target`` over the first half of the move, then hold it."""
    return target * ease(placed.progress(slice_now) * 2.0)


def leg_offsets(placed: Placed, slice_now: float, posture: np.ndarray) -> np.ndarray:
    """Joint offsets (12) from ``posture`` for one active legs-track move."""
    name, v = placed.spec.name, placed.value
    out = np.zeros(12)
    beats = (slice_now - placed.start) / SLICES_PER_BEAT
    if name == "step":
        length = placed.end - placed.start
        swing = (slice_now - placed.start - 1) / max(length - 2, 1)  # lift 1 slice in
        height = v("swing_height") + max(v("swing_waypoint.z"), 0.0)
        lift = math.sin(math.pi * swing) * height / 0.1 if 0.0 < swing < 1.0 else 0.0
        for foot in (placed.move.step_params.foot, placed.move.step_params.second_foot):
            if foot in _LEG_INDEX:
                i = 3 * _LEG_INDEX[foot]
                out[i:i + 3] = _SWING_SHAPE * lift
        return out
    if name in ("kneel_leg_move", "kneel_leg_move2"):
        if name == "kneel_leg_move":
            left = (v("hip_x"), v("hip_y"), v("knee"))
            mirror = -1.0 if placed.flag("mirror", False) else 1.0
            right = (mirror * left[0], left[1], left[2])
        else:
            left = (v("left_hip_x"), v("left_hip_y"), v("left_knee"))
            right = (v("right_hip_x"), v("right_hip_y"), v("right_knee"))
        out[0:3], out[3:6] = np.subtract(left, posture[0:3]), np.subtract(right, posture[3:6])
        return _hold(out, placed, slice_now)
    if name == "leg_pose":
        target = [v(f"{leg}_{j}") for leg in ("fl", "fr", "hl", "hr") for j in ("hx", "hy", "kn")]
        return _hold(np.subtract(target, posture), placed, slice_now)
    if name == "kneel_clap":
        clap = math.sin(math.pi * placed.progress(slice_now))
        spread = v("clap_distance") * _RAD_PER_M / 2
        out[0], out[3] = spread * (1 - clap), -spread * (1 - clap)  # apart, then together
        out[1] = out[4] = 1.2 * min(placed.progress(slice_now) * 4, 1.0)  # front legs raised
        return out
    if name == "kneel_circles":
        circles = v("number_of_circles")
        turns = circles * placed.progress(slice_now) if circles else \
            beats / max(v("beats_per_circle"), 1.0)
        angle = 2.0 * math.pi * turns * (-1.0 if placed.flag("reverse", False) else 1.0)
        r = v("radius") * _RAD_PER_M
        out[1], out[2] = 1.2 + r * math.cos(angle), r * math.sin(angle)
        out[4], out[5] = 1.2 - r * math.cos(angle), -r * math.sin(angle)
        return out
    if placed.spec.category in ("step", "dynamic") and "legs" in placed.spec.controls:
        height = (v("swing_height") if "swing_height" in placed.spec.parameters else 0.0) \
            or 0.1  # zero: the default swing
        lift = np.maximum(np.sin(2.0 * np.pi * (beats + _LEG_PHASE)), 0.0)
        return np.tile(_SWING_SHAPE, 4) * lift * (height / 0.1)
    return out
