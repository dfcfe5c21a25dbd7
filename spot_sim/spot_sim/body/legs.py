"""The legs: sit/stand posture and its transitions, a dance's stepping, and joint mode."""

from dataclasses import dataclass

import numpy as np

from spot_sim.body import joint_control, kinematics
from spot_sim.body.joint_control import JointMode

RETURN_TO_STAND_S = 1.0  # the stand controller takes the legs back from joint mode
SUPPORTED_ABOVE_SIT_M = 0.02  # higher than sitting by this much, the legs carry the body


@dataclass
class Posture:
    """The legs' current state and any sit/stand transition under way."""

    joints: np.ndarray
    start: np.ndarray
    target: np.ndarray
    t0_ns: int = 0
    t1_ns: int = 0
    standing: bool = False  # the posture the transition is heading to (or has reached)

    def moving(self, now_ns: int) -> bool:
        return now_ns < self.t1_ns


class Legs:
    def __init__(self, has_arm: bool, posture_change_sec: float) -> None:
        sit = kinematics.leg_joint_positions(kinematics.SIT_HEIGHT)
        self._change_sec = posture_change_sec
        self.posture = Posture(sit.copy(), sit.copy(), sit.copy())
        self.velocity = np.zeros_like(sit)
        self.swing = np.zeros_like(sit)  # a dance's stepping, added to the leg joints
        self.height_offset = 0.0  # the standing height's offset from mobility params
        self.joint_mode = JointMode(has_arm)

    @property
    def body_height(self) -> float:
        return kinematics.body_height_from_joints(self.posture.joints)

    @property
    def supported(self) -> bool:
        """Whether the legs carry the body (it is above the sitting height)."""
        return self.body_height > kinematics.SIT_HEIGHT + SUPPORTED_ABOVE_SIT_M

    def standing(self, now_ns: int) -> bool:
        return self.posture.standing and not self.posture.moving(now_ns)

    def start_posture(self, stand: bool, now_ns: int, duration: float | None = None) -> None:
        """Begin moving to the standing or sitting pose over ``duration`` seconds."""
        height = kinematics.STAND_HEIGHT + self.height_offset if stand else kinematics.SIT_HEIGHT
        target = kinematics.leg_joint_positions(height)
        posture = self.posture
        if posture.standing == stand and np.allclose(posture.target, target):
            return
        duration = self._change_sec if duration is None else duration
        posture.start = posture.joints.copy()
        posture.target = target
        posture.t0_ns = now_ns
        posture.t1_ns = now_ns + int(duration * 1e9)
        posture.standing = stand

    def return_to_stand(self, now_ns: int) -> None:
        """After joint mode: back to standing from wherever the joints are."""
        posture = self.posture
        posture.start = posture.joints.copy()
        posture.target = kinematics.leg_joint_positions(
            kinematics.STAND_HEIGHT + self.height_offset)
        posture.t0_ns, posture.t1_ns = now_ns, now_ns + int(RETURN_TO_STAND_S * 1e9)
        posture.standing = True

    def step_posture(self, now_ns: int, dt: float) -> None:
        posture = self.posture
        previous = posture.joints.copy()
        if posture.t1_ns > posture.t0_ns:
            fraction = min(1.0, max(0.0, (now_ns - posture.t0_ns)
                                    / (posture.t1_ns - posture.t0_ns)))
        else:
            fraction = 1.0
        posture.joints = posture.start + (posture.target - posture.start) * fraction
        self.velocity = (posture.joints - previous) / dt if dt > 0 else previous * 0

    def loads(self, powered: bool) -> np.ndarray:
        """Every joint's load (N m): the servo's in joint mode; otherwise what holds the
        robot's weight while the motors are on and the legs carry it."""
        mode = self.joint_mode
        if mode.engaged:
            return mode.servo.load.copy()
        loads = np.zeros(mode.servo.count)
        if powered and self.supported:
            loads[:12] = joint_control.weight_loads(self.posture.joints, mode.servo.mass)
        return loads
