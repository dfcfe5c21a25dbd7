"""MoveIt's hand goals against the driver: the simulated robot with an arm, the driver, and
``ros2 launch spot_driver moveit.launch.py`` as doc/moveit.md starts them; a round of hand
goals in front of the body (level, facing forward), each planned by OMPL and executed through
the driver's FollowJointTrajectory by move_group's ``move_action``, the same round twice.

Per goal: whether it succeeded; planning time as a ratio to one IK query of the same pose
(move_group's ``compute_ik``, the goal sampling planning cannot do without), measured just
before it; execution time as a ratio to the planned trajectory's own duration (MoveIt's
time-optimal parameterization: what a perfect controller takes); and the robot's own hand
(the SDK's robot state, not the driver's topics) against the goal. Needs MoveIt
(`make moveit-tools`, or an apt-installed ROS 2).

    python benchmarks/moveit_goals.py    # ~2 min; writes benchmarks/results/moveit_goals.json
"""

import math
import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import _e2e
import _results
import bosdyn.client
import numpy as np
import rclpy
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.robot_state import RobotStateClient
from rclpy.executors import SingleThreadedExecutor
from std_srvs.srv import Trigger

# the hand's goals in the body frame (m), level and facing forward: within the arm's reach in
# front of the body, above and beside it
GOALS = ((0.75, 0.10, 0.30), (0.65, -0.25, 0.45), (0.85, 0.00, 0.15), (0.60, 0.30, 0.60),
         (0.70, -0.10, 0.05), (0.55, 0.00, 0.50))
ROUNDS = 2
READY = "You can start planning now!"


class Operator:
    """A client node: the driver's services and move_group's move_action and compute_ik."""

    def __init__(self) -> None:
        from moveit_msgs.action import MoveGroup
        from moveit_msgs.srv import GetPositionIK
        from rclpy.action import ActionClient
        rclpy.init()
        self.node = rclpy.create_node("moveit_goals_bench")
        self.move_group = ActionClient(self.node, MoveGroup, "/move_action")
        self.ik = self.node.create_client(GetPositionIK, "/compute_ik")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        threading.Thread(target=self.executor.spin, daemon=True).start()

    def call(self, name: str, timeout: float = 30.0) -> Trigger.Response:
        return _e2e.call_trigger(self.node, name, timeout)

    def ik_seconds(self, goal: tuple[float, float, float]) -> float:
        """One collision-aware IK query of the hand at ``goal`` (its time, answered or not)."""
        from moveit_msgs.srv import GetPositionIK
        request = GetPositionIK.Request()
        request.ik_request.group_name = "arm"
        request.ik_request.avoid_collisions = True
        pose = request.ik_request.pose_stamped
        pose.header.frame_id = "body"
        pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = goal
        pose.pose.orientation.w = 1.0
        request.ik_request.timeout.nanosec = 500_000_000
        assert self.ik.wait_for_service(timeout_sec=10)
        started = time.monotonic()
        _e2e.wait_future(self.ik.call_async(request), 10)
        return time.monotonic() - started

    def move(self, goal: tuple[float, float, float]):
        """One plan-and-execute: the result, its planning time (until move_group's feedback
        leaves PLANNING) and its execution time (from then to the result)."""
        from moveit_msgs.action import MoveGroup
        from moveit_msgs.msg import (
            BoundingVolume,
            Constraints,
            OrientationConstraint,
            PositionConstraint,
        )
        from shape_msgs.msg import SolidPrimitive
        request = MoveGroup.Goal()
        plan = request.request
        plan.group_name, plan.num_planning_attempts, plan.allowed_planning_time = "arm", 1, 5.0
        plan.max_velocity_scaling_factor = plan.max_acceleration_scaling_factor = 1.0
        plan.start_state.is_diff = True
        plan.workspace_parameters.header.frame_id = "body"
        for corner, value in ((plan.workspace_parameters.min_corner, -2.0),
                              (plan.workspace_parameters.max_corner, 2.0)):
            corner.x = corner.y = corner.z = value
        region = BoundingVolume(
            primitives=[SolidPrimitive(type=SolidPrimitive.SPHERE, dimensions=[0.005])],
            primitive_poses=[_pose(goal)])
        position = PositionConstraint(link_name="hand", weight=1.0, constraint_region=region)
        position.header.frame_id = "body"
        orientation = OrientationConstraint(link_name="hand", weight=1.0,
                                            absolute_x_axis_tolerance=0.02,
                                            absolute_y_axis_tolerance=0.02,
                                            absolute_z_axis_tolerance=0.02)
        orientation.header.frame_id = "body"
        orientation.orientation.w = 1.0
        plan.goal_constraints = [Constraints(position_constraints=[position],
                                             orientation_constraints=[orientation])]
        request.planning_options.planning_scene_diff.is_diff = True
        request.planning_options.planning_scene_diff.robot_state.is_diff = True
        assert self.move_group.wait_for_server(timeout_sec=30)
        planned = []

        def feedback(message) -> None:
            if not planned and message.feedback.state not in ("", "PLANNING"):
                planned.append(time.monotonic())

        started = time.monotonic()
        handle = _e2e.wait_future(self.move_group.send_goal_async(request, feedback), 30)
        assert handle.accepted
        result = _e2e.wait_future(handle.get_result_async(), 60).result
        ended = time.monotonic()
        turned = planned[0] if planned else ended
        return result, turned - started, ended - turned

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown()


def _pose(goal: tuple[float, float, float]):
    from geometry_msgs.msg import Pose
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = goal
    pose.orientation.w = 1.0
    return pose


def robot_hand(state: RobotStateClient) -> tuple[np.ndarray, float]:
    """The robot's own hand in the body frame: position (m) and angle from level (rad)."""
    snapshot = state.get_robot_state().kinematic_state.transforms_snapshot
    hand = get_a_tform_b(snapshot, "body", "hand")
    return np.array([hand.x, hand.y, hand.z]), 2 * math.acos(min(1.0, abs(hand.rot.w)))


def median(values: list[float]) -> float | None:
    return round(float(np.median(values)), 3) if values else None


def main() -> None:
    from moveit_msgs.msg import MoveItErrorCodes
    tmp = Path(tempfile.mkdtemp(prefix="spot_moveit_"))
    sim, port, ca = _e2e.start_sim(str(tmp / "certs"), "--arm")
    driver = _e2e.start_driver(port, ca, {"estop_endpoint": "true", "cameras": "[]"})
    sdk = bosdyn.client.create_standard_sdk("moveit-goals-bench")
    sdk.load_robot_cert(ca)
    robot = sdk.create_robot("127.0.0.1")
    robot.update_secure_channel_port(port)
    robot.authenticate(_e2e.USER, _e2e.PASSWORD)
    state = robot.ensure_client(RobotStateClient.default_service_name)
    operator = Operator()
    log = tmp / "moveit.log"
    moveit = None
    goals = []
    try:
        for name in ("/claim", "/power_on", "/stand"):
            assert operator.call(name).success, name
        with open(log, "w") as out:
            moveit = subprocess.Popen(["ros2", "launch", "spot_driver", "moveit.launch.py"],
                                      stdout=out, stderr=subprocess.STDOUT,
                                      start_new_session=True)
        started = time.monotonic()
        while READY not in log.read_text():
            assert time.monotonic() < started + 60, "move_group did not come up"
            time.sleep(0.2)
        bring_up_s = time.monotonic() - started
        time.sleep(2.0)  # its state monitor's first /tf (test_moveit_e2e checks the scene)
        for _ in range(ROUNDS):
            for goal in GOALS:
                ik_s = operator.ik_seconds(goal)
                result, planning, execution = operator.move(goal)
                succeeded = result.error_code.val == MoveItErrorCodes.SUCCESS
                points = result.planned_trajectory.joint_trajectory.points
                duration = points[-1].time_from_start.sec + \
                    points[-1].time_from_start.nanosec * 1e-9 if points else 0.0
                position, angle = robot_hand(state)
                goals.append({
                    "goal_m": list(goal), "succeeded": succeeded,
                    "error_code": result.error_code.val,
                    "planning_s": round(planning, 3), "ik_s": round(ik_s, 4),
                    "planning_vs_ik": round(planning / ik_s, 1),
                    "execution_s": round(execution, 2),
                    "trajectory_s": round(duration, 2),
                    "execution_vs_trajectory": round(execution / duration, 2)
                    if duration else None,
                    "hand_error_mm": round(1000 * float(np.linalg.norm(position - goal)), 1),
                    "hand_angle_deg": round(math.degrees(angle), 2)})
    finally:
        if moveit is not None and moveit.poll() is None:
            os.killpg(moveit.pid, signal.SIGINT)
            try:
                moveit.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(moveit.pid, signal.SIGKILL)
        operator.close()
        robot.time_sync.stop()
        _e2e.stop(driver, sim)
    ok = [g for g in goals if g["succeeded"]]
    results = {
        "goals": goals, "succeeded": len(ok), "attempted": len(goals),
        "bring_up_s": round(bring_up_s, 1),
        "planning_s_median": median([g["planning_s"] for g in ok]),
        "planning_vs_ik_median": median([g["planning_vs_ik"] for g in ok]),
        "execution_vs_trajectory_median": median([g["execution_vs_trajectory"] for g in ok]),
        "hand_error_mm_median": median([g["hand_error_mm"] for g in ok]),
        "hand_error_mm_max": max((g["hand_error_mm"] for g in ok), default=None),
    }
    print(_results.write("moveit_goals", results))


if __name__ == "__main__":
    main()
