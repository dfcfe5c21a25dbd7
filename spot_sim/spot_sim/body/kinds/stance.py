"""The stance kind: the feet placed where the request says (each within MAX_FOOT_SHIFT of
its nominal place under the body; farther, the stance is TOO_FAR_AWAY and the legs keep the
standing pose)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from bosdyn.api import basic_command_pb2 as basic

from spot_sim.body import kinematics, mobility
from spot_sim.body.commands import reject
from spot_sim.body.kinds.kind import (
    Acceptance,
    Kind,
    Response,
    end_time,
    frame_pose,
    halt,
    settled_in_place,
    stand_up,
)
from spot_sim.body.mobility import Se2

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot

FEET = ("fl", "fr", "hl", "hr")
MAX_FOOT_SHIFT = 0.5  # m a stance may move a foot from its nominal place under the body


def _reachable(ctx: Acceptance, request) -> dict:
    """Whether every foot is within MAX_FOOT_SHIFT of where it stands now (refused for a
    missing foot or a non-finite position)."""
    stance = request.stance
    missing = [foot for foot in FEET if foot not in stance.foot_positions]
    if missing:
        reject(f"stance needs positions for feet {missing}", Response.STATUS_INVALID_REQUEST)
    frame = frame_pose(ctx.robot, stance.se2_frame_name or "odom")
    body = ctx.robot.odom_body()
    nominal = kinematics.foot_positions_in_body(
        kinematics.leg_joint_positions(kinematics.STAND_HEIGHT))
    reachable = True
    for index, foot in enumerate(FEET):
        position = stance.foot_positions[foot]
        if not (math.isfinite(position.x) and math.isfinite(position.y)):
            reject(f"foot {foot} position is not finite", Response.STATUS_INVALID_REQUEST)
        in_odom = mobility.compose(frame, Se2(position.x, position.y, 0.0))
        in_body = mobility.compose(mobility.inverse(body), in_odom)
        if math.hypot(in_body.x - nominal[index][0], in_body.y - nominal[index][1]) > \
                MAX_FOOT_SHIFT:
            reachable = False
            break
    return {"details": {"reachable": reachable}}


def _begin(robot: SimRobot, command, now: int) -> None:
    stand_up(robot, now)
    halt(robot, command, now)


def _feedback(robot: SimRobot, command, now: int, fb) -> None:
    Stance = basic.StanceCommand.Feedback
    if not command.details.get("reachable", True):
        fb.stance_feedback.status = Stance.STATUS_TOO_FAR_AWAY
    elif settled_in_place(robot, command, now):
        fb.stance_feedback.status = Stance.STATUS_STANCED
    else:
        fb.stance_feedback.status = Stance.STATUS_GOING_TO_STANCE


KINDS = (Kind("stance", "stance_request", end=end_time, accept=_reachable, begin=_begin,
              feedback=_feedback),)
