"""The rules of mobility commands: what a command of each kind does to the legs and base
when it starts, and on every physics tick while it is in charge.

Functions of the robot's parts, called by ``SimRobot`` under its lock.
"""

from spot_sim import mobility
from spot_sim.body import joint_rules
from spot_sim.body.commands import Command, Feedback, finish

_STANDING_KINDS = ("stand", "velocity", "trajectory", "stance")
_LOWERING_KINDS = ("sit", "safe_power_off", "battery_change_pose")
_HALTING_KINDS = ("stop", "stop_fb", "freeze", "sit", "stand", "selfright", "stance",
                  "choreography")


def begin(robot, command: Command, now_ns: int) -> None:
    """A mobility command starts: what the legs and base aim for now."""
    kind, legs, base = command.kind, robot.legs, robot.base
    joint_rules.leave(legs, now_ns)
    if kind == "joint":
        base.halt()
        legs.joint_mode.arm(command.id, now_ns)
    if kind in _STANDING_KINDS:
        legs.start_posture(True, now_ns)
    elif kind in _LOWERING_KINDS:
        base.halt()
        if base.still:
            legs.start_posture(False, now_ns)
    elif kind == "selfright":
        base.halt()
        legs.start_posture(False, now_ns, robot.config.self_right_sec)
    if kind in _HALTING_KINDS:
        base.halt()
    if kind == "velocity":
        base.drive(command.velocity)


def step(robot, now: int) -> None:
    """Run the mobility command in charge: its end time, a trajectory's goal, lowering."""
    command = robot.book.mobility
    if command is None or command.done:
        return
    base = robot.base
    if command.end_ns is not None and now > command.end_ns and command.kind in (
            "velocity", "trajectory"):
        base.halt()
        # An expired velocity command is TIMED_OUT ("the command expired"); a trajectory
        # that reached its goal stays as it was.
        status = (Feedback.STATUS_COMMAND_TIMED_OUT if command.kind == "velocity"
                  or not mobility.goal_reached(base.odom_body, command.goal) else None)
        finish(command, status, now)
        return
    if command.kind == "trajectory":
        if mobility.goal_reached(base.odom_body, command.goal):
            base.halt()
        elif robot.legs.standing(now):
            config = robot.config
            base.target_velocity = mobility.goal_velocity(
                base.odom_body, command.goal, base.velocity, base.velocity_limit,
                config.max_linear_accel, config.max_angular_accel)
    elif command.kind in _LOWERING_KINDS:
        _step_lowering(robot, command, now)
    elif command.kind == "selfright" and not robot.legs.posture.moving(now):
        command.done = True


def _step_lowering(robot, command: Command, now: int) -> None:
    """Sit, safe power off and battery change pose: once still, lower the body; safe power
    off then cuts power, battery change pose is done once down."""
    posture = robot.legs.posture
    if robot.base.still and posture.standing:
        robot.legs.start_posture(False, now)
    down = not posture.moving(now)
    if (command.kind == "safe_power_off" and not posture.standing and down
            and robot.power.on):
        finish(command, None, now)  # completed: cutting power is its last step
        robot.cut_motors(now)
    if command.kind == "battery_change_pose" and down:
        command.done = True
