"""Shared pieces of the end-to-end benchmarks (a module, not a benchmark: run_benchmarks.sh
skips files starting with ``_``).

Simulated robots and drivers run as their own processes; this process is the subscriber. It
takes every topic raw (no deserializing: the bare cost of receiving), records receipt time and
header stamp, and reads every process's CPU time with psutil over the same window.
"""

import collections
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile
from rosidl_runtime_py.utilities import get_message

from spot_driver.core import qos

REPO = Path(__file__).resolve().parent.parent
USER, PASSWORD = "bench", "bench-password"
CAMERAS = ("frontleft", "frontright", "left", "right", "back")
RENDER_WORKER = "spot_sim.perception.render_worker"
STATE_TOPICS = {  # relative topic -> type; all at robot_state_rate
    "joint_states": "sensor_msgs/msg/JointState", "odometry": "nav_msgs/msg/Odometry",
    "status/feet": "spot_msgs/msg/FootStateArray", "status/power": "spot_msgs/msg/PowerState",
    "status/battery": "spot_msgs/msg/BatteryStateArray",
    "status/estop": "spot_msgs/msg/EStopStateArray", "status/wifi": "spot_msgs/msg/WiFiState",
    "status/system_faults": "spot_msgs/msg/SystemFaultState",
    "status/behavior_faults": "spot_msgs/msg/BehaviorFaultState",
    "battery_state": "sensor_msgs/msg/BatteryState",
}


class Topic:
    """One subscribed topic: full name, type, expected rate, QoS and whether it is state."""

    def __init__(self, name: str, type_name: str, hz: float, profile: QoSProfile,
                 state: bool = False) -> None:
        self.name, self.type_name, self.hz, self.profile, self.state = (
            name, type_name, hz, profile, state)


def camera_topics(camera: str, hz: float, sensor_qos: str, ns: str = "") -> list[Topic]:
    """image, compressed, camera_info, depth image and depth camera_info of one camera."""
    profile = qos.SENSOR_PROFILES[sensor_qos]
    return [Topic(f"{ns}/camera/{camera}/image", "sensor_msgs/msg/Image", hz, profile),
            Topic(f"{ns}/camera/{camera}/image/compressed", "sensor_msgs/msg/CompressedImage",
                  hz, profile),
            Topic(f"{ns}/camera/{camera}/camera_info", "sensor_msgs/msg/CameraInfo", hz, profile),
            Topic(f"{ns}/depth/{camera}/image", "sensor_msgs/msg/Image", hz, profile),
            Topic(f"{ns}/depth/{camera}/camera_info", "sensor_msgs/msg/CameraInfo", hz, profile)]


def state_topics(hz: float, ns: str = "", tf: bool = True) -> list[Topic]:
    out = [Topic(f"{ns}/{name}", type_name, hz,
                 qos.STATE if name in ("joint_states", "odometry") else qos.STREAM, state=True)
           for name, type_name in STATE_TOPICS.items()]
    if tf:  # /tf is global: one per robot shares it
        out.append(Topic("/tf", "tf2_msgs/msg/TFMessage", hz, qos.STATE, state=True))
    return out


def start_sim(certs: str, *args: str) -> tuple[subprocess.Popen, int, str]:
    env = dict(os.environ, SPOT_SIM_PASSWORD=PASSWORD)
    sim = subprocess.Popen([sys.executable, "-m", "spot_sim", "--port", "0", "--certs-dir", certs,
                            "--username", USER, *args], env=env, stdout=subprocess.PIPE,
                           text=True)
    port = ca = None
    while port is None or ca is None:
        line = sim.stdout.readline()
        if not line:
            raise RuntimeError("spot_sim exited")
        if m := re.search(r"listening on 127\.0\.0\.1:(\d+)", line):
            port = int(m.group(1))
        if m := re.search(r"ca-cert (.+)$", line.strip()):
            ca = m.group(1)
    return sim, port, ca


def start_driver(port: int, ca: str, params: dict, namespace: str = "",
                 source: Path | None = None, module: str = "spot_driver") -> subprocess.Popen:
    """The driver as a process; ``source``: a directory holding another ``spot_driver``
    package to run instead of this tree's (e.g. an older commit's); ``module``:
    ``spot_driver.low_level`` for the joint-control streams' process."""
    env = dict(os.environ, BOSDYN_CLIENT_USERNAME=USER, BOSDYN_CLIENT_PASSWORD=PASSWORD)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(source), env.get("PYTHONPATH", "")])
    args = [sys.executable, "-m", module, "--ros-args", "--params-file",
            str(REPO / "spot_driver" / "config" / "spot_driver.yaml"), "-p", "hostname:=127.0.0.1",
            "-p", f"port:={port}", "-p", f"certificate:={ca}"]
    for key, value in params.items():
        args += ["-p", f"{key}:={value}"]
    if namespace:
        args += ["-r", f"__ns:={namespace}"]
    return subprocess.Popen([*args, "--log-level", "warn"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_as_launched(prefix: str, camera_hz: float, lidar_hz: float, state_hz: float):
    """A simulated robot and a driver as ``spot_sim.launch.py`` starts them (depth points
    and the e-stop endpoint on), in a new temporary directory: (sim, driver, directory)."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    sim, port, ca = start_sim(str(tmp / "certs"))
    driver = start_driver(port, ca, {
        "camera_rate": camera_hz, "lidar_rate": lidar_hz, "robot_state_rate": state_hz,
        "publish_depth_points": "true", "estop_endpoint": "true"})
    return sim, driver, tmp


def sensor_topics(camera_hz: float, lidar_hz: float) -> list[Topic]:
    """Every camera's topics (``camera_topics``, reliable) with its depth points, and the
    lidar's points."""
    out = []
    for camera in CAMERAS:
        out += camera_topics(camera, camera_hz, "reliable")
        out.append(Topic(f"/depth/{camera}/points", "sensor_msgs/msg/PointCloud2",
                         camera_hz, qos.SENSOR))
    out.append(Topic("/lidar/points", "sensor_msgs/msg/PointCloud2", lidar_hz, qos.SENSOR))
    return out


def wait_future(future, timeout: float, period: float = 0.002):
    """``future``'s result, polled every ``period`` s (a spinning executor completes it)."""
    deadline = time.monotonic() + timeout
    while not future.done():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(period)
    return future.result()


def call_trigger(node, name: str, timeout: float = 30.0):
    """Call the std_srvs/Trigger service ``name`` from ``node``; its response."""
    from std_srvs.srv import Trigger
    client = node.create_client(Trigger, name)
    assert client.wait_for_service(timeout_sec=timeout), name
    return wait_future(client.call_async(Trigger.Request()), timeout)


def stop(*procs: subprocess.Popen) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Subscriber:
    """Takes topics raw on one SingleThreadedExecutor thread (a bare subscriber)."""

    def __init__(self) -> None:
        rclpy.init()
        self.node = rclpy.create_node("bench_subscriber")
        # topic -> [(receipt time, header stamp, bytes)]
        self.samples: dict[str, list[tuple[float, float, int]]] = collections.defaultdict(list)
        self.last: dict[str, bytes] = {}  # the newest message of each topic
        self._subs = []
        self._executor = SingleThreadedExecutor()
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._executor.spin, daemon=True)
        self._thread.start()

    def subscribe(self, topics: list[Topic]) -> None:
        for topic in topics:
            self._subs.append(self.node.create_subscription(
                get_message(topic.type_name), topic.name, self._callback(topic.name),
                topic.profile, raw=True))

    def reset(self) -> None:
        """Forget what was received (subscriptions stay)."""
        for samples in self.samples.values():
            samples.clear()

    def unsubscribe_all(self) -> None:
        for sub in self._subs:
            self.node.destroy_subscription(sub)
        self._subs.clear()
        self.samples.clear()

    def _callback(self, name: str):
        samples = self.samples[name]
        offset = 8 if name == "/tf" else 4  # /tf: the first transform's header

        def record(data: bytes) -> None:
            sec, nanosec = struct.unpack_from("<iI", data, offset)
            samples.append((time.time(), sec + nanosec * 1e-9, len(data)))
            self.last[name] = data
        return record

    def close(self) -> None:
        self._executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown()


class StreamLatencies:
    """The driver's own added latency per stream (response received -> published), p50 and
    p99 as its ``/diagnostics`` report them; the newest report of each stream is kept."""

    def __init__(self, node, namespace: str = "") -> None:
        self.latest: dict[str, tuple[float, float]] = {}
        node.create_subscription(DiagnosticArray, f"{namespace}/diagnostics", self._take, 10)

    def _take(self, msg) -> None:
        for status in msg.status:
            values = {v.key: v.value for v in status.values}
            if "added_latency_ms_p99" in values:
                name = status.name.split("stream ", 1)[-1]
                self.latest[name] = (float(values["added_latency_ms_p50"]),
                                     float(values["added_latency_ms_p99"]))

    def summary(self, prefixes: tuple[str, ...] = ("camera", "point cloud")) -> dict:
        """Per stream whose name starts with one of ``prefixes``: [p50, p99] ms, and the
        worst p99 among them."""
        chosen = {k: list(v) for k, v in sorted(self.latest.items()) if k.startswith(prefixes)}
        return {"per_stream_ms_p50_p99": chosen,
                "worst_ms_p99": max((v[1] for v in chosen.values()), default=None)}


def cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid``, with those of its render workers for a simulated robot (its
    cameras' and lidar's renders run there; a benchmark's own children are not its CPU)."""
    process = psutil.Process(pid)
    total = 0.0
    for each in (process, *process.children(recursive=True)):
        try:
            if each is not process and RENDER_WORKER not in " ".join(each.cmdline()):
                continue
            times = each.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def thread_cpu_seconds(pid: int) -> dict[int, tuple[str, float]]:
    """CPU seconds of each thread of ``pid``, with its kernel name (Python threads all show
    as ``python``; gRPC's C core as ``event_engine``, Fast DDS as ``dds.*``)."""
    out = {}
    for thread in psutil.Process(pid).threads():
        try:
            name = Path(f"/proc/{pid}/task/{thread.id}/comm").read_text().strip()
        except OSError:
            continue
        out[thread.id] = (name, thread.user_time + thread.system_time)
    return out


def thread_groups(before: dict, after: dict, seconds: float) -> dict[str, float]:
    """CPU % of one core per thread kind between two ``thread_cpu_seconds`` snapshots."""
    groups: collections.Counter = collections.Counter()
    for tid, (name, cpu) in after.items():
        kind = "dds" if name.startswith("dds.") else name
        groups[kind] += cpu - before.get(tid, (name, 0.0))[1]
    return {k: round(100 * v / seconds, 1) for k, v in groups.most_common() if v > 0}


def measure(pids: dict[str, int], window_s: float,
            threads_of: str = "") -> tuple[dict[str, float], float, float]:
    """CPU % of one core of each process over ``window_s``, and the window's wall times;
    with ``threads_of``, also that process's CPU by thread kind (key ``<name>_threads``)."""
    before = {name: cpu_seconds(pid) for name, pid in pids.items()}
    threads = thread_cpu_seconds(pids[threads_of]) if threads_of else None
    start = time.time()
    time.sleep(window_s)
    end = time.time()
    cpu = {name: round(100 * (cpu_seconds(pid) - before[name]) / (end - start), 2)
           for name, pid in pids.items()}
    if threads_of:
        cpu[f"{threads_of}_threads"] = thread_groups(
            threads, thread_cpu_seconds(pids[threads_of]), end - start)
    return cpu, start, end


def delivery(samples: dict, topics: list[Topic], start: float, end: float,
             tf_publishers: int = 1) -> dict[str, dict]:
    """Per topic: delivered rate and % of the expected rate, bytes/s, receipt age p50/p99
    (ms)."""
    out = {}
    for topic in topics:
        window = [(t, s, n) for t, s, n in samples.get(topic.name, []) if start <= t < end]
        ages = np.array([t - s for t, s, _ in window]) * 1e3
        expected = topic.hz * (tf_publishers if topic.name == "/tf" else 1)
        rate = len(window) / (end - start)
        out[topic.name] = {
            "expected_hz": expected, "delivered_hz": round(rate, 2),
            "delivered_percent": round(100 * rate / expected, 1),
            "bytes_per_s": round(sum(n for _, _, n in window) / (end - start)),
            "age_ms_p50": round(float(np.percentile(ages, 50)), 1) if len(ages) else None,
            "age_ms_p99": round(float(np.percentile(ages, 99)), 1) if len(ages) else None}
    return out


def ages_ms(samples: dict, names: list[str], start: float, end: float) -> np.ndarray:
    return np.array([(t - s) * 1e3 for name in names for t, s, _ in samples.get(name, [])
                     if start <= t < end])


PROFILE_GROUPS = (  # (group, substrings of "file:function" frames); first match wins
    ("jpeg decode", ("simplejpeg", "PIL", "images.py:decode_pixels")),
    ("image conversion", ("perception/images.py", "conversions/sensor_cdr.py")),
    ("point cloud conversion", ("conversions/point_cloud.py",)),
    ("state conversion", ("state/state_cdr.py", "state/status_cdr.py", "state/pipeline.py",
                          "conversions/cdr.py")),
    ("dds publish", ("publisher.py:Publisher.publish",)),
    ("dds take / executor", ("executors.py", "rclpy/")),
    ("grpc receive", ("grpc/", "_channel.py")),
    ("protobuf", ("protobuf", "_pb2")),
    ("sdk", ("bosdyn/",)),
)


def profile(pid: int, seconds: float) -> dict | None:
    """Where the process's Python time goes: py-spy samples of the thread holding the GIL,
    grouped by the innermost frame that matches a group; None when py-spy is missing.
    (Work done with the GIL released, e.g. inside gRPC's C core, is not sampled.)"""
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        return None
    with tempfile.NamedTemporaryFile(suffix=".txt") as out:
        subprocess.run([str(spy), "record", "--pid", str(pid), "--duration", str(int(seconds)),
                        "--rate", "200", "--format", "raw", "--gil", "--nonblocking", "--output",
                        out.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False, timeout=seconds + 30)
        lines = Path(out.name).read_text().splitlines()
    groups: collections.Counter = collections.Counter()
    leaves: collections.Counter = collections.Counter()
    total = 0
    for line in lines:
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        count = int(count)
        total += count
        frames = stack.split(";")
        leaves[_frame_name(frames[-1])] += count
        groups[_group(frames)] += count
    if not total:
        return None
    return {"samples": total,
            "groups_percent": {g: round(100 * n / total, 1) for g, n in groups.most_common()},
            "top_functions_percent": {f: round(100 * n / total, 1)
                                      for f, n in leaves.most_common(12)}}


def _frame_name(frame: str) -> str:
    """'function (path/file.py:line)' -> 'file.py:function'."""
    m = re.match(r"(.*) \((.*?):\d+\)$", frame.strip())
    return f"{Path(m.group(2)).name}:{m.group(1)}" if m else frame.strip()


def _group(frames: list[str]) -> str:
    for frame in reversed(frames):
        m = re.match(r"(.*) \((.*?):\d+\)$", frame.strip())
        key = f"{m.group(2)}:{m.group(1)}" if m else frame
        for group, needles in PROFILE_GROUPS:
            if any(n in key for n in needles):
                return group
    return "other"
