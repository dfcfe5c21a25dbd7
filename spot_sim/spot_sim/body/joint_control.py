"""Joint-level control of the simulated Spot (the joint-control API): joint mode, the servo
law integrated in 1 ms steps, and the IMU the 333 Hz state stream reports.

The servo law is the one Boston Dynamics documents for the API:
``load = k_q_p (q_d - q) + k_qd_p (qd_d - qd) + load_d``, saturated at each joint's effort
limit, with desired positions clipped to the joint limits. Each joint is a rotor with a
reflected inertia and friction; the ground carries the robot through its feet, so the legs
hold its weight: ``I qdd = load + J^T F_ground - b qd``. Values marked [OURS] in
``urdf/spot_kinematics.yaml`` (or here) are the simulator's own.
"""

from dataclasses import dataclass

import numpy as np

from spot_sim.body import kinematics
from spot_sim.body.arm import kinematics as arm_kinematics
from spot_sim.body.model import GEOMETRY

DT_S = 0.001  # integration step of the servo law
G = 9.81
IMU_RATE_HZ = 333.0  # [OURS] one IMU packet every 3 ms, on the IMU's own clock
IMU_LINK = "body"  # [OURS] the IMU sits in the body, slightly behind its origin
IMU_POSITION = (-0.06, 0.0, 0.01)  # [OURS] m, in the body frame
MAX_POSITION_ERROR = 0.5  # [OURS] rad: targets further than this from a joint are TOO_DISTANT
# [OURS] reflected rotor inertia (kg m^2) and viscous friction (N m s / rad) per joint kind.
ROTOR_INERTIA = {"hx": 0.05, "hy": 0.05, "kn": 0.04, "arm": 0.03, "f1x": 0.002}
FRICTION = {"hx": 0.5, "hy": 0.5, "kn": 0.5, "arm": 0.3, "f1x": 0.02}
_LEG_NAMES = {"fl": "front_left", "fr": "front_right", "hl": "rear_left", "hr": "rear_right"}


def _leg_table() -> tuple[np.ndarray, np.ndarray]:
    legs = GEOMETRY["legs"]
    limits, effort = [], []
    for joint in kinematics.LEG_JOINTS:
        leg, kind = joint.split(".")
        key = {"hx": "hip_x", "hy": "hip_y", "kn": "knee"}[kind]
        entry = legs["limits"][key]
        limits.append(entry if kind == "hx" else entry[_LEG_NAMES[leg]])
        effort.append(legs["effort"][key])
    return np.array(limits, dtype=float), np.array(effort, dtype=float)


def _mass(has_arm: bool) -> float:
    """The robot's mass (kg) from the model: body, legs and, with one, the arm."""
    total = GEOMETRY["body"]["inertial"]["mass"]
    for leg in GEOMETRY["legs"]["inertial"].values():
        total += sum(link["mass"] for link in leg.values())
    if has_arm:
        total += sum(link["mass"] for link in GEOMETRY["arm"]["inertial"].values())
    return float(total)


def _kind(joint: str) -> str:
    """hx, hy or kn for a leg joint; arm or f1x for the arm's."""
    if joint.startswith("arm0."):
        return "f1x" if joint.endswith("f1x") else "arm"
    return joint.split(".")[1]


def foot_jacobians(joints: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """(4, 3, 3): d(foot position in body) / d(hx, hy, kn) of each leg, by finite differences."""
    base = kinematics.foot_positions_in_body(joints)
    out = np.empty((4, 3, 3))
    for j in range(3):
        moved = np.array(joints[:12], dtype=float)
        moved[j::3] += step
        out[:, :, j] = (kinematics.foot_positions_in_body(moved) - base) / step
    return out


def weight_loads(joints: np.ndarray, mass: float) -> np.ndarray:
    """The 12 leg joint loads (N m) that hold a robot of ``mass`` standing on all four feet
    at ``joints``: each foot pushes the ground with a quarter of its weight."""
    force = np.array([0.0, 0.0, mass * G / 4])  # the ground on each foot, body frame
    return -np.einsum("lij,i->lj", foot_jacobians(joints), force).ravel()


@dataclass
class Setpoint:
    """One UpdateRequest as the servo uses it (arrays over the joints it commands)."""

    position: np.ndarray
    velocity: np.ndarray
    load: np.ndarray
    k_q_p: np.ndarray
    k_qd_p: np.ndarray
    reference_ns: int
    extrapolation_ns: int
    end_ns: int
    velocity_limit: float | None = None

    def desired(self, now_ns: int) -> np.ndarray:
        """Desired positions at ``now_ns``: extrapolated along the desired velocity from the
        reference time for at most the extrapolation duration (never backwards)."""
        ahead = min(max(now_ns - self.reference_ns, 0), self.extrapolation_ns,
                    max(self.end_ns - self.reference_ns, 0))
        return self.position + self.velocity * (ahead / 1e9)


class JointServo:
    """The joints under the servo law. Arrays cover the 12 leg joints, then the 7 arm joints
    (with an arm): ``LEG_JOINTS + ARM_JOINTS`` order, the API's JointIndex order."""

    def __init__(self, has_arm: bool) -> None:
        leg_limits, leg_effort = _leg_table()
        arm = GEOMETRY["arm"]
        self.names = kinematics.LEG_JOINTS + (kinematics.ARM_JOINTS if has_arm else ())
        self.count = len(self.names)
        limits = [leg_limits]
        effort = [leg_effort]
        if has_arm:
            limits += [arm_kinematics.JOINT_LIMITS,
                       np.array([sorted(arm_kinematics.GRIPPER_LIMITS)])]
            effort += [np.array(arm["effort"]), np.array([arm["gripper_effort"]])]
        self.limits = np.concatenate(limits)
        self.effort = np.concatenate(effort)
        self.mass = _mass(has_arm)
        kinds = [_kind(name) for name in self.names]
        stand = kinematics.leg_joint_positions(kinematics.STAND_HEIGHT)
        # The body's share carried by each foot adds to the legs' inertia: m/4 |J_col|^2.
        reach = np.concatenate([(np.linalg.norm(foot_jacobians(stand), axis=1) ** 2).ravel(),
                                np.zeros(self.count - 12)])
        self.inertia = np.array([ROTOR_INERTIA[k] for k in kinds]) + self.mass / 4 * reach
        self.friction = np.array([FRICTION[k] for k in kinds])
        self.q = np.zeros(self.count)
        self.qd = np.zeros(self.count)
        self.load = np.zeros(self.count)
        self.setpoint: Setpoint | None = None
        self.gains: tuple[np.ndarray, np.ndarray] | None = None
        self.t_ns = 0

    def reset(self, q: np.ndarray, qd: np.ndarray, now_ns: int) -> None:
        """Take the joints over where they are."""
        self.q = np.array(q, dtype=float)
        self.qd = np.array(qd, dtype=float)
        self.t_ns = now_ns
        self.setpoint = None

    def advance(self, now_ns: int, supported: bool) -> float:
        """Integrate to ``now_ns`` in DT_S steps; the fastest joint speed seen (rad/s).
        ``supported``: the feet carry the robot (the legs feel its weight)."""
        fastest = 0.0
        setpoint = self.setpoint
        if setpoint is None or now_ns <= self.t_ns:
            return fastest
        ground = np.zeros(self.count)
        if supported:
            ground[:12] = -weight_loads(self.q, self.mass)
        n = setpoint.position.size
        lo, hi = self.limits[:, 0], self.limits[:, 1]
        step_ns = int(DT_S * 1e9)
        while self.t_ns < now_ns:
            t = min(self.t_ns + step_ns, now_ns)
            dt = (t - self.t_ns) / 1e9
            self.t_ns = t
            desired = np.clip(setpoint.desired(t), lo[:n], hi[:n])
            load = (setpoint.k_q_p * (desired - self.q[:n])
                    + setpoint.k_qd_p * (setpoint.velocity - self.qd[:n]) + setpoint.load)
            self.load[:n] = np.clip(load, -self.effort[:n], self.effort[:n])
            accel = (self.load + ground - self.friction * self.qd) / self.inertia
            accel[n:] = 0.0  # joints the stream does not command are held by their own control
            self.qd += accel * dt
            self.q += self.qd * dt
            below, above = self.q < lo, self.q > hi
            if below.any() or above.any():  # hard stops
                self.q = np.clip(self.q, lo, hi)
                self.qd[below | above] = 0.0
            fastest = max(fastest, float(np.abs(self.qd).max()))
        return fastest


class Imu:
    """IMU packets on the IMU's own 333 Hz clock, each stamped with its sample time."""

    def __init__(self) -> None:
        self.period_ns = int(1e9 / IMU_RATE_HZ)

    def samples(self, after_ns: int | None, now_ns: int) -> list[int]:
        """Sample times in (``after_ns``, ``now_ns``]: the packets a stream has not sent yet
        (each stream keeps its own ``after_ns``); at most 8, so a late reader gets no burst.
        ``after_ns`` None: the newest sample only."""
        last = now_ns - now_ns % self.period_ns
        if after_ns is None:
            return [last]
        first = after_ns - after_ns % self.period_ns + self.period_ns
        return list(range(max(first, last - 7 * self.period_ns), last + 1, self.period_ns))


class StreamRefusedError(Exception):
    """A JointControlStreamRequest the robot refuses: the stream ends with ``status``."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status  # a JointControlStreamResponse.Status name


def _timing(update, now_ns: int) -> tuple[int, int, int]:
    """(reference, extrapolation, end) ns of an update; refused without an end time or when
    it has passed."""
    if not update.HasField("end_time"):
        raise StreamRefusedError("STATUS_INVALID_REQUEST", "end_time is required")
    end_ns = update.end_time.seconds * 1_000_000_000 + update.end_time.nanos
    if end_ns <= now_ns:
        raise StreamRefusedError("STATUS_EXPIRED", f"end_time passed "
                                 f"{(now_ns - end_ns) / 1e6:.1f} ms before it arrived")
    reference_ns = now_ns
    if update.HasField("reference_time"):
        reference_ns = update.reference_time.seconds * 1_000_000_000 + \
            update.reference_time.nanos
    extrapolation = update.extrapolation_duration
    return reference_ns, extrapolation.seconds * 1_000_000_000 + extrapolation.nanos, end_ns


class JointMode:
    """Joint mode of one robot: entered by a RobotCommand with a ``joint_request``, driven by
    the command stream's setpoints, left when they expire (the stand controller takes the
    robot back), when another command overrides it, or on a fault."""

    def __init__(self, has_arm: bool) -> None:
        self.servo = JointServo(has_arm)
        self.imu = Imu()
        self.command_id: int | None = None  # the RobotCommand that armed joint mode
        self.engaged = False  # the servo law drives the joints (a setpoint arrived)
        self.pending: Setpoint | None = None  # the stream's latest setpoint
        self.last_key = 0  # the latest user_command_key received, and when (robot ns)
        self.last_key_ns = 0

    @property
    def armed(self) -> bool:
        return self.command_id is not None

    def arm(self, command_id: int, now_ns: int) -> None:
        self.command_id = command_id
        self.engaged = False

    def disarm(self) -> None:
        self.command_id = None
        self.engaged = False
        self.servo.setpoint = None

    def receive(self, update, gains_known: bool, now_ns: int,
                current_q: np.ndarray) -> Setpoint:
        """Check one UpdateRequest (``bosdyn.api.JointCommand.UpdateRequest``) and return its
        setpoint; raises StreamRefusedError. ``gains_known``: the stream already sent gains."""
        n = len(update.position)
        has_gains = self._check_shape(update, n, gains_known)
        values = [update.position, update.velocity, update.load, update.gains.k_q_p,
                  update.gains.k_qd_p]
        arrays = [np.array(v, dtype=float) for v in values]
        if not all(np.isfinite(a).all() for a in arrays):
            raise StreamRefusedError("STATUS_INVALID_REQUEST", "a joint value is not finite")
        if has_gains and ((arrays[3] < 0).any() or (arrays[4] < 0).any()):
            raise StreamRefusedError("STATUS_INVALID_REQUEST", "gains must not be negative")
        limit = None
        if update.HasField("velocity_safety_limit"):
            limit = float(update.velocity_safety_limit.value)
            if not limit > 0:
                raise StreamRefusedError("STATUS_INVALID_REQUEST",
                                    "velocity_safety_limit must be positive")
        reference_ns, extrapolation_ns, end_ns = _timing(update, now_ns)
        far = np.abs(arrays[0] - current_q[:n]) > MAX_POSITION_ERROR
        if far.any():
            joint = self.servo.names[int(np.argmax(far))]
            raise StreamRefusedError("STATUS_TOO_DISTANT",
                                f"{joint}: target more than {MAX_POSITION_ERROR} rad from "
                                "where the joint is")
        if has_gains:
            gains = (arrays[3], arrays[4])
        else:
            gains = self.servo.gains
            if gains is None or gains[0].size != n:
                raise StreamRefusedError("STATUS_INVALID_REQUEST",
                                    "the gains sent do not cover this many joints")
        self.servo.gains = gains
        return Setpoint(arrays[0], arrays[1], arrays[2], gains[0], gains[1], reference_ns,
                        max(extrapolation_ns, 0), end_ns, limit)

    def _check_shape(self, update, n: int, gains_known: bool) -> bool:
        """Refuse an update whose arrays do not have one value per joint, or that has no
        gains while the stream has sent none; whether it carries gains."""
        if n not in (12, self.servo.count):
            raise StreamRefusedError("STATUS_INVALID_REQUEST",
                                f"{n} joint positions; this robot takes 12 (legs) or "
                                f"{self.servo.count}")
        if len(update.velocity) != n or len(update.load) != n:
            raise StreamRefusedError("STATUS_INVALID_REQUEST",
                                "position, velocity and load must have one value per joint")
        has_gains = bool(len(update.gains.k_q_p) or len(update.gains.k_qd_p))
        if has_gains and (len(update.gains.k_q_p) != n or len(update.gains.k_qd_p) != n):
            raise StreamRefusedError("STATUS_INVALID_REQUEST",
                                "gains must have one k_q_p and one k_qd_p per joint")
        if not has_gains and not gains_known:
            raise StreamRefusedError("STATUS_INVALID_REQUEST",
                                "gains are required in the first message of the stream")
        return has_gains

    # The robot (SimRobot, under its lock) calls these.
    def offer(self, setpoint: Setpoint) -> None:
        """A checked setpoint from the stream: used now when engaged, kept for when joint
        mode is entered otherwise."""
        self.pending = setpoint
        if self.engaged:
            self.servo.setpoint = setpoint

    @property
    def drives_arm(self) -> bool:
        setpoint = self.servo.setpoint
        return self.engaged and setpoint is not None and setpoint.position.size > 12

    def engage(self, q: np.ndarray, qd: np.ndarray, now_ns: int) -> bool:
        """Start the servo law from the joints' state when a live setpoint is waiting."""
        pending = self.pending
        if pending is None or pending.end_ns <= now_ns:
            return False
        self.servo.reset(q, qd, now_ns)
        self.servo.setpoint = pending
        self.engaged = True
        return True
