"""Constrained manipulation of the simulated arm: the hand moves a grasped object along its
constraint at the commanded speed (velocity mode) or by the commanded distance or angle
(position mode).

The simulated scene has no articulated objects: what the hand holds moves freely, so the
constraint the robot estimates from the first motion is the initial wrench direction itself.
Linear and circular task types move the hand along the initial force direction; the
rotational task turns it about the initial torque axis; hold-pose keeps it still. The arm
is stuck when its joints cannot give at least half the commanded motion (joint limits, the
edge of its reach); without a held object the grasp is lost and the hand holds still.
"""

from dataclasses import dataclass

import numpy as np

STUCK_FRACTION = 0.5  # below this share of the commanded motion, the arm is stuck
ESTIMATION_TRAVEL = (0.05, 0.2)  # m or rad of motion the robot needs to estimate a constraint


@dataclass
class Constrained:
    """The state of one constrained manipulation command (body frame)."""

    task_type: int
    direction: np.ndarray  # (3,) unit: the force direction, or the torque axis
    rotational: bool
    speed: float  # m/s or rad/s, signed along ``direction``
    travel_left: float | None  # position mode: m or rad still to go; None in velocity mode
    wrench_limit: float  # N or N m
    moved: float = 0.0  # m or rad travelled so far
    stuck: bool = False
    grasp_lost: bool = False

    @property
    def estimated(self) -> bool:
        return self.moved >= ESTIMATION_TRAVEL[1 if self.rotational else 0]

    def step(self, arm, dt: float) -> None:
        """One physics tick of ``arm`` (a ``spot_sim.body.arm.model.Arm``) under this command."""
        if not arm.holding:
            self.grasp_lost = True
        if self.grasp_lost or self.speed == 0.0 or dt <= 0:
            return
        amount = abs(self.speed) * dt
        if self.travel_left is not None:
            amount = min(amount, self.travel_left)
            if amount <= 0:
                return
        motion = self.direction * np.copysign(amount / dt, self.speed)
        twist = np.concatenate([np.zeros(3), motion] if self.rotational else [motion,
                                                                                np.zeros(3)])
        achieved = arm.follow_twist(twist, dt)
        self.stuck = achieved < STUCK_FRACTION
        travelled = max(0.0, achieved) * amount
        self.moved += travelled
        if self.travel_left is not None:
            self.travel_left = max(0.0, self.travel_left - travelled)
            if self.stuck:  # a position move that cannot go on stops where it is
                self.travel_left = 0.0
