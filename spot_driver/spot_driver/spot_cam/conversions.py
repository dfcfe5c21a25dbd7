"""Spot CAM PTZ protos as ROS messages, and the checks of a PTZ move: pure functions."""

import math
from dataclasses import dataclass

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from transforms3d.euler import euler2quat

from spot_msgs.msg import PtzHead, PtzState

AXES = ("pan", "tilt", "zoom")


@dataclass(frozen=True)
class Limits:
    """One head's ranges: pan and tilt in degrees, zoom as a level (None: unlimited)."""

    name: str
    pan: tuple[float | None, float | None]
    tilt: tuple[float | None, float | None]
    zoom: tuple[float | None, float | None]


def limits(description) -> Limits:
    """A ``spot_cam.PtzDescription`` (from ListPtz) as ``Limits``."""
    def pair(limit) -> tuple[float | None, float | None]:
        return (limit.min.value if limit.HasField("min") else None,
                limit.max.value if limit.HasField("max") else None)

    return Limits(description.name, pair(description.pan_limit),
                  pair(description.tilt_limit), pair(description.zoom_limit))


def check_move(heads: dict[str, Limits], name: str, pan: float, tilt: float,
               zoom: float) -> None:
    """ValueError, with the sentence a caller reads, unless ``name`` can go to the pose."""
    head = heads.get(name)
    if head is None:
        raise ValueError(f"unknown PTZ name {name!r}; this Spot CAM has {', '.join(sorted(heads))}")
    for axis, value in zip(AXES, (pan, tilt, zoom), strict=True):
        low, high = getattr(head, axis)
        if not math.isfinite(value):
            raise ValueError(f"{axis} must be a finite number, not {value}")
        if (low is not None and value < low) or (high is not None and value > high):
            unit = "" if axis == "zoom" else " degrees"
            raise ValueError(f"{name} {axis} {value:g}{unit} is outside "
                             f"[{low:g}, {high:g}]{unit}")


def head_msg(head: Limits) -> PtzHead:
    nan = math.nan
    msg = PtzHead(name=head.name)
    for axis in AXES:
        low, high = getattr(head, axis)
        setattr(msg, f"{axis}_min", nan if low is None else low)
        setattr(msg, f"{axis}_max", nan if high is None else high)
    return msg


def state_msg(position, stamp: Time) -> PtzState:
    """A ``spot_cam.PtzPosition`` as a ``PtzState``."""
    msg = PtzState(name=position.ptz.name, pan=position.pan.value, tilt=position.tilt.value,
                   zoom=position.zoom.value)
    msg.header.stamp = stamp
    return msg


def head_transform(pan_deg: float, tilt_deg: float, mount: tuple[float, float, float],
                   parent: str, child: str, stamp: Time) -> TransformStamped:
    """``parent`` (the body) -> ``child``, the frame that looks along its +x where the head
    points: pan turns it clockwise seen from above (yaw = -pan), tilt raises it (pitch =
    -tilt), about the head's centre at ``mount``."""
    w, x, y, z = euler2quat(-math.radians(pan_deg), -math.radians(tilt_deg), 0.0, "rzyx")
    out = TransformStamped()
    out.header.stamp, out.header.frame_id, out.child_frame_id = stamp, parent, child
    t = out.transform.translation
    t.x, t.y, t.z = (float(v) for v in mount)
    r = out.transform.rotation
    r.w, r.x, r.y, r.z = float(w), float(x), float(y), float(z)
    return out
