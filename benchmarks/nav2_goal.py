"""What Nav2 costs beside the driver, and how long its goals take: the simulated robot with its
lidar, the driver, and ``ros2 launch spot_driver nav2.launch.py`` as doc/driver.md starts
them; NavigateToPose goals back and forth between the start and a pose behind one of the
scene's boxes (about 4 m apart, the box on the straight line). Per goal: its time as a
ratio to the floor of the straight line at Nav2's top speed (``max_vel_x`` in
config/nav2_params.yaml), and the path walked (odometry) as a ratio to that line. CPU of the
Nav2 processes, the driver and the simulated robot while the goals run, and the Nav2 share as
a ratio to the driver's. Needs Nav2 (`make nav2-tools`, or an apt-installed ROS 2).

    python benchmarks/nav2_goal.py    # ~3 min; writes benchmarks/results/nav2_goal.json
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
import psutil
import rclpy
import yaml
from action_msgs.msg import GoalStatus
from lifecycle_msgs.srv import GetState
from nav_msgs.msg import Odometry
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from std_srvs.srv import Trigger

# behind the red box (far enough from it for Spot's 1.25 m body to turn round: 0.25 m from it,
# a first version's return goals failed, the footprint hitting the box as it turned), and back
GOALS = ((4.0, 0.7, 0.0), (0.0, 0.0, math.pi))
ROUND_TRIPS = 3
PARAMS = yaml.safe_load((_e2e.REPO / "spot_driver" / "config" / "nav2_params.yaml").read_text())
SERVERS = ("controller_server", "smoother_server", "planner_server", "behavior_server",
           "bt_navigator", "waypoint_follower", "velocity_smoother", "collision_monitor",
           "local_costmap/local_costmap", "global_costmap/global_costmap")
TOP_SPEED = PARAMS["controller_server"]["ros__parameters"]["FollowPath"]["max_vel_x"]


class Operator:
    """A client node: the driver's services, odometry, and Nav2's NavigateToPose."""

    def __init__(self) -> None:
        from nav2_msgs.action import NavigateToPose
        self.goal_type = NavigateToPose
        rclpy.init()
        self.node = rclpy.create_node("nav2_goal_bench")
        self.poses: list[tuple[float, float]] = []
        self.recording = False
        self.node.create_subscription(Odometry, "/odometry", self._odometry, 10)
        self.navigate = ActionClient(self.node, NavigateToPose, "/navigate_to_pose")
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        threading.Thread(target=self.executor.spin, daemon=True).start()

    def _odometry(self, msg: Odometry) -> None:
        if self.recording:
            self.poses.append((msg.pose.pose.position.x, msg.pose.pose.position.y))

    def call(self, name: str, timeout: float = 30.0) -> Trigger.Response:
        return _e2e.call_trigger(self.node, name, timeout)

    def active(self) -> bool:
        """Whether every server the launch starts (and both costmaps) is active."""
        for name in SERVERS:
            client = self.node.create_client(GetState, f"/{name}/get_state")
            try:
                if not client.wait_for_service(timeout_sec=1.0):
                    return False
                future = client.call_async(GetState.Request())
                deadline = time.monotonic() + 5.0
                while not future.done() and time.monotonic() < deadline:
                    time.sleep(0.05)
                if not future.done() or future.result().current_state.label != "active":
                    return False
            finally:
                self.node.destroy_client(client)
        return True

    def goal(self, x: float, y: float, yaw: float) -> tuple[bool, float, float]:
        """One goal: whether it succeeded, its time (s) and the path walked (m)."""
        goal = self.goal_type.Goal()
        goal.pose.header.frame_id = "odom"
        goal.pose.pose.position.x, goal.pose.pose.position.y = x, y
        goal.pose.pose.orientation.z, goal.pose.pose.orientation.w = \
            math.sin(yaw / 2), math.cos(yaw / 2)
        assert self.navigate.wait_for_server(timeout_sec=60)
        self.poses, self.recording = [], True
        started = time.monotonic()
        handle = _e2e.wait_future(self.navigate.send_goal_async(goal), 30, 0.02)
        assert handle.accepted
        result = _e2e.wait_future(handle.get_result_async(), 180, 0.02)
        took = time.monotonic() - started
        self.recording = False
        walked = sum(math.dist(a, b) for a, b in zip(self.poses, self.poses[1:], strict=False))
        return result.status == GoalStatus.STATUS_SUCCEEDED, took, walked

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown()


def cpu_seconds(processes: list[psutil.Process]) -> float:
    return sum(_e2e.cpu_seconds(process.pid) for process in processes)


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="spot_nav2_"))
    sim, port, ca = _e2e.start_sim(str(tmp / "certs"))
    driver = _e2e.start_driver(port, ca, {"estop_endpoint": "true"})
    operator = Operator()
    nav2 = None
    try:
        for name in ("/claim", "/power_on", "/stand"):
            assert operator.call(name).success, name
        nav2 = subprocess.Popen(["ros2", "launch", "spot_driver", "nav2.launch.py"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                start_new_session=True)
        brought_up = time.monotonic()
        deadline = brought_up + 120
        while not operator.active():
            assert time.monotonic() < deadline, "Nav2 did not come up"
            time.sleep(1.0)
        bring_up_s = time.monotonic() - brought_up
        nav2_procs = psutil.Process(nav2.pid).children(recursive=True)
        groups = {"nav2": nav2_procs, "driver": [psutil.Process(driver.pid)],
                  "simulated_robot": [psutil.Process(sim.pid)]}
        before = {name: cpu_seconds(procs) for name, procs in groups.items()}
        started = time.monotonic()
        goals = []
        for _ in range(ROUND_TRIPS):
            here = (0.0, 0.0)
            for x, y, yaw in GOALS:
                succeeded, took, walked = operator.goal(x, y, yaw)
                line = math.dist(here, (x, y))
                goals.append({"succeeded": succeeded, "seconds": round(took, 2),
                              "straight_m": round(line, 2), "walked_m": round(walked, 2),
                              "time_vs_floor": round(took / (line / TOP_SPEED), 2),
                              "path_vs_line": round(walked / line, 2)})
                here = (x, y)
        window = time.monotonic() - started
        cpu = {name: round(100 * (cpu_seconds(procs) - before[name]) / window, 1)
               for name, procs in groups.items()}
    finally:
        if nav2 is not None and nav2.poll() is None:
            os.killpg(nav2.pid, signal.SIGINT)
            try:
                nav2.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(nav2.pid, signal.SIGKILL)
        operator.close()
        _e2e.stop(driver, sim)
    ok = [g for g in goals if g["succeeded"]]
    results = {
        "goals": goals, "succeeded": len(ok), "top_speed_mps": TOP_SPEED,
        "bring_up_s": round(bring_up_s, 1), "window_s": round(window, 1),
        "time_vs_floor_median": sorted(g["time_vs_floor"] for g in ok)[len(ok) // 2]
        if ok else None,
        "path_vs_line_median": sorted(g["path_vs_line"] for g in ok)[len(ok) // 2]
        if ok else None,
        "cpu_percent_of_one_core": cpu,
        "nav2_vs_driver_cpu": round(cpu["nav2"] / cpu["driver"], 2) if cpu["driver"] else None,
        "nav2_processes": len(nav2_procs),
    }
    print(_results.write("nav2_goal", results))


if __name__ == "__main__":
    main()
