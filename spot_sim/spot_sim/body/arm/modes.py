"""The arm modes a raw RobotCommand can carry beyond poses and joints: Cartesian force axes,
impedance control and constrained manipulation. Requests into arm tasks (refused like the
robot refuses them), and their feedback.

Force and impedance targets meet the simulated scene (``spot_sim.body.arm.contact``): a tool
pushed into a surface stops on it and the surface pushes back, which the robot state reports
as the estimated force on the hand. Admittance and tracking-error limits are not simulated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from bosdyn.api import arm_command_pb2, basic_command_pb2
from bosdyn.api import basic_command_pb2 as basic

from spot_sim.body.arm import kinematics as ak
from spot_sim.body.arm.constrained import Constrained
from spot_sim.body.arm.contact import (
    MAX_PRESS_FORCE_N,
    MAX_PRESS_REACH_M,
    clip_norm,
    first_contact,
    pressed,
)
from spot_sim.body.arm.model import Arm, ArmTask, plan
from spot_sim.body.arm.requests import (
    check_finite,
    frame,
    pose_matrix,
    reference_ns,
    reject,
    seconds,
    vec3,
)
from spot_sim.core.clock import timestamp_to_nsec

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot

Cartesian = arm_command_pb2.ArmCartesianCommand.Request
Impedance = arm_command_pb2.ArmImpedanceCommand
ConstrainedRequest = basic_command_pb2.ConstrainedManipulationCommand.Request
Task = ConstrainedRequest.TaskType
# The API's defaults where a request leaves a limit unset.
IMPEDANCE_MAX_FORCE_N, IMPEDANCE_MAX_TORQUE_NM = 60.0, 15.0
CONSTRAINED_FORCE_N, CONSTRAINED_TORQUE_NM = 40.0, 4.0
_LINEAR_AXES = ("x_axis", "y_axis", "z_axis")


# ------------------------------------------------------------------ Cartesian force axes
def force_axes(request: Cartesian) -> tuple[np.ndarray, np.ndarray]:
    """(which of x, y, z are force axes, the force on them in the task frame) of an
    ArmCartesianCommand; rotational force axes follow the pose trajectory."""
    mask = np.array([getattr(request, a) == Cartesian.AXIS_MODE_FORCE for a in _LINEAR_AXES])
    points = request.wrench_trajectory_in_task.points
    for index, point in enumerate(points):
        vec3(point.wrench.force, f"force of wrench point {index}")
        vec3(point.wrench.torque, f"torque of wrench point {index}")
    if not mask.any():
        return mask, np.zeros(3)
    if not points:
        reject("force-mode axes need a wrench_trajectory_in_task")
    return mask, vec3(points[-1].wrench.force, "force") * mask


def pressed_tool(scene, odom_t_body: np.ndarray, body_t_task: np.ndarray, axes: np.ndarray,
                 force: np.ndarray, wanted: np.ndarray, now: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """The tool position (body) under force control and the surface's reaction on the hand
    (body, N; None when the tool meets no surface)."""
    position, touching = pressed(scene, odom_t_body, body_t_task[:3, :3], axes, force,
                                 wanted, now)
    if not touching:
        return position, None
    return position, -clip_norm(body_t_task[:3, :3] @ force, MAX_PRESS_FORCE_N)


# ------------------------------------------------------------------------------ impedance
@dataclass
class ImpedanceState:
    """What an impedance command's feedback needs (body frame, at acceptance)."""

    body_t_desired: np.ndarray  # the last desired tool pose
    hand_t_tool: np.ndarray
    stiffness: np.ndarray  # (6,)
    damping: np.ndarray  # (6,)
    feed_forward: np.ndarray  # (6,) in the desired tool frame
    max_force: float
    max_torque: float


def _diagonal(vector, what: str, required: bool) -> np.ndarray:
    values = np.array(vector.values, dtype=float)
    if not len(values) and not required:
        return np.zeros(6)
    if len(values) != 6:
        reject(f"{what} needs 6 values (x, y, z, tx, ty, tz), not {len(values)}")
    check_finite(values, what)
    if (values < 0).any():
        reject(f"{what} values must not be negative")
    return values


def _positive(request, name: str, default: float) -> float:
    if not request.HasField(name):
        return default
    value = getattr(request, name).value
    check_finite((value,), name)
    if value <= 0:
        reject(f"{name} must be positive")
    return value


def _impedance_state(robot: SimRobot, request) -> ImpedanceState:
    snapshot = robot.transforms_snapshot()
    if not request.root_frame_name:
        reject("root_frame_name is required")
    body_t_task = frame(snapshot, request.root_frame_name)
    if request.HasField("root_tform_task"):
        body_t_task = body_t_task @ pose_matrix(request.root_tform_task, "root_tform_task")
    wrist_t_tool = pose_matrix(request.wrist_tform_tool, "wrist_tform_tool") \
        if request.HasField("wrist_tform_tool") else ak.translation(ak.WRIST_TO_HAND)
    wrench = request.feed_forward_wrench_at_tool_in_desired_tool
    return ImpedanceState(
        body_t_task, np.linalg.solve(ak.translation(ak.WRIST_TO_HAND), wrist_t_tool),
        _diagonal(request.diagonal_stiffness_matrix, "diagonal_stiffness_matrix", True),
        _diagonal(request.diagonal_damping_matrix, "diagonal_damping_matrix", False),
        np.concatenate([vec3(wrench.force, "feed-forward force"),
                        vec3(wrench.torque, "feed-forward torque")]),
        _positive(request, "max_force_mag", IMPEDANCE_MAX_FORCE_N),
        _positive(request, "max_torque_mag", IMPEDANCE_MAX_TORQUE_NM))


def _equilibrium(state: ImpedanceState, body_t_desired: np.ndarray,
                 tool_now: np.ndarray) -> np.ndarray:
    """Where the springs and the feed-forward force balance in free space (body): per
    desired-tool axis, ff / stiffness away from the desired pose; a force with no spring
    pushes MAX_PRESS_REACH_M; no spring and no force leaves the tool where it is."""
    rotation, desired = body_t_desired[:3, :3], body_t_desired[:3, 3]
    offset = rotation.T @ (tool_now - desired)
    for axis in range(3):
        k, f = state.stiffness[axis], state.feed_forward[axis]
        if k > 0:
            offset[axis] = f / k
        elif f != 0:
            offset[axis] = np.copysign(MAX_PRESS_REACH_M, f)
    return desired + rotation @ offset


def impedance_task(robot: SimRobot, arm: Arm, scene, command_id: int, request,
                   now_ns: int) -> ArmTask:
    """An ArmImpedanceCommand.Request as an arm task: the tool goes to where its springs
    balance, or stops on the first surface on the way and presses on it."""
    state = _impedance_state(robot, request)
    points = request.task_tform_desired_tool.points
    if not points:
        reject("task_tform_desired_tool has no points")
    odom_t_body = robot.body_poses()[0].to_matrix()
    reference = reference_ns(now_ns, request.task_tform_desired_tool)
    body_t_task = state.body_t_desired
    tool = (arm.hand() @ state.hand_t_tool)[:3, 3]
    q, times, targets, reachable, contact = arm.q.copy(), [], [], True, None
    for index, point in enumerate(points):
        desired = body_t_task @ pose_matrix(point.pose, f"pose of point {index}")
        target = _equilibrium(state, desired, tool)
        contact = first_contact(scene, odom_t_body, tool, target)
        goal = desired.copy()
        goal[:3, 3] = target if contact is None else contact
        q, ok = ak.solve_ik(goal @ np.linalg.inv(state.hand_t_tool), q)
        reachable &= ok
        t = reference + int(seconds(point.time_since_reference) * 1e9)
        if times and t <= times[-1]:
            reject(f"point {index} is not later than the point before it")
        times.append(max(t, now_ns))
        targets.append(q)
        tool = goal[:3, 3]
        state.body_t_desired = desired
    planned, modified = plan(arm.q, now_ns, np.array(times), np.array(targets))
    return ArmTask(command_id, "impedance", trajectory=planned,
                   goal_hand=goal @ np.linalg.inv(state.hand_t_tool), reachable=reachable,
                   planner_modified=modified, mode=state,
                   press_force=None if contact is None else -_commanded(state, goal)[:3]
                   @ state.body_t_desired[:3, :3].T,
                   press_from_ns=int(planned.times_ns[-1]))


def _commanded(state: ImpedanceState, body_t_tool: np.ndarray,
               hand_velocity: np.ndarray | None = None) -> np.ndarray:
    """The wrench (desired tool frame) the springs, dampers and feed forward ask for with
    the tool at ``body_t_tool``, saturated at the command's limits."""
    rotation = state.body_t_desired[:3, :3]
    error = ak.pose_error(body_t_tool, state.body_t_desired)
    wrench = state.stiffness * np.concatenate([rotation.T @ error[:3], rotation.T @ error[3:]])
    if hand_velocity is not None:
        wrench -= state.damping * np.concatenate([rotation.T @ hand_velocity[:3],
                                                  rotation.T @ hand_velocity[3:]])
    wrench += state.feed_forward
    return np.concatenate([clip_norm(wrench[:3], state.max_force),
                           clip_norm(wrench[3:], state.max_torque)])


def fill_impedance_feedback(arm: Arm, task: ArmTask, now_ns: int, feedback) -> None:
    fb = feedback.arm_impedance_feedback
    Fb = Impedance.Feedback
    state: ImpedanceState = task.mode
    tool = arm.hand() @ state.hand_t_tool
    spring = _commanded(ImpedanceState(state.body_t_desired, state.hand_t_tool,
                                       state.stiffness, np.zeros(6), np.zeros(6), np.inf,
                                       np.inf), tool)
    damping = -state.damping * np.concatenate(
        [state.body_t_desired[:3, :3].T @ arm.hand_velocity[:3],
         state.body_t_desired[:3, :3].T @ arm.hand_velocity[3:]])
    total = _commanded(state, tool, arm.hand_velocity)
    reaction = arm.contact_force(now_ns)
    measured = np.zeros(6)
    if reaction.any():
        measured[:3] = state.body_t_desired[:3, :3].T @ reaction
    for name, wrench in (("commanded_wrench_from_stiffness_at_tool_in_desired_tool", spring),
                         ("commanded_wrench_from_damping_at_tool_in_desired_tool", damping),
                         ("commanded_wrench_from_feed_forward_at_tool_in_desired_tool",
                          state.feed_forward),
                         ("total_commanded_wrench_at_tool_in_desired_tool", total),
                         ("total_measured_wrench_at_tool_in_desired_tool", measured)):
        _set_wrench(getattr(fb, name), wrench)
    if task.overridden:
        fb.status = Fb.STATUS_TRAJECTORY_CANCELLED
    elif task.done:
        fb.status = Fb.STATUS_TRAJECTORY_COMPLETE if task.reachable else \
            Fb.STATUS_TRAJECTORY_STALLED
    else:
        fb.status = Fb.STATUS_IN_PROGRESS


def _set_wrench(message, wrench: np.ndarray) -> None:
    message.force.x, message.force.y, message.force.z = (float(v) for v in wrench[:3])
    message.torque.x, message.torque.y, message.torque.z = (float(v) for v in wrench[3:])


# ------------------------------------------------------------------ constrained manipulation
def constrained_task(robot: SimRobot, command_id: int, request: ConstrainedRequest) -> ArmTask:
    """A ConstrainedManipulationCommand.Request as an arm task (refused when the robot would
    refuse it)."""
    if request.task_type not in Task.values() or request.task_type == Task.TASK_TYPE_UNKNOWN:
        reject("task_type is required")
    if not request.HasField("end_time"):
        reject("end_time is required")
    rotational = request.task_type == Task.TASK_TYPE_SE3_ROTATIONAL_TORQUE
    direction = _constraint_direction(robot, request, rotational)
    speed = request.rotational_speed if rotational else request.tangential_speed
    check_finite((speed, request.target_linear_position, request.target_angle), "task speed")
    travel = None
    if request.control_mode == ConstrainedRequest.CONTROL_MODE_POSITION:
        target = request.target_angle if rotational else request.target_linear_position
        if speed == 0:
            reject("position control needs a speed limit in "
                   + ("rotational_speed" if rotational else "tangential_speed"))
        speed, travel = np.copysign(abs(speed), target), abs(target)
    limit = _positive(request, "torque_limit", CONSTRAINED_TORQUE_NM) if rotational else \
        _positive(request, "force_limit", CONSTRAINED_FORCE_N)
    if request.HasField("accel_limit"):
        _positive(request, "accel_limit", 1.0)
    if request.task_type == Task.TASK_TYPE_HOLD_POSE:
        speed = 0.0
    mode = Constrained(request.task_type, direction, rotational, float(speed), travel, limit)
    return ArmTask(command_id, "constrained", end_ns=timestamp_to_nsec(request.end_time),
                   mode=mode)


def _constraint_direction(robot: SimRobot, request: ConstrainedRequest,
                          rotational: bool) -> np.ndarray:
    """The initial force direction (or torque axis for the rotational task), unit, body."""
    snapshot = robot.transforms_snapshot()
    body_t_frame = frame(snapshot, request.frame_name or "body")
    wrench = request.init_wrench_direction_in_frame_name
    force = vec3(wrench.force, "initial force direction")
    torque = vec3(wrench.torque, "initial torque direction")
    if np.linalg.norm(force) > 1e-9 and np.linalg.norm(torque) > 1e-9 and \
            abs(force @ torque) > 1e-3 * np.linalg.norm(force) * np.linalg.norm(torque):
        reject("the initial force and torque directions must be perpendicular")
    needed = torque if rotational else force
    if np.linalg.norm(needed) < 1e-9:
        if request.task_type == Task.TASK_TYPE_HOLD_POSE:
            return np.array([1.0, 0.0, 0.0])
        reject(f"{Task.Name(request.task_type)} needs a non-zero initial "
               + ("torque" if rotational else "force") + " direction")
    return body_t_frame[:3, :3] @ (needed / np.linalg.norm(needed))


def fill_constrained_feedback(robot: SimRobot, task: ArmTask, fb) -> None:
    """FullBodyCommand.Feedback's constrained manipulation part."""
    Fb = basic.ConstrainedManipulationCommand.Feedback
    mode: Constrained = task.mode
    out = fb.constrained_manipulation_feedback
    if mode.grasp_lost:
        out.status = Fb.STATUS_GRASP_IS_LOST
    else:
        out.status = Fb.STATUS_ARM_IS_STUCK if mode.stuck else Fb.STATUS_RUNNING
    out.estimation_activated.value = mode.estimated
    if mode.grasp_lost:
        return
    odom_r_body = robot.body_poses()[0].to_matrix()[:3, :3]
    along = odom_r_body @ mode.direction * np.sign(mode.speed or 1.0) * mode.wrench_limit
    target = out.desired_wrench_odom_frame.torque if mode.rotational else \
        out.desired_wrench_odom_frame.force
    target.x, target.y, target.z = (float(v) for v in along)
