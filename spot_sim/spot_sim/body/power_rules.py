"""The rules of motor power on every physics tick: an e-stop cuts it (a settle-then-cut stop
sits the robot down first), a power transition completes, an empty battery cuts it.

A function of the robot's parts, called by ``SimRobot`` under its lock.
"""

from spot_sim.body.estop_manager import LEVEL_CUT, LEVEL_NONE


def step(robot, now: int) -> None:
    level = robot.estop.system_level()
    if level != LEVEL_NONE and robot.power.on_or_coming:
        if level == LEVEL_CUT or not robot.legs.posture.standing:
            robot.cut_motors(now)
        else:  # settle then cut: sit first
            robot.base.halt()
            robot.legs.start_posture(False, now)
    robot.power.step(now)
    if robot.battery.empty and robot.power.on:
        robot.cut_motors(now)
