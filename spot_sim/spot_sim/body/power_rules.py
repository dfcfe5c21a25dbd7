"""The rules of motor power on every physics tick: an e-stop cuts it (a settle-then-cut stop
sits the robot down first), a power transition completes, an empty battery cuts it.

A function of the robot's parts, called by ``SimRobot`` under its lock.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from spot_sim.body.base import Base
from spot_sim.body.battery import Battery
from spot_sim.body.estop_manager import LEVEL_CUT, LEVEL_NONE
from spot_sim.body.legs import Legs
from spot_sim.body.power import Power

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot

_LOG = logging.getLogger(__name__)


def step(robot: SimRobot, now: int) -> None:
    level = robot.estop.system_level()
    cut_by_estop = False
    with robot.parts(Power, Legs, Base, Battery) as (power, legs, base, battery):
        if level != LEVEL_NONE and power.on_or_coming:
            if level == LEVEL_CUT or not legs.posture.standing:
                robot.cut_motors(now)
                cut_by_estop = True
            else:  # settle then cut: sit first
                base.halt()
                legs.start_posture(False, now)
        power.step(now)
        if battery.empty and power.on:
            robot.cut_motors(now)
    if cut_by_estop:
        _LOG.warning("e-stop cut motor power; endpoints (name, level, s since a valid "
                     "check-in): %s", robot.estop.report())
