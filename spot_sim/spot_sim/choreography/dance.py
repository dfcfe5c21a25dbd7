"""A dance in progress: the sequence's moves played in time, as kinematic body, leg and arm
motion the robot's state reflects.

The dance is the robot's mobility command (kind ``choreography``), so any newer command
interrupts it and motor power loss ends it. Each physics step finds the slice
(``starting_slice + elapsed * slices_per_minute / 60``) and the moves active at it. When a move
starts it is set up: sitting and standing, frame snapshots, where a stepping move takes the
footprint (relative, or absolute in the dance frame: the robot's pose when the dance began),
the arm's trajectory. Every step then sets the body's offset from its standing pose (the leg
state's posture, kneeling or sprawled, plus the body moves), the leg joint offsets, and walks
the footprint through each stepping move's displacement over its slices.
"""

from dataclasses import dataclass, field

import numpy as np
from bosdyn.api.spot import choreography_sequence_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim.body import mobility
from spot_sim.body.mobility import Se2
from spot_sim.body.reading import ArmReading
from spot_sim.body.robot import SimRobot
from spot_sim.choreography.arm_moves import arm_move
from spot_sim.choreography.body import ZERO, Offset, blend, body_offset, state_posture
from spot_sim.choreography.legs import ground_motion, leg_offsets
from spot_sim.choreography.placed import Placed

Status = choreography_sequence_pb2.ChoreographyStatusResponse
State = choreography_sequence_pb2.MoveInfo.TransitionState
_STANDS_UP = ("stand_up", "self_right", "kneel_to_stand", "kneel_to_stand_fast")
__all__ = ["Dance", "Placed", "step_dance"]


@dataclass
class Body:
    """The body as one step of a dance sees it: where it is in odom (after the walking this
    step has done so far), its legs' posture joints and its arm. The step then asks the
    robot to take the pose (``SimRobot.dance_pose``)."""

    odom_body: Se2
    posture: np.ndarray
    arm: ArmReading | None

    @classmethod
    def read(cls, robot: SimRobot) -> "Body":
        return cls(robot.odom_body(), robot.posture_joints(), robot.arm_reading())


@dataclass
class Dance:
    execution_id: int
    sequence: choreography_sequence_pb2.ChoreographySequence
    placed: list[Placed]
    start_ns: int
    starting_slice: float
    motion: int | None = None  # the id of the robot command the dance runs as
    status: int = Status.STATUS_WAITING_FOR_START_TIME
    current_slice: float = 0.0
    active: list[Placed] = field(default_factory=list)
    started: set[int] = field(default_factory=set)
    frames: dict[int, Se2] = field(default_factory=dict)  # frame_snapshot frames, in odom
    motions: dict[int, Se2] = field(default_factory=dict)  # each stepping move's displacement
    body: Offset = ZERO  # the body moves' offset at the last step (body_const holds it)
    held: Offset = ZERO
    transitions: list[tuple[int, int, Offset, Offset]] = field(default_factory=list)

    def __post_init__(self) -> None:
        state = self.sequence.entrance_state or State.TRANSITION_STATE_STAND
        self.initial_posture = posture = state_posture(state)
        for placed in sorted((p for p in self.placed if "legs" in p.spec.controls),
                             key=lambda p: p.start):
            after = state_posture(placed.spec.exit, placed)
            if after != posture:
                self.transitions.append((placed.start, placed.end, posture, after))
            posture = after

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

    def posture_at(self, slice_now: float) -> Offset:
        """The leg state's body posture: kneeling, sprawled, or blending between them."""
        posture = self.initial_posture
        for start, end, before, after in self.transitions:
            if slice_now >= end:
                posture = after
            elif slice_now >= start:
                posture = blend(before, after, (slice_now - start) / max(end - start, 1))
        return posture


def offset_pose(parts: list[tuple[float, ...]]) -> SE3Pose:
    x, y, z, roll, pitch, yaw = (sum(values) for values in zip(*parts, strict=True)) \
        if parts else (0.0,) * 6
    rotation = Quat.from_yaw(yaw) * Quat.from_pitch(pitch) * Quat.from_roll(roll)
    return SE3Pose(x, y, z, rotation)


def _start_move(robot: SimRobot, body: Body, dance: Dance, index: int, placed: Placed,
                now_ns: int) -> None:
    name = placed.spec.name
    dance.started.add(index)
    if name == "sit":
        robot.start_posture(False, now_ns, placed.seconds)
    elif name in _STANDS_UP and not robot.standing:
        robot.start_posture(True, now_ns, placed.seconds)
    elif name == "frame_snapshot":
        dance.frames[int(placed.value("frame_id"))] = body.odom_body
    elif name == "body_const":
        dance.held = dance.body
    motion = ground_motion(placed, body.odom_body, dance.frames[0])
    if motion != Se2():
        dance.motions[index] = motion
    if body.arm is not None and {"arm", "gripper"} & set(placed.spec.controls):
        robot.start_arm(*arm_move(placed, body.arm, dance.motion, now_ns, robot.body_height))


def _rest(robot: SimRobot) -> None:
    robot.dance_pose(SE3Pose(0, 0, 0, Quat()), np.zeros(12))


def _interrupt(robot: SimRobot, dance: Dance) -> None:
    """Another command took the body (or power went): the dance and its arm move end."""
    dance.status = (Status.STATUS_INTERRUPTED if robot.powered
                    else Status.STATUS_POWERED_OFF)
    dance.active = []
    _rest(robot)
    robot.end_arm_command(dance.motion)


def _step_moves(robot: SimRobot, body: Body, dance: Dance, current: float, now_ns: int,
                dt: float) -> tuple:
    """Start the moves that begin at slice ``current``, walk the robot by the ground motion
    of those that move it; (the active moves' body offsets, the legs' swing)."""
    slice_seconds = 60.0 / dance.sequence.slices_per_minute
    offsets, swing = [], np.zeros(12)
    for index, placed in enumerate(dance.placed):
        if not placed.start <= current < placed.end:
            continue
        if index not in dance.started:
            _start_move(robot, body, dance, index, placed, now_ns)
        if placed.spec.name == "body_const":
            offsets.append(dance.held)
        elif "body" in placed.spec.controls or placed.spec.category == "dynamic":
            offsets.append(body_offset(placed, current, slice_seconds))
        if "legs" in placed.spec.controls:
            swing += leg_offsets(placed, current, body.posture)
        total = dance.motions.get(index)
        if total is not None:
            fraction = dt / placed.seconds
            body.odom_body = mobility.compose(
                body.odom_body, Se2(total.x * fraction, total.y * fraction,
                                    total.yaw * fraction))
    return offsets, swing


def start_dance(robot: SimRobot, dance: Dance, stand: bool) -> bool:
    """Begin ``dance`` on ``robot`` as one step of it, getting up or down to its entrance
    posture; False if the robot cannot dance now (motors off, a fault)."""
    if robot.motion_refusal() is not None:
        return False
    dance.motion = robot.new_command("choreography")
    if robot.posture_standing() != stand:
        robot.start_posture(stand, robot.clock.now_nsec(), robot.config.posture_change_sec)
    return True


def step_dance(robot: SimRobot, dance: Dance, now_ns: int, dt: float) -> None:
    """Advance ``dance`` to ``now_ns`` on ``robot`` (the physics loop's hook: no physics
    tick runs meanwhile)."""
    if dance.motion is not None and not robot.in_charge(dance.motion):
        _interrupt(robot, dance)
        return
    if robot.active_fault():
        dance.status = Status.STATUS_FALLEN
        return
    current = dance.slice_at(now_ns)
    if current < dance.starting_slice:
        dance.status = Status.STATUS_WAITING_FOR_START_TIME
        return
    dance.status, dance.current_slice = Status.STATUS_DANCING, current
    body = Body.read(robot)
    start = body.odom_body
    dance.frames.setdefault(0, start)  # the dance frame: where it began
    if current >= dance.total_slices:
        dance.status, dance.active = Status.STATUS_COMPLETED_SEQUENCE, []
        _rest(robot)
        robot.finish_command(dance.motion)
        return
    dance.active = [p for p in dance.placed if p.start <= current < p.end]
    offsets, swing = _step_moves(robot, body, dance, current, now_ns, dt)
    dance.body = tuple(sum(values) for values in zip(*offsets, strict=True)) if offsets else ZERO
    robot.dance_pose(offset_pose([dance.posture_at(current), dance.body]), swing,
                     mobility.compose(mobility.inverse(start), body.odom_body))
