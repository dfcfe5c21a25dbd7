"""Joint commands from ROS, checked and turned into the API's UpdateRequests; without ROS.

``JointTargets`` holds what every joint was last told (position, velocity, load, gains) and
merges each ``spot_msgs/JointCommand`` (any subset of joints, by joint_states name) into it:
a command with NaN/inf, unknown or repeated names, mismatched lengths, positions outside the
model's limits, negative gains, or joints whose gains were never sent is refused whole with
a ``JointCommandError`` saying why, and changes nothing.
"""

from dataclasses import dataclass

import numpy as np
from bosdyn.api import robot_command_pb2
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp


class JointCommandError(ValueError):
    """A joint command refused before anything is sent."""


@dataclass(frozen=True)
class Targets:
    """Full arrays (one value per streamed joint, JointIndex order) for one UpdateRequest."""

    position: np.ndarray
    velocity: np.ndarray
    load: np.ndarray
    k_q_p: np.ndarray
    k_qd_p: np.ndarray


class JointTargets:
    """The targets of every joint streamed to the robot (12 legs, or 19 with the arm)."""

    def __init__(self, names: list[str], limits: np.ndarray) -> None:
        self.names = list(names)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.limits = np.asarray(limits, dtype=float)
        count = len(self.names)
        self.position = np.full(count, np.nan)
        self.velocity = np.zeros(count)
        self.load = np.zeros(count)
        self.k_q_p = np.full(count, np.nan)
        self.k_qd_p = np.full(count, np.nan)

    @property
    def incomplete(self) -> bool:
        """Some joint has no target yet (``hold`` fills it from the robot's state)."""
        return bool(np.isnan(self.position).any())

    def hold(self, position, load) -> None:
        """Joints without a target yet hold ``position`` with ``load`` feed-forward (the
        robot's measured state), so a command naming some joints leaves the rest still."""
        unset = np.isnan(self.position)
        self.position[unset] = np.asarray(position, dtype=float)[: len(self.names)][unset]
        self.load[unset] = np.asarray(load, dtype=float)[: len(self.names)][unset]

    def _checked_arrays(self, name, fields: dict) -> dict:
        """The command's arrays by field (None for an optional one left empty), refused
        unless its joints are known, named once, and each array is finite with one value
        per joint."""
        count = len(name)
        if count == 0:
            raise JointCommandError("no joints named")
        unknown = [n for n in name if n not in self.index]
        if unknown:
            raise JointCommandError(f"unknown joint names {unknown}; known: {self.names}")
        if len(set(name)) != count:
            raise JointCommandError("a joint is named twice")
        arrays = {}
        for key, values in fields.items():
            values = np.asarray(values, dtype=float)
            if key != "position" and values.size == 0:
                arrays[key] = None
                continue
            if values.size != count:
                raise JointCommandError(f"{key} has {values.size} values for {count} joints")
            if not np.isfinite(values).all():
                raise JointCommandError(f"{key} is not finite")
            arrays[key] = values
        if (arrays["k_q_p"] is None) != (arrays["k_qd_p"] is None):
            raise JointCommandError("k_q_p and k_qd_p must be sent together")
        return arrays

    def merge(self, name, position, velocity=(), load=(), k_q_p=(), k_qd_p=()) -> Targets:
        """Apply one command; the full targets to send. Raises JointCommandError."""
        arrays = self._checked_arrays(name, {
            "position": position, "velocity": velocity, "load": load, "k_q_p": k_q_p,
            "k_qd_p": k_qd_p})
        idx = np.array([self.index[n] for n in name])
        lo, hi = self.limits[idx, 0], self.limits[idx, 1]
        outside = (arrays["position"] < lo) | (arrays["position"] > hi)
        if outside.any():
            i = int(np.argmax(outside))
            raise JointCommandError(
                f"{name[i]}: position {arrays['position'][i]:.4f} rad is outside its limits "
                f"[{lo[i]:.4f}, {hi[i]:.4f}]")
        if arrays["k_q_p"] is not None and ((arrays["k_q_p"] < 0).any()
                                            or (arrays["k_qd_p"] < 0).any()):
            raise JointCommandError("gains must not be negative")
        k_q_p, k_qd_p = self.k_q_p.copy(), self.k_qd_p.copy()
        if arrays["k_q_p"] is not None:
            k_q_p[idx], k_qd_p[idx] = arrays["k_q_p"], arrays["k_qd_p"]
        missing = [self.names[i] for i in np.flatnonzero(np.isnan(k_q_p))]
        if missing:
            raise JointCommandError(f"no gains sent yet for {missing}")
        position = self.position.copy()
        position[idx] = arrays["position"]
        if np.isnan(position).any():
            raise JointCommandError("the robot's joint state is not known yet")
        velocity, load = self.velocity.copy(), self.load.copy()
        velocity[idx] = arrays["velocity"] if arrays["velocity"] is not None else 0.0
        load[idx] = arrays["load"] if arrays["load"] is not None else 0.0
        self.position, self.velocity, self.load = position, velocity, load
        self.k_q_p, self.k_qd_p = k_q_p, k_qd_p
        return Targets(position, velocity, load, k_q_p, k_qd_p)


def update_request(targets: Targets, key: int, end_robot_nsec: int, extrapolation_s: float,
                   gains: bool) -> robot_command_pb2.JointControlStreamRequest:
    """The JointControlStreamRequest for ``targets``; gains only when ``gains`` (the API wants
    them in a stream's first message and whenever they change)."""
    request = robot_command_pb2.JointControlStreamRequest()
    command = request.joint_command
    command.position.extend(targets.position.tolist())
    command.velocity.extend(targets.velocity.tolist())
    command.load.extend(targets.load.tolist())
    if gains:
        command.gains.k_q_p.extend(targets.k_q_p.tolist())
        command.gains.k_qd_p.extend(targets.k_qd_p.tolist())
    command.end_time.CopyFrom(Timestamp(seconds=end_robot_nsec // 1_000_000_000,
                                        nanos=end_robot_nsec % 1_000_000_000))
    command.extrapolation_duration.CopyFrom(Duration(nanos=int(extrapolation_s * 1e9)))
    command.user_command_key = key
    return request
