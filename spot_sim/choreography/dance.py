"""A dance in progress: the sequence's moves played in time, as kinematic body and leg motion
the robot's state reflects.

The dance is the robot's mobility command (kind ``choreography``), so any newer command
interrupts it and motor power loss ends it. Each physics step finds the slice
(``starting_slice + elapsed * slices_per_minute / 60``), the moves active at it, and sets the
body's offset from its standing pose (translation and roll/pitch/yaw: sways, circles, bobs,
holds) and walks the footprint for stepping moves (turn, pace, running man, bourree, hop,
jump, crawl, goto), spreading each move's displacement over its slices.
"""

import bisect
import math
from dataclasses import dataclass, field

import numpy as np
from bosdyn.api.spot import choreography_sequence_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim import mobility
from spot_sim.choreography.catalog import MoveSpec
from spot_sim.choreography.validation import read_param
from spot_sim.mobility import Se2

Status = choreography_sequence_pb2.ChoreographyStatusResponse
SLICES_PER_BEAT = 4


@dataclass
class Placed:
    """One move of the running sequence: where it sits in slices and its parameters."""

    move: choreography_sequence_pb2.MoveParams
    spec: MoveSpec
    start: int
    end: int
    slices_per_minute: float

    @property
    def seconds(self) -> float:
        return (self.end - self.start) * 60.0 / self.slices_per_minute

    def value(self, path: str, default: float | None = None) -> float:
        params = getattr(self.move, self.spec.params_field) if self.spec.params_field else None
        found = read_param(params, path) if params is not None else None
        if found is not None:
            return found
        spec = self.spec.parameters.get(path)
        return spec.default if spec is not None else (default or 0.0)


@dataclass
class Dance:
    execution_id: int
    sequence: choreography_sequence_pb2.ChoreographySequence
    placed: list[Placed]
    start_ns: int
    starting_slice: float
    motion: object = None  # the robot Command the dance runs as
    status: int = Status.STATUS_WAITING_FOR_START_TIME
    current_slice: float = 0.0
    active: list[Placed] = field(default_factory=list)
    started: set[int] = field(default_factory=set)

    @property
    def total_slices(self) -> int:
        return max((p.end for p in self.placed), default=0)

    @property
    def done(self) -> bool:
        return self.status not in (Status.STATUS_WAITING_FOR_START_TIME,
                                   Status.STATUS_DANCING)

    def slice_at(self, now_ns: int) -> float:
        minutes = (now_ns - self.start_ns) / 60e9
        return self.starting_slice + minutes * self.sequence.slices_per_minute


def _wave(phase: float) -> float:
    return math.sin(2.0 * math.pi * phase)


def body_offset(placed: Placed, slice_now: float, slice_seconds: float
                ) -> tuple[float, float, float, float, float, float]:
    """(x, y, z, roll, pitch, yaw) of the body from its standing pose for one active move."""
    name, v = placed.spec.name, placed.value
    length = max(placed.end - placed.start, 1)
    into = slice_now - placed.start
    p = min(max(into / length, 0.0), 1.0)
    beats = into / SLICES_PER_BEAT
    envelope = math.sin(math.pi * p)
    if name == "body_hold":
        entry, exit_ = max(v("entry_slices"), 1e-6), max(v("exit_slices"), 1e-6)
        ramp = min(1.0, into / entry, (length - into) / exit_)
        return (ramp * v("translation.x"), ramp * v("translation.y"),
                ramp * v("translation.z"), ramp * v("rotation.roll"),
                ramp * v("rotation.pitch"), ramp * v("rotation.yaw"))
    if name == "rotate_body":
        return (0.0, 0.0, 0.0, envelope * v("rotation.roll"), envelope * v("rotation.pitch"),
                envelope * v("rotation.yaw"))
    if name == "sway":
        return (0.0, v("horizontal") * _wave(p), v("vertical") * _wave(2 * p),
                v("roll") * _wave(p), 0.0, 0.0)
    if name == "butt_circle":
        circles = v("number_of_circles") or length / SLICES_PER_BEAT / v("beats_per_circle")
        angle = v("starting_angle") + 2.0 * math.pi * circles * p
        return (0.0, 0.0, 0.0, 2.0 * v("radius") * math.sin(angle),
                2.0 * v("radius") * math.cos(angle), 0.0)
    if name == "chicken_head":
        bob = _wave(beats / max(v("beats_per_cycle"), 1.0))
        return (v("bob_magnitude.x") * bob, v("bob_magnitude.y") * bob,
                v("bob_magnitude.z") * bob, 0.0, 0.0, 0.0)
    if name == "twerk":
        return (0.0, 0.0, -v("height") * abs(math.sin(math.pi * beats)), 0.0, 0.0, 0.0)
    if name == "figure8":
        angle = 2.0 * math.pi * beats / v("beats_per_cycle")
        return (0.0, v("width") / 2 * math.sin(angle), v("height") / 2 * math.sin(2 * angle),
                0.0, 0.0, 0.0)
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
        return (0.0, 0.0, 0.05 * envelope, 0.0, -0.35 * envelope, 0.0)
    if name in ("jump", "hop"):
        return (0.0, 0.0, 0.12 * abs(math.sin(math.pi * beats)), 0.0, 0.0, 0.0)
    if placed.spec.keyframes:
        return keyframe_pose(placed.spec.keyframes, p * placed.spec.keyframes[-1][0])
    return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


def keyframe_pose(keyframes, t: float) -> tuple[float, ...]:
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


def ground_motion(placed: Placed) -> Se2:
    """The footprint's whole displacement over one stepping move (body frame at its start)."""
    name, v = placed.spec.name, placed.value
    seconds = placed.seconds
    if name == "turn":
        return Se2(v("motion.x"), v("motion.y"), v("yaw"))
    if name == "pace_2step":
        return Se2(v("motion.x"), v("motion.y"), v("yaw"))
    if name == "jump":
        return Se2(v("translation.x"), v("translation.y"), v("yaw"))
    if name == "goto":
        return Se2(v("relative_position.x"), v("relative_position.y"), v("relative_yaw"))
    if name in ("running_man", "bourree", "hop", "crawl"):
        yaw_rate = v("yaw_rate") if name in ("bourree", "hop") else 0.0
        return Se2(v("velocity.x") * seconds, v("velocity.y") * seconds, yaw_rate * seconds)
    return Se2()


# Trot-like stepping: diagonal pairs (FL+HR, FR+HL) swing half a beat apart.
_LEG_PHASE = np.repeat(np.array([0.0, 0.5, 0.5, 0.0]), 3)
_SWING_SHAPE = np.tile(np.array([0.0, -0.6, 1.2]), 4)  # hip x, hip y, knee (rad per 0.1 m)


def leg_swing(placed: Placed, slice_now: float) -> np.ndarray:
    """Joint offsets (12) of a stepping move: each foot lifts in turn, swing_height high."""
    if "legs" not in placed.spec.controls or placed.spec.category not in ("step", "dynamic"):
        return np.zeros(12)
    height = placed.value("swing_height", 0.1) if "swing_height" in placed.spec.parameters \
        else 0.1
    beats = (slice_now - placed.start) / SLICES_PER_BEAT
    lift = np.maximum(np.sin(2.0 * np.pi * (beats + _LEG_PHASE)), 0.0)
    return _SWING_SHAPE * lift * (height / 0.1)


def offset_pose(parts: list[tuple[float, ...]]) -> SE3Pose:
    x, y, z, roll, pitch, yaw = (sum(values) for values in zip(*parts, strict=True)) \
        if parts else (0.0,) * 6
    rotation = Quat.from_yaw(yaw) * Quat.from_pitch(pitch) * Quat.from_roll(roll)
    return SE3Pose(x, y, z, rotation)


def step_dance(robot, dance: Dance, now_ns: int, dt: float) -> None:
    """Advance ``dance`` to ``now_ns`` on ``robot`` (under the robot's lock)."""
    if dance.motion is not None and robot.mobility_command is not dance.motion:
        dance.status = (Status.STATUS_INTERRUPTED if robot.powered
                        else Status.STATUS_POWERED_OFF)
        dance.active = []
        robot.body_offset = SE3Pose(0, 0, 0, Quat())
        robot.leg_swing = np.zeros(12)
        return
    if robot.active_fault():
        dance.status = Status.STATUS_FALLEN
        return
    current = dance.slice_at(now_ns)
    if current < dance.starting_slice:
        dance.status = Status.STATUS_WAITING_FOR_START_TIME
        return
    dance.status, dance.current_slice = Status.STATUS_DANCING, current
    if current >= dance.total_slices:
        dance.status, dance.active = Status.STATUS_COMPLETED_SEQUENCE, []
        robot.body_offset = SE3Pose(0, 0, 0, Quat())
        robot.leg_swing = np.zeros(12)
        robot.finish_command(dance.motion)
        return
    slice_seconds = 60.0 / dance.sequence.slices_per_minute
    dance.active = [p for p in dance.placed if p.start <= current < p.end]
    parts, swing = [], np.zeros(12)
    for index, placed in enumerate(dance.placed):
        if not placed.start <= current < placed.end:
            continue
        if index not in dance.started:
            dance.started.add(index)
            if placed.spec.name == "sit":
                robot.start_posture(False, now_ns, (placed.end - placed.start) * slice_seconds)
            elif placed.spec.name == "stand":
                robot.start_posture(True, now_ns, (placed.end - placed.start) * slice_seconds)
        parts.append(body_offset(placed, current, slice_seconds))
        swing += leg_swing(placed, current)
        total = ground_motion(placed)
        if total != Se2():
            fraction = dt / placed.seconds
            robot.odom_body = mobility.compose(
                robot.odom_body, Se2(total.x * fraction, total.y * fraction,
                                     total.yaw * fraction))
    robot.body_offset = offset_pose(parts)
    robot.leg_swing = swing
