"""Mobility settings the driver sends with every motion command, and cmd_vel limiting."""

import math
from dataclasses import dataclass, replace

from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2
from bosdyn.client.math_helpers import Quat

from spot_driver.core.errors import CommandError

# The robot's own limits (Spot: 1.6 m/s forward, 0.5 m/s sideways, about 1.5 rad/s turning).
ROBOT_MAX_VELOCITY = (1.6, 0.5, 1.5)
BODY_HEIGHT_RANGE = (-0.15, 0.15)  # m, offset from the nominal stand height
MAX_BODY_TILT = 0.5  # rad, roll or pitch offset accepted for the body orientation
LOCOMOTION_HINTS = frozenset(spot_command_pb2.LocomotionHint.values()) - {0}
STAIRS_MODES = frozenset(spot_command_pb2.MobilityParams.StairsMode.values()) - {0}


class InvalidVelocityError(CommandError):
    """A velocity with NaN or infinite components."""


@dataclass(frozen=True)
class MobilitySettings:
    """Body offsets, velocity limit, gait and stairs mode; immutable, replaced on change."""

    body_height: float = 0.0
    body_orientation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)  # w, x, y, z
    max_velocity: tuple[float, float, float] = ROBOT_MAX_VELOCITY  # x, y (m/s), yaw (rad/s)
    locomotion_hint: int = spot_command_pb2.HINT_AUTO
    stair_hint: bool = False
    stairs_mode: int = spot_command_pb2.MobilityParams.STAIRS_MODE_AUTO

    def with_body_pose(self, height: float,
                       orientation: tuple[float, float, float, float]) -> "MobilitySettings":
        if not all(math.isfinite(v) for v in (height, *orientation)):
            raise CommandError("body height and orientation must be finite")
        low, high = BODY_HEIGHT_RANGE
        if not low <= height <= high:
            raise CommandError(f"body height offset {height:.3f} m is outside "
                               f"[{low}, {high}] m")
        w, x, y, z = orientation
        norm = math.sqrt(w * w + x * x + y * y + z * z)
        if norm < 1e-6:
            raise CommandError("body orientation is not a valid quaternion (zero length)")
        w, x, y, z = (v / norm for v in (w, x, y, z))
        rotation = Quat(w, x, y, z)
        if abs(rotation.to_roll()) > MAX_BODY_TILT or abs(rotation.to_pitch()) > MAX_BODY_TILT:
            raise CommandError(f"body roll/pitch offset must be within {MAX_BODY_TILT} rad")
        return replace(self, body_height=height, body_orientation=(w, x, y, z))

    def with_max_velocity(self, x: float, y: float, yaw: float) -> "MobilitySettings":
        values = (x, y, yaw)
        if not all(math.isfinite(v) for v in values):
            raise CommandError("velocity limits must be finite")
        for name, value, robot_max in zip(("linear.x", "linear.y", "angular.z"), values,
                                          ROBOT_MAX_VELOCITY, strict=True):
            if not 0.0 < value <= robot_max:
                raise CommandError(f"velocity limit {name}={value} must be in (0, {robot_max}]")
        return replace(self, max_velocity=values)

    def with_locomotion_hint(self, hint: int) -> "MobilitySettings":
        if hint not in LOCOMOTION_HINTS:
            raise CommandError(f"unknown locomotion hint {hint}; valid: {sorted(LOCOMOTION_HINTS)}")
        return replace(self, locomotion_hint=hint)

    def with_stairs_mode(self, mode: int) -> "MobilitySettings":
        if mode not in STAIRS_MODES:
            raise CommandError(f"unknown stairs mode {mode}; valid: {sorted(STAIRS_MODES)}")
        return replace(self, stairs_mode=mode,
                       stair_hint=mode == spot_command_pb2.MobilityParams.STAIRS_MODE_ON)

    def to_proto(self) -> spot_command_pb2.MobilityParams:
        params = spot_command_pb2.MobilityParams(locomotion_hint=self.locomotion_hint,
                                                 stair_hint=self.stair_hint,
                                                 stairs_mode=self.stairs_mode)
        point = params.body_control.base_offset_rt_footprint.points.add()
        point.pose.position.z = self.body_height
        r = point.pose.rotation
        r.w, r.x, r.y, r.z = self.body_orientation
        vx, vy, wz = self.max_velocity
        params.vel_limit.max_vel.linear.x, params.vel_limit.max_vel.linear.y = vx, vy
        params.vel_limit.max_vel.angular = wz
        params.vel_limit.min_vel.linear.x, params.vel_limit.min_vel.linear.y = -vx, -vy
        params.vel_limit.min_vel.angular = -wz
        return params


def clamp_velocity(vx: float, vy: float, wz: float,
                   limit: tuple[float, float, float]) -> tuple[tuple[float, float, float], bool]:
    """Clamp a body velocity to +/- ``limit``; (velocity, whether anything was clamped)."""
    values = (vx, vy, wz)
    if not all(math.isfinite(v) for v in values):
        raise InvalidVelocityError(f"velocity (linear.x, linear.y, angular.z) {values} is not "
                                   "finite")
    clamped = tuple(max(-m, min(m, v)) for v, m in zip(values, limit, strict=True))
    return clamped, clamped != values
