"""Cameras and lidar end to end: simulated Spot -> driver -> subscriber, three processes.

The simulated robot (``python -m spot_sim``) and the driver run as their own processes; this
process subscribes (raw CDR, reliable as RViz and image_transport do) to every camera topic of
the five body cameras (image, compressed, camera_info, depth image) at 15 Hz and to the lidar
at 10 Hz for 30 s, and records per topic the delivered rate and the image age (header stamp,
i.e. acquisition time on the local clock, to receipt). It also takes the robot-state streams
(joint_states, odometry, /tf; reliable) to record the state rate held under that load (goal:
>= 99 % of robot_state_rate). Writes benchmarks/results/perception_e2e.json.
"""

import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import psutil
import rclpy
from nav_msgs.msg import Odometry
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import CameraInfo, CompressedImage, Image, JointState, PointCloud2
from tf2_msgs.msg import TFMessage

from spot_driver import qos

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results" / "perception_e2e.json"  # best_effort: *_best_effort
CAMERAS = ("frontleft", "frontright", "left", "right", "back")
CAMERA_HZ, LIDAR_HZ, STATE_HZ = 15.0, 10.0, 50.0
STATE_TOPICS = ("/joint_states", "/odometry", "/tf")
WARMUP_S = float(os.environ.get("BENCH_WARMUP_S", 6.0))
WINDOW_S = float(os.environ.get("BENCH_WINDOW_S", 30.0))
SENSOR_QOS = os.environ.get("BENCH_SENSOR_QOS", "reliable")  # or best_effort (both: README)
USER, PASSWORD = "bench", "bench-password"


def topics() -> dict[str, tuple[type, float]]:
    out = {}
    for c in CAMERAS:
        out[f"/camera/{c}/image"] = (Image, CAMERA_HZ)
        out[f"/camera/{c}/image/compressed"] = (CompressedImage, CAMERA_HZ)
        out[f"/camera/{c}/camera_info"] = (CameraInfo, CAMERA_HZ)
        out[f"/depth/{c}/image"] = (Image, CAMERA_HZ)
    out["/lidar/points"] = (PointCloud2, LIDAR_HZ)
    out["/joint_states"] = (JointState, STATE_HZ)
    out["/odometry"] = (Odometry, STATE_HZ)
    out["/tf"] = (TFMessage, STATE_HZ)
    return out


def start_sim(certs: str) -> tuple[subprocess.Popen, int, str]:
    env = dict(os.environ, SPOT_SIM_PASSWORD=PASSWORD)
    sim = subprocess.Popen([sys.executable, "-m", "spot_sim", "--port", "0", "--certs-dir", certs,
                            "--username", USER], env=env, stdout=subprocess.PIPE, text=True)
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


def start_driver(port: int, ca: str) -> subprocess.Popen:
    env = dict(os.environ, BOSDYN_CLIENT_USERNAME=USER, BOSDYN_CLIENT_PASSWORD=PASSWORD)
    return subprocess.Popen(
        [sys.executable, "-m", "spot_driver", "--ros-args", "--params-file",
         str(REPO / "config" / "spot_driver.yaml"), "-p", "hostname:=127.0.0.1",
         "-p", f"port:={port}", "-p", f"certificate:={ca}",
         "-p", f"camera_rate:={CAMERA_HZ}", "-p", f"lidar_rate:={LIDAR_HZ}",
         "-p", "publish_raw_images:=true", "-p", "publish_compressed_images:=true",
         "-p", "publish_depth:=true", "-p", f"robot_state_rate:={STATE_HZ}",
         "-p", f"sensor_qos:={SENSOR_QOS}",
         "--log-level", "warn"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Recorder:
    """Receipt time and header stamp of every message, by topic (raw CDR: no deserializing)."""

    def __init__(self, node) -> None:
        self.samples: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self._lock = threading.Lock()
        for topic, (msg_type, _) in topics().items():
            profile = qos.STATE if topic in STATE_TOPICS else qos.SENSOR_PROFILES[SENSOR_QOS]
            node.create_subscription(msg_type, topic, self._callback(topic), profile, raw=True)

    def _callback(self, topic: str):
        samples = self.samples[topic]

        def record(data: bytes) -> None:
            now = time.time()
            offset = 8 if topic == "/tf" else 4  # /tf: the first transform's header
            sec, nanosec = struct.unpack_from("<iI", data, offset)
            samples.append((now, sec + nanosec * 1e-9))
        return record


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def main() -> dict:
    rclpy.init()
    node = rclpy.create_node("perception_bench")
    recorder = Recorder(node)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    with tempfile.TemporaryDirectory() as certs:
        sim, port, ca = start_sim(certs)
        driver = start_driver(port, ca)
        try:
            time.sleep(WARMUP_S)
            procs = {"driver": psutil.Process(driver.pid), "sim": psutil.Process(sim.pid),
                     "subscriber": psutil.Process()}
            cpu_before = {k: cpu_seconds(p) for k, p in procs.items()}
            start = time.time()
            time.sleep(WINDOW_S)
            end = time.time()
            cpu = {k: round(100 * (cpu_seconds(p) - cpu_before[k]) / (end - start), 1)
                   for k, p in procs.items()}
        finally:
            driver.send_signal(2)
            driver.wait(timeout=10)
            sim.send_signal(2)
            sim.wait(timeout=10)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()

    per_topic = {}
    image_ages = []
    for topic, (_, hz) in topics().items():
        window = [(t, s) for t, s in recorder.samples[topic] if start <= t < end]
        ages = np.array([t - s for t, s in window]) * 1e3
        rate = len(window) / (end - start)
        per_topic[topic] = {
            "requested_hz": hz, "delivered_hz": round(rate, 2),
            "delivered_percent": round(100 * rate / hz, 1),
            "age_ms_p50": round(float(np.percentile(ages, 50)), 1) if len(ages) else None,
            "age_ms_p95": round(float(np.percentile(ages, 95)), 1) if len(ages) else None}
        if topic.endswith("/image"):
            image_ages.extend(ages)
    image_ages = np.array(image_ages)
    results = {
        "window_s": WINDOW_S, "sensor_qos": SENSOR_QOS, "cameras": list(CAMERAS),
        "camera_hz": CAMERA_HZ,
        "lidar_hz": LIDAR_HZ, "cpu_percent_of_one_core": cpu,
        "min_delivered_percent": min(v["delivered_percent"] for t, v in per_topic.items()
                                     if t not in STATE_TOPICS),
        "state_hz": STATE_HZ,
        "state_delivered_percent": {t: per_topic[t]["delivered_percent"] for t in STATE_TOPICS},
        "image_age_ms_p50": round(float(np.percentile(image_ages, 50)), 1),
        "image_age_ms_p95": round(float(np.percentile(image_ages, 95)), 1),
        "image_age_ms_p99": round(float(np.percentile(image_ages, 99)), 1),
        "targets": {"delivered_percent_min": 99.0, "image_age_ms_p50_max": 30.0,
                    "driver_cpu_percent_max": 60.0, "state_delivered_percent_min": 99.0},
        "topics": per_topic,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    path = RESULTS if SENSOR_QOS == "reliable" else RESULTS.with_name(
        f"perception_e2e_{SENSOR_QOS}.json")
    path.write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    out = main()
    print(json.dumps({k: v for k, v in out.items() if k != "topics"}, indent=2))
