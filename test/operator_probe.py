"""What an operator's computer sees of a robot across the link: run inside the operator's
network namespace with the operator's DDS environment; prints one JSON object.

    python test/operator_probe.py --namespace /spot1 --checks graph,rates,trigger,... \\
        [--images 5] [--raw-images 1] [--seconds 5]

Checks: graph (topics, services, actions listed), rates (joint_states, /tf, odometry, and
the largest gap), trigger (round trips of ``claim``, which is idempotent), estop (round trips
of ``estop/release``), action (a ``trajectory`` goal with feedback), param (``ros2 param
set``'s service on spot_state, and the rate that follows), cmd_vel (the robot moves, then
stops when commands stop; step latency from publish to odometry), images (frames per camera).
"""

import argparse
import json
import os
import sys
import threading
import time

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CompressedImage, Image, JointState
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from spot_driver.core.action_client import ActionClient
from spot_msgs.action import Trajectory

CAMERAS = ("frontleft", "frontright", "left", "right", "back")
STEADY_MPS = 0.02  # m/s: odometry this near a step's speed shows the robot at it


class Probe:
    def __init__(self, namespace: str, images: int, raw_images: int,
                 also: tuple[str, ...] = ()) -> None:
        rclpy.init()
        self.started = time.monotonic()
        self.ns = namespace.rstrip("/")
        self.node = rclpy.create_node("operator_probe")
        self.lock = threading.Lock()
        self.arrivals: dict[str, list[float]] = {}
        self.odometry: list[tuple[float, Odometry]] = []
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._watch("joint_states", JointState, reliable)
        self._watch("odometry", Odometry, reliable, keep=self.odometry)
        self.node.create_subscription(TFMessage, "/tf", self._tf, reliable)
        self.diagnostics: DiagnosticArray | None = None
        self.node.create_subscription(DiagnosticArray, "/diagnostics",
                                      lambda m: setattr(self, "diagnostics", m), reliable)
        for camera in CAMERAS[:images]:
            self._watch(f"camera/{camera}/image/compressed", CompressedImage, reliable)
        for camera in CAMERAS[:raw_images]:
            self._watch(f"camera/{camera}/image", Image, reliable)
        for topic in also:  # another robot's joint states (a fleet)
            self._watch(topic, JointState, reliable)
        self.executor = SingleThreadedExecutor()  # a multi-threaded one spins a core here
        self.executor.add_node(self.node)
        threading.Thread(target=self.executor.spin, daemon=True).start()

    def name(self, relative: str) -> str:
        return relative if relative.startswith("/") else f"{self.ns}/{relative}"

    def _watch(self, relative: str, msg_type, qos, keep=None) -> None:
        topic = self.name(relative)
        self.arrivals[topic] = []

        def callback(msg, topic=topic):
            now = time.monotonic()
            with self.lock:
                self.arrivals[topic].append(now)
                if keep is not None:
                    keep.append((now, msg))
        self.node.create_subscription(msg_type, topic, callback, qos)

    def _tf(self, msg: TFMessage) -> None:
        prefix = f"{self.ns.strip('/')}/" if self.ns else ""
        if any(t.child_frame_id == f"{prefix}body" for t in msg.transforms):
            with self.lock:
                self.arrivals.setdefault("/tf", []).append(time.monotonic())

    def dropped(self) -> dict[str, int]:
        """Frames the driver held back for slow readers, per stream (from /diagnostics)."""
        self.wait(lambda: self.diagnostics is not None, 3.0)
        out = {}
        for status in (self.diagnostics.status if self.diagnostics else []):
            values = {v.key: v.value for v in status.values}
            mine = not self.ns or status.name.startswith(f"{self.ns}/")
            if "dropped_for_slow_readers" in values and mine:
                out[status.name.split("stream ", 1)[-1]] = int(values["dropped_for_slow_readers"])
        return out

    def wait(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.02)
        return False

    def count(self, topic: str, since: float) -> list[float]:
        with self.lock:
            return [t for t in self.arrivals.get(topic, []) if t >= since]

    # ------------------------------------------------------------------ checks
    def discovery(self, timeout: float) -> float | None:
        topic = self.name("joint_states")
        if self.wait(lambda: bool(self.count(topic, 0)), timeout):
            return self.count(topic, 0)[0] - self.started
        return None

    def graph(self) -> dict:
        time.sleep(1.0)  # sleep: what discovery finds in a second is what is reported
        topics = sorted(n for n, _ in self.node.get_topic_names_and_types())
        services = sorted(n for n, _ in self.node.get_service_names_and_types())
        return {"topics": topics, "services": services}

    def rates(self, seconds: float) -> dict:
        start = time.monotonic()
        time.sleep(seconds)  # sleep: the window the rates are measured over
        out = {}
        for topic in list(self.arrivals):
            stamps = self.count(topic, start)
            gaps = np.diff(stamps)
            worst = np.argsort(gaps)[-3:][::-1] if len(gaps) else []
            out[topic] = {"hz": len(stamps) / seconds,
                          "max_gap_ms": float(np.max(gaps) * 1e3) if len(gaps) else None,
                          # the three longest gaps: (start in s from the window's, length ms)
                          "gaps": [(round(stamps[i] - start, 2), round(gaps[i] * 1e3))
                                   for i in worst]}
        return out

    def call(self, relative: str, srv_type=Trigger, request=None, times: int = 1,
             timeout: float = 10.0) -> dict:
        client = self.node.create_client(srv_type, self.name(relative))
        if not client.wait_for_service(timeout_sec=timeout):
            return {"found": False}
        trips, answers = [], []
        for _ in range(times):
            done = threading.Event()
            t0 = time.monotonic()
            future = client.call_async(request or srv_type.Request())
            future.add_done_callback(lambda _, done=done: done.set())
            if not done.wait(timeout):
                answers.append(None)
                continue
            trips.append((time.monotonic() - t0) * 1e3)
            answers.append(future.result())
        last = answers[-1]
        return {"found": True, "answered": sum(a is not None for a in answers),
                "rtt_ms": trips, "success": getattr(last, "success", None),
                "message": getattr(last, "message", None)}

    def action(self) -> dict:
        client = ActionClient(self.node, Trajectory, self.name("trajectory"))
        if not client.wait_for_server(timeout_sec=10.0):
            return {"found": False}
        prefix = f"{self.ns.strip('/')}/" if self.ns else ""
        goal = Trajectory.Goal()
        goal.target_pose.header.frame_id = f"{prefix}body"
        goal.target_pose.pose.position.x = 0.5
        goal.target_pose.pose.orientation.w = 1.0
        feedback = []
        sent = client.send_goal_async(goal, feedback_callback=lambda f: feedback.append(f))
        if not self.wait(sent.done, 10.0) or not sent.result().accepted:
            return {"found": True, "accepted": False}
        result = sent.result().get_result_async()
        self.wait(result.done, 30.0)
        return {"found": True, "accepted": True, "feedback": len(feedback),
                "status": result.result().status if result.done() else None,
                "success": result.result().result.success if result.done() else None}

    def param(self, rate: float) -> dict:
        request = SetParameters.Request(parameters=[Parameter(
            name="robot_state_rate", value=ParameterValue(
                type=ParameterType.PARAMETER_DOUBLE, double_value=rate))])
        answer = self.call("spot_state/set_parameters", SetParameters, request)
        ok = answer.get("found") and answer["answered"] == 1
        return {"set": bool(ok), "rate": self.rates(3.0)[self.name("joint_states")]["hz"]}

    def cmd_vel(self, steps: int) -> dict:
        """Velocity steps 0 -> 0.4 m/s -> 0, published at 20 Hz as a teleop does: each step's
        latency from its first publish to odometry showing the change (polled every 5 ms);
        a step lasts until odometry shows the robot at its speed (or 1 s), so the next starts
        from rest or from a steady walk; then commands stop and the robot must stop by itself.
        The publisher is matched with the driver's subscriber before the first step, so
        discovery is not in the figure."""
        pub = self.node.create_publisher(Twist, self.name("cmd_vel"), 10)
        matched = self.wait(lambda: pub.get_subscription_count() > 0, 10.0)
        time.sleep(0.5)  # sleep: the driver's reader learns of this writer too (no query)
        latencies, starts, start_x = [], [], None
        with self.lock:
            if self.odometry:
                start_x = self.odometry[-1][1].pose.pose.position.x
        for i in range(steps * 2):
            speed = 0.4 if i % 2 == 0 else 0.0
            t0 = time.monotonic()
            next_publish, seen = t0, None
            while time.monotonic() - t0 < 1.0:
                if time.monotonic() >= next_publish:
                    pub.publish(Twist(linear=Twist().linear.__class__(x=speed)))
                    next_publish += 0.05
                with self.lock:
                    recent = [t for t, m in self.odometry if t >= t0 and (
                        m.twist.twist.linear.x > 0.02 if speed else
                        m.twist.twist.linear.x < 0.38)]
                    settled = bool(self.odometry) and self.odometry[-1][0] >= t0 and abs(
                        self.odometry[-1][1].twist.twist.linear.x - speed) < STEADY_MPS
                if seen is None and recent:
                    seen = recent[0] - t0
                if seen is not None and settled:
                    break
                time.sleep(0.005)
            starts.append((t0, speed, None if seen is None else seen * 1e3))
            if seen is not None:
                latencies.append(seen * 1e3)
        for _ in range(20):  # walk, then go silent
            pub.publish(Twist(linear=Twist().linear.__class__(x=0.4)))
            time.sleep(0.05)  # sleep: the 20 Hz pace of an operator's cmd_vel
        silent = time.monotonic()
        time.sleep(1.5)  # sleep: the silence whose last 0.5 s must show the robot stopped
        with self.lock:
            after = [(t, m) for t, m in self.odometry if t >= silent + 1.0]
            end_x = self.odometry[-1][1].pose.pose.position.x if self.odometry else None
        return {"step_latency_ms": latencies, "steps": steps * 2, "matched": matched,
                # (monotonic s of its first publish, speed, latency ms): for stage stamps
                "step_starts": starts,
                "moved_m": None if start_x is None or end_x is None else end_x - start_x,
                "stopped": bool(after) and all(abs(m.twist.twist.linear.x) < 0.02
                                               for _, m in after)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namespace", default="")
    parser.add_argument("--checks", default="graph,rates")
    parser.add_argument("--images", type=int, default=0)
    parser.add_argument("--raw-images", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--steps", type=int, default=0,
                        help="cmd_vel walk/stop cycles (default: calls / 4)")
    parser.add_argument("--discovery-timeout", type=float, default=30.0)
    parser.add_argument("--find-timeout", type=float, default=10.0,
                        help="s the trigger check waits for its service to appear")
    parser.add_argument("--also", action="append", default=[],
                        help="more JointState topics to rate (absolute names)")
    args = parser.parse_args(argv)
    probe = Probe(args.namespace, args.images, args.raw_images, tuple(args.also))
    out: dict = {"discovery_s": probe.discovery(args.discovery_timeout)}
    checks = args.checks.split(",")
    if out["discovery_s"] is None:  # what the operator did see: no peer, or no match?
        out["seen"] = {"nodes": probe.node.get_node_names_and_namespaces(),
                       "topics": sorted(n for n, _ in probe.node.get_topic_names_and_types())}
    if out["discovery_s"] is not None:
        if "graph" in checks:
            out["graph"] = probe.graph()
        if "rates" in checks:
            out["rates"] = probe.rates(args.seconds)
        if "trigger" in checks:
            out["trigger"] = probe.call("claim", times=args.calls, timeout=args.find_timeout)
        if "estop" in checks:
            out["estop"] = probe.call("estop/release", times=args.calls)
        if "stand" in checks:
            out["power_on"] = probe.call("power_on", timeout=20.0)
            out["stand"] = probe.call("stand", timeout=20.0)
        if "action" in checks:
            out["action"] = probe.action()
        if "param" in checks:
            out["param"] = [probe.param(25.0), probe.param(50.0)]
        if "cmd_vel" in checks:
            out["cmd_vel"] = probe.cmd_vel(args.steps or max(1, args.calls // 4))
        if "dropped" in checks:
            out["dropped"] = probe.dropped()
    print(json.dumps(out), flush=True)
    # Leave the graph (the driver stops sending to this reader at once), then skip the
    # interpreter's own teardown, which can abort in rmw's threads.
    probe.executor.shutdown(timeout_sec=2.0)
    probe.node.destroy_node()
    rclpy.try_shutdown()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
