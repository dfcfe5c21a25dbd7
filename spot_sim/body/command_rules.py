"""The rules of mobility commands: what a command of each kind does to the legs and base
when it starts, and on every physics tick while it is in charge.

Functions of the robot's parts, called by ``SimRobot`` under its lock.
"""

import math

from spot_sim.body import joint_rules, mobility
from spot_sim.body.commands import Command, Feedback, finish

_STANDING_KINDS = ("stand", "velocity", "trajectory", "stance", "follow_arm",
                   "constrained_manipulation")
_LOWERING_KINDS = ("sit", "safe_power_off", "battery_change_pose")
_HALTING_KINDS = ("stop", "stop_fb", "freeze", "sit", "stand", "selfright", "stance",
                  "choreography", "follow_arm", "constrained_manipulation")
_TIMED_KINDS = ("velocity", "trajectory", "constrained_manipulation")


def begin(robot, command: Command, now_ns: int) -> None:
    """A mobility command starts: what the legs and base aim for now."""
    kind, legs, base = command.kind, robot.legs, robot.base
    joint_rules.leave(legs, now_ns)
    _end_constrained_manipulation(robot.arm)
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
    if command.end_ns is not None and now > command.end_ns and command.kind in _TIMED_KINDS:
        base.halt()
        # An expired velocity command is TIMED_OUT ("the command expired"); a trajectory
        # that reached its goal stays as it was.
        status = (Feedback.STATUS_COMMAND_TIMED_OUT if command.kind != "trajectory"
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
    elif command.kind == "follow_arm":
        _step_follow_arm(robot, command, now)
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


def _end_constrained_manipulation(arm) -> None:
    """A new mobility command ends a constrained manipulation in progress."""
    if arm is not None and arm.task is not None and arm.task.kind == "constrained" and \
            not arm.task.done:
        arm.task.overridden = arm.task.done = True


def _step_follow_arm(robot, command: Command, now: int) -> None:
    """Follow-arm: the body walks to stand at its offset behind a hand goal held in the
    world (a Cartesian arm command in odom or vision), facing it; otherwise it stands."""
    arm, base = robot.arm, robot.base
    task = arm.task if arm is not None else None
    if task is None or task.world_anchor is None or task.overridden or \
            not robot.legs.standing(now):
        base.halt()
        return
    hand = mobility.compose(task.world_anchor, mobility.Se2(
        float(task.world_goal_hand[0, 3]), float(task.world_goal_hand[1, 3]), 0.0))
    body = base.odom_body
    distance = math.hypot(hand.x - body.x, hand.y - body.y)
    yaw = math.atan2(hand.y - body.y, hand.x - body.x) if distance > 0.1 else body.yaw
    off_x, off_y = command.details["offset"]
    c, s = math.cos(yaw), math.sin(yaw)
    goal = mobility.Se2(hand.x - c * off_x + s * off_y, hand.y - s * off_x - c * off_y, yaw)
    if mobility.goal_reached(body, goal):
        base.halt()
        return
    config = robot.config
    base.target_velocity = mobility.goal_velocity(body, goal, base.velocity,
                                                  base.velocity_limit, config.max_linear_accel,
                                                  config.max_angular_accel)
