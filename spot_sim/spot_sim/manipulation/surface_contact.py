"""Arm surface contact of the simulated robot: a tool trajectory whose position-mode axes follow
the request and whose force-mode axes press the tool against the first surface of the scene
along that axis, with the commanded fraction of the arm's press force.

The plan is made when the request arrives: each trajectory point's tool pose (force axes
moved to the surface's contact point, found by casting a ray from the tool's current place
along the press direction) solved into joint angles and timed by the arm planner, slowed to
the request's maximum tool speed. While the arm presses (from its first point on, until
another arm command takes over, when its last point is on a surface within reach) the robot
state reports the surface's reaction on the hand. Not simulated: the body leaning or walking
to follow the hand (a point out of the arm's reach from where the body stands is reached as
near as the arm can, pressing nothing), admittance (the tool stops at the surface),
tracking-error limits.
"""

import math

import numpy as np
from bosdyn.api import arm_surface_contact_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import SE3Pose

from spot_sim.body.arm import kinematics as ak
from spot_sim.body.arm.contact import MAX_PRESS_FORCE_N, pressed
from spot_sim.body.arm.model import ArmTask, plan
from spot_sim.body.reading import ArmReading
from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.perception.scene import Scene

Request = arm_surface_contact_pb2.ArmSurfaceContact.Request
AXES = ("x_axis", "y_axis", "z_axis")


def _seconds(duration) -> float:
    return duration.seconds + duration.nanos * 1e-9


def _matrix(pose) -> np.ndarray:
    p, r = pose.position, pose.rotation
    if abs(r.w) + abs(r.x) + abs(r.y) + abs(r.z) < 1e-9:
        matrix = np.eye(4)
        matrix[:3, 3] = (p.x, p.y, p.z)
        return matrix
    pose = SE3Pose.from_proto(pose)
    pose.rot.normalize()
    return pose.to_matrix()


def _checked(request: Request) -> np.ndarray:
    """The press fraction per task axis (0 on position axes); ValueError for a request the
    robot would refuse."""
    press = request.press_force_percentage
    fractions = np.array([press.x, press.y, press.z], dtype=float)
    if not np.all(np.isfinite(fractions)) or np.abs(fractions).max() > 1.0:
        raise ValueError("press_force_percentage must be finite and within [-1, 1] per axis")
    for name in ("maximum_acceleration", "max_linear_velocity", "max_angular_velocity",
                 "max_pos_tracking_error", "max_rot_tracking_error"):
        if request.HasField(name):
            value = getattr(request, name).value
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number")
    if request.HasField("maximum_acceleration") and request.maximum_acceleration.value > 20:
        raise ValueError("maximum_acceleration must be within (0, 20]")
    force = np.array([getattr(request, axis) == Request.AXIS_MODE_FORCE for axis in AXES])
    if not request.pose_trajectory_in_task.points and not force.any():
        raise ValueError("pose_trajectory_in_task has no points and no axis is in force mode")
    return np.where(force, fractions, 0.0)


def surface_contact(arm: ArmReading, scene: Scene, snapshot, request: Request, command_id: int,
                    now_ns: int) -> ArmTask:
    """The arm task of a surface contact for ``arm`` (ValueError if the request is
    invalid)."""
    fractions = _checked(request)
    root = request.root_frame_name or "body"
    if root not in snapshot.child_to_parent_edge_map:
        raise ValueError(f"unknown frame {root!r}")
    body_t_task = get_a_tform_b(snapshot, "body", root).to_matrix()
    if request.HasField("root_tform_task"):
        body_t_task = body_t_task @ _matrix(request.root_tform_task)
    odom_t_body = get_a_tform_b(snapshot, "odom", "body").to_matrix()
    wrist_t_tool = _matrix(request.wrist_tform_tool) if request.HasField("wrist_tform_tool") \
        else ak.translation(ak.WRIST_TO_HAND)
    hand_t_tool = np.linalg.solve(ak.translation(ak.WRIST_TO_HAND), wrist_t_tool)
    tool_now = arm.hand() @ hand_t_tool  # body_T_tool
    press = body_t_task[:3, :3] @ fractions  # the commanded push, body frame
    points = list(request.pose_trajectory_in_task.points)
    reference = timestamp_to_nsec(request.pose_trajectory_in_task.reference_time) \
        if request.pose_trajectory_in_task.HasField("reference_time") else now_ns
    goals = [(_matrix(p.pose), reference + int(_seconds(p.time_since_reference) * 1e9))
             for p in points] or [(np.linalg.solve(body_t_task, tool_now), now_ns + 10**9)]
    q, times, targets, tools = arm.q.copy(), [], [], []
    reachable, touching, goal = True, False, None
    for index, (task_t_tool, t) in enumerate(goals):
        body_t_tool = body_t_task @ task_t_tool
        if np.any(fractions):
            body_t_tool[:3, 3], touching = pressed(
                scene, odom_t_body, body_t_task[:3, :3], fractions != 0, np.sign(fractions),
                body_t_tool[:3, 3], tool_now[:3, 3])
        goal = body_t_tool @ np.linalg.inv(hand_t_tool)
        q, ok = ak.solve_ik(goal, q)
        reachable &= ok
        if times and t <= times[-1]:
            raise ValueError(f"point {index} is not later than the point before it")
        times.append(max(t, now_ns))
        targets.append(q)
        tools.append(body_t_tool[:3, 3])
    if request.HasField("max_linear_velocity"):
        times = _limit_speed(times, tools, tool_now[:3, 3], request.max_linear_velocity.value)
    planned, modified = plan(arm.q, now_ns, np.array(times), np.array(targets))
    pressing = touching and ok  # the last point's tool is on a surface it can reach
    return ArmTask(command_id, "surface_contact", trajectory=planned, goal_hand=goal,
                   reachable=reachable, planner_modified=modified,
                   press_force=-press * MAX_PRESS_FORCE_N if pressing else None,
                   press_from_ns=int(planned.times_ns[min(1, len(planned.times_ns) - 1)]))


def _limit_speed(times: list[int], tools: list[np.ndarray], tool_now: np.ndarray,
                 max_speed: float) -> list[int]:
    """Point times moved later where the tool (body positions) would go faster than
    ``max_speed`` m/s; each later point moves with them."""
    out, before, shift = [], tool_now, 0
    for t, position in zip(times, tools, strict=True):
        t += shift
        if out:
            needed = int(np.linalg.norm(position - before) / max_speed * 1e9)
            if t - out[-1] < needed:
                shift += needed - (t - out[-1])
                t = out[-1] + needed
        out.append(t)
        before = position
    return out
