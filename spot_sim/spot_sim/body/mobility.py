"""Planar body motion: acceleration-limited velocity tracking and a go-to-goal controller."""

import math
from dataclasses import dataclass


@dataclass
class Se2:
    """A planar pose or velocity: x, y (m or m/s) and yaw (rad or rad/s)."""

    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0


def wrap_angle(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))


def compose(a: Se2, b: Se2) -> Se2:
    """a * b for planar poses."""
    c, s = math.cos(a.yaw), math.sin(a.yaw)
    return Se2(a.x + c * b.x - s * b.y, a.y + s * b.x + c * b.y, wrap_angle(a.yaw + b.yaw))


def inverse(a: Se2) -> Se2:
    c, s = math.cos(a.yaw), math.sin(a.yaw)
    return Se2(-c * a.x - s * a.y, s * a.x - c * a.y, -a.yaw)


def _step_towards(current: float, target: float, max_step: float) -> float:
    return current + max(-max_step, min(max_step, target - current))


def _approach(current: float, target: float, accel_step: float, decel_step: float) -> float:
    """One step of a speed towards ``target``: braking (towards zero) uses the larger limit."""
    if current != 0.0 and (current * target < 0.0 or abs(target) < abs(current)):
        return _step_towards(current, target if current * target > 0.0 else 0.0, decel_step)
    return _step_towards(current, target, accel_step)


def clamp_velocity(v: Se2, limit: Se2) -> Se2:
    """Clamp each component of a body velocity to +/- the matching limit."""
    return Se2(max(-limit.x, min(limit.x, v.x)), max(-limit.y, min(limit.y, v.y)),
               max(-limit.yaw, min(limit.yaw, v.yaw)))


def track_velocity(current: Se2, target: Se2, dt: float, lin_accel: float, ang_accel: float,
                   lin_decel: float, ang_decel: float) -> Se2:
    """Move a body velocity towards ``target`` within the acceleration and braking limits."""
    return Se2(_approach(current.x, target.x, lin_accel * dt, lin_decel * dt),
               _approach(current.y, target.y, lin_accel * dt, lin_decel * dt),
               _approach(current.yaw, target.yaw, ang_accel * dt, ang_decel * dt))


def integrate(pose: Se2, body_velocity: Se2, dt: float) -> Se2:
    """Advance a pose by a body-frame velocity held for ``dt`` (exact for constant twist)."""
    w = body_velocity.yaw
    if abs(w) < 1e-9:
        step = Se2(body_velocity.x * dt, body_velocity.y * dt, 0.0)
    else:
        th = w * dt
        sin_c, cos_c = math.sin(th) / w, (1.0 - math.cos(th)) / w
        step = Se2(sin_c * body_velocity.x - cos_c * body_velocity.y,
                   cos_c * body_velocity.x + sin_c * body_velocity.y, th)
    return compose(pose, step)


GOAL_POSITION_TOL = 0.03  # m
GOAL_YAW_TOL = 0.03  # rad
NEAR_GOAL_DIST = 0.25  # m


def goal_velocity(pose: Se2, goal: Se2, current: Se2, limit: Se2, lin_accel: float,
                  ang_accel: float) -> Se2:
    """Body velocity that drives ``pose`` to ``goal`` and can still stop in time."""
    error = compose(inverse(pose), goal)
    dist = math.hypot(error.x, error.y)
    # Speed that allows stopping within the remaining distance: v = sqrt(2 a d).
    speed = min(math.sqrt(2 * lin_accel * dist), 2.0 * dist + 0.05) if dist > 1e-4 else 0.0
    vx = speed * error.x / dist if dist > 1e-4 else 0.0
    vy = speed * error.y / dist if dist > 1e-4 else 0.0
    yaw_speed = min(math.sqrt(2 * ang_accel * abs(error.yaw)), 2.0 * abs(error.yaw) + 0.05)
    wz = math.copysign(yaw_speed, error.yaw) if abs(error.yaw) > 1e-4 else 0.0
    # Scale translation and rotation together so the body follows the straight line.
    scale = 1.0
    for want, lim in ((vx, limit.x), (vy, limit.y), (wz, limit.yaw)):
        if abs(want) > lim > 0:
            scale = min(scale, lim / abs(want))
    return Se2(vx * scale, vy * scale, wz * scale)


def goal_reached(pose: Se2, goal: Se2) -> bool:
    error = compose(inverse(pose), goal)
    return math.hypot(error.x, error.y) < GOAL_POSITION_TOL and abs(error.yaw) < GOAL_YAW_TOL


def distance_to(pose: Se2, goal: Se2) -> tuple[float, float]:
    error = compose(inverse(pose), goal)
    return math.hypot(error.x, error.y), abs(error.yaw)
