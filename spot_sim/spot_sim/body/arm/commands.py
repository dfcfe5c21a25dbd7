"""The arm and gripper parts of robot-command: requests into arm tasks, and their feedback."""

import math

import numpy as np
from bosdyn.api import arm_command_pb2, gripper_command_pb2, robot_command_pb2
from bosdyn.api import basic_command_pb2 as basic

from spot_sim.body.arm import kinematics as ak
from spot_sim.body.arm import modes as arm_modes
from spot_sim.body.arm.contact import Scene
from spot_sim.body.arm.model import Arm, ArmTask, GripperTask, JointTrajectory, named_target, plan
from spot_sim.body.arm.requests import (
    check_finite,
    frame,
    pose_matrix,
    reference_ns,
    reject,
    seconds,
    world_fixed,
)
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import timestamp_to_nsec

Response = robot_command_pb2.RobotCommandResponse
Status = basic.RobotCommandFeedbackStatus
Named = arm_command_pb2.NamedArmPositionsCommand
JOINT_FIELDS = ("sh0", "sh1", "el0", "el1", "wr0", "wr1")
MAX_TRAJECTORY_POINTS = 250  # longer arm trajectories must be sent in pieces
NAMED_SECONDS = 2.0  # minimum time of a stow / ready / carry move
GAZE_SECONDS = 1.5
WORLD_GOAL_TOLERANCE = (0.005, 0.02)  # m, rad: a goal held in the world is reached
SETTLED_Q = 1e-3  # rad: the arm has come to the joints solved for a held goal
_NAMED = {Named.POSITIONS_STOW: "stow", Named.POSITIONS_READY: "ready",
          Named.POSITIONS_CARRY: "carry"}


def arm_task(robot: SimRobot, arm: Arm, scene: Scene, command_id: int,
             request: arm_command_pb2.ArmCommand.Request, now_ns: int) -> ArmTask:
    """Check an ArmCommand.Request and turn it into a task (CommandRejectedError if invalid).
    ``arm``: the robot's, handed over by its door (``SimRobot.parts``)."""
    which = request.WhichOneof("command")
    if which == "arm_joint_move_command":
        return _joint_move(robot, arm, command_id, request.arm_joint_move_command, now_ns)
    if which == "named_arm_position_command":
        name = _NAMED.get(request.named_arm_position_command.position)
        if name is None:
            reject("unknown named arm position")
        task = ArmTask(command_id, "named", named=request.named_arm_position_command.position)
        if name == "stow" and arm.holding and not arm.carry_stowable:
            task.stalled_holding = True  # the robot refuses to stow what it cannot carry stowed
            return task
        target = named_target(name)
        move = max(NAMED_SECONDS, float(np.max(np.abs(target - arm.q))) / 1.5)
        task.trajectory, _ = plan(arm.q, now_ns, [now_ns + int(move * 1e9)], target[None])
        return task
    if which == "arm_cartesian_command":
        return _cartesian(robot, arm, scene, command_id, request.arm_cartesian_command, now_ns)
    if which == "arm_impedance_command":
        return arm_modes.impedance_task(robot, arm, scene, command_id,
                                        request.arm_impedance_command, now_ns)
    if which == "arm_velocity_command":
        return _velocity(robot, arm, command_id, request.arm_velocity_command)
    if which == "arm_gaze_command":
        return _gaze(robot, arm, command_id, request.arm_gaze_command, now_ns)
    if which == "arm_stop_command":
        return ArmTask(command_id, "stop", done=True)
    return reject(f"arm command {which!r} is not supported", Response.STATUS_UNSUPPORTED)


def _joint_move(robot: SimRobot, arm: Arm, command_id: int, request, now_ns: int) -> ArmTask:
    trajectory = request.trajectory
    points = trajectory.points
    if not points:
        reject("arm joint trajectory has no points")
    if len(points) > MAX_TRAJECTORY_POINTS:
        reject(f"arm joint trajectory has {len(points)} points; the robot accepts at most "
                f"{MAX_TRAJECTORY_POINTS}")
    reference = reference_ns(now_ns, trajectory)
    positions, velocities, times = [], [], []
    has_velocity = any(p.HasField("velocity") for p in points)
    previous = arm.q.copy()
    for index, point in enumerate(points):
        q, v = _joint_point(point, previous, index)
        t = seconds(point.time_since_reference)
        if not math.isfinite(t) or t < 0:
            reject(f"point {index} has a negative time")
        if times and reference + int(t * 1e9) <= times[-1]:
            reject(f"point {index} is not later than the point before it")
        positions.append(q)
        velocities.append(v)
        times.append(reference + int(t * 1e9))
        previous = q
    max_speed = ak.MAX_JOINT_SPEED
    if trajectory.HasField("maximum_velocity"):
        if not math.isfinite(trajectory.maximum_velocity.value) or \
                trajectory.maximum_velocity.value <= 0:
            reject("maximum_velocity must be positive")
        max_speed = min(max_speed, trajectory.maximum_velocity.value)
    if times[-1] < now_ns:
        reject("the arm trajectory ends in the past", Response.STATUS_EXPIRED)
    planned, modified = plan(arm.q, now_ns, np.array(times), np.array(positions),
                             np.array(velocities) if has_velocity else None, max_speed)
    return ArmTask(command_id, "joint_move", trajectory=planned, planner_modified=modified)


def _joint_point(point, previous: np.ndarray, index: int) -> tuple[np.ndarray, np.ndarray]:
    """(positions, velocities) of one ArmJointMovePoint: a joint it leaves out keeps its
    ``previous`` position; refused when not finite or outside the joint limits."""
    q = previous.copy()
    v = np.zeros(6)
    for j, name in enumerate(JOINT_FIELDS):
        if point.position.HasField(name):
            q[j] = getattr(point.position, name).value
        if point.velocity.HasField(name):
            v[j] = getattr(point.velocity, name).value
    check_finite(q, f"joint position of point {index}")
    low, high = ak.JOINT_LIMITS[:, 0], ak.JOINT_LIMITS[:, 1]
    outside = [(JOINT_FIELDS[j], q[j], low[j], high[j]) for j in range(6)
               if not low[j] - 1e-6 <= q[j] <= high[j] + 1e-6]
    if outside:
        name, value, lo, hi = outside[0]
        reject(f"arm0.{name} target {value:.3f} rad at point {index} is outside the "
                f"joint limits [{lo:.3f}, {hi:.3f}]")
    check_finite(v, f"joint velocity of point {index}")
    return q, v


def _cartesian(robot: SimRobot, arm: Arm, scene: Scene, command_id: int, request,
               now_ns: int) -> ArmTask:
    """An ArmCartesianCommand: pose axes follow the trajectory, force axes press the tool
    along the wrench trajectory's force to the first surface. A goal in a world frame (odom,
    vision) stays there as the body walks."""
    snapshot = robot.transforms_snapshot()
    root = request.root_frame_name or "body"
    body_t_task = frame(snapshot, root)
    if request.HasField("root_tform_task"):
        body_t_task = body_t_task @ pose_matrix(request.root_tform_task, "root_tform_task")
    wrist_t_tool = ak.translation(ak.WRIST_TO_HAND)
    if request.HasField("wrist_tform_tool"):
        wrist_t_tool = pose_matrix(request.wrist_tform_tool, "wrist_tform_tool")
    hand_t_tool = np.linalg.solve(ak.translation(ak.WRIST_TO_HAND), wrist_t_tool)
    axes, force = arm_modes.force_axes(request)
    tool_now = arm.hand() @ hand_t_tool
    goals = _tool_goals(request.pose_trajectory_in_task, body_t_task, tool_now, now_ns,
                        axes.any())
    odom_t_body = robot.body_poses()[0].to_matrix()
    q, times, targets, reachable, goal, reaction = arm.q.copy(), [], [], True, None, None
    for body_t_tool, t in goals:
        if axes.any():
            body_t_tool[:3, 3], reaction = arm_modes.pressed_tool(
                scene, odom_t_body, body_t_task, axes, force, body_t_tool[:3, 3],
                tool_now[:3, 3])
        goal = body_t_tool @ np.linalg.inv(hand_t_tool)
        q, ok = ak.solve_ik(goal, q)
        reachable &= ok
        times.append(max(t, now_ns))
        targets.append(q)
    planned, modified = plan(arm.q, now_ns, np.array(times), np.array(targets))
    task = ArmTask(command_id, "cartesian", trajectory=planned, goal_hand=goal,
                   reachable=reachable, planner_modified=modified,
                   press_force=reaction if ok else None,
                   press_from_ns=int(planned.times_ns[-1]))
    if world_fixed(snapshot, root) and not axes.any():
        task.world_anchor, task.world_goal_hand = robot.odom_body(), goal
    return task


def _tool_goals(trajectory, body_t_task: np.ndarray, tool_now: np.ndarray, now_ns: int,
                force: bool) -> list[tuple[np.ndarray, int]]:
    """(body_T_tool, robot time) per trajectory point; with force axes and no points, one
    second from now at the tool's present pose."""
    points = trajectory.points
    if not points and not force:
        reject("pose trajectory has no points")
    reference = reference_ns(now_ns, trajectory)
    goals = []
    for index, point in enumerate(points):
        t = reference + int(seconds(point.time_since_reference) * 1e9)
        if goals and t <= goals[-1][1]:
            reject(f"point {index} is not later than the point before it")
        goals.append((body_t_task @ pose_matrix(point.pose, f"pose of point {index}"), t))
    return goals or [(tool_now.copy(), now_ns + 10**9)]


def _velocity(robot: SimRobot, arm: Arm, command_id: int, request) -> ArmTask:
    if not request.HasField("cartesian_velocity"):
        reject("only cartesian arm velocity commands are supported", Response.STATUS_UNSUPPORTED)
    if not request.HasField("end_time"):
        reject("end_time is required")
    velocity = request.cartesian_velocity
    v = velocity.velocity_in_frame_name
    check_finite((v.x, v.y, v.z), "arm velocity")
    snapshot = robot.transforms_snapshot()
    rotation = frame(snapshot, velocity.frame_name or "body")[:3, :3]
    linear = rotation @ np.array([v.x, v.y, v.z])
    w = request.angular_velocity_of_hand_rt_odom_in_hand
    check_finite((w.x, w.y, w.z), "arm angular velocity")
    angular = arm.hand()[:3, :3] @ np.array([w.x, w.y, w.z])
    end_ns = timestamp_to_nsec(request.end_time)
    if end_ns < robot.clock.now_nsec():
        reject("end_time is in the past", Response.STATUS_EXPIRED)
    return ArmTask(command_id, "velocity", end_ns=end_ns,
                   hand_twist=np.concatenate([linear, angular]))


def _gaze(robot: SimRobot, arm: Arm, command_id: int, request, now_ns: int) -> ArmTask:
    snapshot = robot.transforms_snapshot()
    points = request.target_trajectory_in_frame1.points
    if not points:
        reject("gaze target trajectory has no points")
    target = points[-1].point
    check_finite((target.x, target.y, target.z), "gaze target")
    body_t_frame1 = frame(snapshot, request.frame1_name or "body")
    target_in_body = (body_t_frame1 @ np.array([target.x, target.y, target.z, 1.0]))[:3]
    hand = arm.hand()
    position = hand[:3, 3]
    if request.tool_trajectory_in_frame2.points:
        body_t_frame2 = frame(snapshot, request.frame2_name or "body")
        tool = pose_matrix(request.tool_trajectory_in_frame2.points[-1].pose, "tool pose")
        position = (body_t_frame2 @ tool)[:3, 3]
    goal = np.eye(4)
    goal[:3, :3] = _look_at(target_in_body - position)
    goal[:3, 3] = position
    q, reachable = ak.solve_ik(goal, arm.q)
    trajectory, _ = plan(arm.q, now_ns, [now_ns + int(GAZE_SECONDS * 1e9)], q[None])
    return ArmTask(command_id, "gaze", trajectory=trajectory, goal_hand=goal,
                   reachable=reachable)


def _look_at(direction: np.ndarray) -> np.ndarray:
    """A rotation whose x axis points along ``direction`` with z as close to up as possible."""
    x = direction / max(np.linalg.norm(direction), 1e-9)
    up = np.array([0.0, 0.0, 1.0]) if abs(x[2]) < 0.99 else np.array([1.0, 0.0, 0.0])
    y = np.cross(up, x)
    y /= np.linalg.norm(y)
    return np.stack([x, y, np.cross(x, y)], axis=1)


def gripper_task(robot: SimRobot, command_id: int,
                 request: gripper_command_pb2.GripperCommand.Request,
                 now_ns: int) -> GripperTask:
    if not request.HasField("claw_gripper_command"):
        reject("gripper command is empty")
    claw = request.claw_gripper_command
    points = claw.trajectory.points
    if not points:
        reject("gripper trajectory has no points")
    reference = reference_ns(now_ns, claw.trajectory)
    low, high = ak.GRIPPER_LIMITS
    times, positions = [], []
    for index, point in enumerate(points):
        check_finite((point.point,), f"gripper position of point {index}")
        if not low - 1e-6 <= point.point <= high + 1e-6:
            reject(f"gripper position {point.point:.3f} rad is outside [{low:.3f}, {high:.3f}]")
        times.append(max(now_ns, reference + int(seconds(point.time_since_reference) * 1e9)))
        positions.append([point.point])
    torque = claw.maximum_torque.value if claw.HasField("maximum_torque") else 5.5
    if not math.isfinite(torque) or torque < 0:
        reject("maximum_torque must be a non-negative number")
    return GripperTask(command_id, JointTrajectory(np.array(times), np.array(positions)), torque)


# ------------------------------------------------------------------------------ feedback
def fill_arm_feedback(arm: Arm, task: ArmTask, now_ns: int,
                      feedback: arm_command_pb2.ArmCommand.Feedback) -> None:
    feedback.status = Status.STATUS_COMMAND_OVERRIDDEN if task.overridden else \
        Status.STATUS_PROCESSING
    _ARM_FEEDBACK[task.kind](arm, task, now_ns, feedback)


def _finished(task: ArmTask) -> bool:
    return task.done and not task.overridden


def _joint_move_feedback(arm, task, now_ns, feedback) -> None:
    fb = feedback.arm_joint_move_feedback
    Fb = arm_command_pb2.ArmJointMoveCommand.Feedback
    fb.status = Fb.STATUS_COMPLETE if _finished(task) else Fb.STATUS_IN_PROGRESS
    fb.planner_status = Fb.PLANNER_STATUS_MODIFIED if task.planner_modified else \
        Fb.PLANNER_STATUS_SUCCESS
    fb.time_to_goal.FromNanoseconds(max(0, task.trajectory.end_ns - now_ns))


def _named_feedback(arm, task, now_ns, feedback) -> None:
    Fb = Named.Feedback
    if task.stalled_holding:
        status = Fb.STATUS_STALLED_HOLDING_ITEM
    else:
        status = Fb.STATUS_COMPLETE if _finished(task) else Fb.STATUS_IN_PROGRESS
    feedback.named_arm_position_feedback.status = status


def _cartesian_feedback(arm, task, now_ns, feedback) -> None:
    fb = feedback.arm_cartesian_feedback
    Fb = arm_command_pb2.ArmCartesianCommand.Feedback
    error = ak.pose_error(arm.hand(), task.goal_hand)
    fb.measured_pos_distance_to_goal = float(np.linalg.norm(error[:3]))
    fb.measured_rot_distance_to_goal = float(np.linalg.norm(error[3:]))
    if task.world_anchor is not None:  # reached or not from where the body is now
        reached = fb.measured_pos_distance_to_goal < WORLD_GOAL_TOLERANCE[0] and \
            fb.measured_rot_distance_to_goal < WORLD_GOAL_TOLERANCE[1]
        # stalled: the body stands, the arm got as near as it can, and the hand is not there
        settled = task.solved_q is not None and \
            float(np.max(np.abs(arm.q - task.solved_q))) < SETTLED_Q
        stalled = task.done and not reached and task.body_still and settled
    else:
        reached, stalled = task.reachable, not task.reachable
    if task.overridden:
        fb.status = Fb.STATUS_TRAJECTORY_CANCELLED
    elif task.done and reached:
        fb.status = Fb.STATUS_TRAJECTORY_COMPLETE
    elif task.done and stalled:
        fb.status = Fb.STATUS_TRAJECTORY_STALLED
    else:
        fb.status = Fb.STATUS_IN_PROGRESS


def _gaze_feedback(arm, task, now_ns, feedback) -> None:
    fb = feedback.arm_gaze_feedback
    Fb = arm_command_pb2.GazeCommand.Feedback
    if _finished(task):
        fb.status = Fb.STATUS_TRAJECTORY_COMPLETE if task.reachable else \
            Fb.STATUS_TOOL_TRAJECTORY_STALLED
    else:
        fb.status = Fb.STATUS_IN_PROGRESS
    fb.gazing_at_target = bool(task.done and task.reachable)


def _velocity_feedback(arm, task, now_ns, feedback) -> None:
    feedback.arm_velocity_feedback.SetInParent()
    if _finished(task):
        feedback.status = Status.STATUS_COMMAND_TIMED_OUT


def _stop_feedback(arm, task, now_ns, feedback) -> None:
    feedback.arm_stop_feedback.SetInParent()


# ArmCommand.Feedback per task kind: fn(arm, task, now_ns, feedback).
_ARM_FEEDBACK = {"joint_move": _joint_move_feedback, "named": _named_feedback,
                 "cartesian": _cartesian_feedback, "gaze": _gaze_feedback,
                 "velocity": _velocity_feedback, "stop": _stop_feedback,
                 "impedance": arm_modes.fill_impedance_feedback}


def fill_gripper_feedback(arm: Arm, task: GripperTask, now_ns: int,
                          feedback: gripper_command_pb2.GripperCommand.Feedback) -> None:
    Fb = gripper_command_pb2.ClawGripperCommand.Feedback
    feedback.status = Status.STATUS_COMMAND_OVERRIDDEN if task.overridden else \
        Status.STATUS_PROCESSING
    target = float(task.trajectory.positions[-1, 0])
    if arm.gripper_task is task and arm.gripper_blocked():
        status = Fb.STATUS_APPLYING_FORCE
    elif now_ns >= task.trajectory.end_ns and abs(arm.gripper - target) < 1e-3:
        status = Fb.STATUS_AT_GOAL
    else:
        status = Fb.STATUS_IN_PROGRESS
    feedback.claw_gripper_feedback.status = status
