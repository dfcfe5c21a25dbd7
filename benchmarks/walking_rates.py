"""A walking simulated Spot at a robot's rates: what `make run` streams (the five body cameras
with depth and depth points at 15 Hz, the lidar at 10 Hz, the state at 50 Hz) while the robot
walks a circle (0.4 m/s, 0.3 rad/s at 10 Hz), nothing pinned, the driver and the simulated
robot as their own processes and this process as a bare subscriber of every topic.

Phase 1 (``WINDOW_S``): each topic's rate as a share of its configured rate (header stamps
received in the window), and the simulated robot's CPU (its render workers included) per
image it delivered (visual and depth). Phase 2: ``test/operator_probe.py``'s cmd_vel steps
(0 -> 0.4 m/s -> 0, each ending once odometry shows the robot at its speed) with every camera
still streaming: the step's latency from its first publish to odometry showing it.

Each process's CPU is read apart (the robot's serving process, its render workers, the driver,
this subscriber), per delivered image and scaled to the configured rate: the cores this
machine would need to deliver every image. Then phase 1 again at lower camera rates, to find
the highest this machine holds while walking. ``--label before`` keeps the default run as
the figures of the code before a change (only the default configuration): with
``PYTHONPATH=<an older tree>/spot_sim:$PYTHONPATH`` the simulated robot is that tree's, and
the JSON records its commit.

    python benchmarks/walking_rates.py [--label before]   # ~4 min; walking_rates.json
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import _e2e
import _results
import numpy as np
import psutil
from geometry_msgs.msg import Twist

WINDOW_S = 20.0
STEPS = 25  # operator_probe.py steps of each direction
CAMERA_HZ, LIDAR_HZ, STATE_HZ = 15.0, 10.0, 50.0
LOWER_CAMERA_HZ = (10.0, 7.5, 5.0)
GOAL_RATE_PERCENT, GOAL_STATE_HZ, GOAL_STEP_P99_MS = 95.0, 49.0, 100.0


def topics(camera_hz: float) -> list[_e2e.Topic]:
    state = [t for t in _e2e.state_topics(STATE_HZ) if t.name in ("/joint_states", "/odometry")]
    return state + _e2e.sensor_topics(camera_hz, LIDAR_HZ)


def walk(node, stop: threading.Event) -> None:
    """A circle at 10 Hz until ``stop``."""
    publisher = node.create_publisher(Twist, "/cmd_vel", 1)
    command = Twist()
    command.linear.x, command.angular.z = 0.4, 0.3
    while not stop.wait(0.1):
        publisher.publish(command)


def stamped_rates(samples: dict, watched: list[_e2e.Topic], start: float,
                  end: float) -> dict[str, dict]:
    """Per topic: header stamps inside the window per second, as a share of its rate."""
    out = {}
    for topic in watched:
        stamps = [s for _, s, _ in samples.get(topic.name, []) if start <= s < end]
        hz = len(stamps) / (end - start)
        gaps = np.diff(sorted(stamps)) * 1e3 if len(stamps) > 1 else np.array([np.inf])
        out[topic.name] = {"hz": round(hz, 2), "percent": round(100 * hz / topic.hz, 1),
                           "largest_gap_ms": round(float(gaps.max()), 1)}
    return out


def cpu_split(sim: int, driver: int):
    """CPU seconds so far of the simulated robot's serving process, its render workers, the
    driver and this process (the bare subscriber)."""
    def seconds(process: psutil.Process) -> float:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            return 0.0
        return times.user + times.system

    robot = psutil.Process(sim)
    return {"robot_serving": seconds(robot),
            "robot_renderers": sum(seconds(c) for c in robot.children(recursive=True)),
            "driver": seconds(psutil.Process(driver)), "subscriber": seconds(psutil.Process())}


def probe_steps() -> dict:
    """operator_probe.py's cmd_vel check, as its own process (an operator's)."""
    out = subprocess.run([sys.executable, str(_e2e.REPO / "test" / "operator_probe.py"),
                          "--checks", "cmd_vel", "--steps", str(STEPS)],
                         capture_output=True, text=True, timeout=300, env=os.environ)
    assert out.returncode == 0, out.stderr[-2000:]
    steps = json.loads(out.stdout)["cmd_vel"]
    latencies = np.array(steps["step_latency_ms"])
    return {"steps": steps["steps"], "answered": len(latencies),
            "p50_ms": round(float(np.percentile(latencies, 50)), 1),
            "p99_ms": round(float(np.percentile(latencies, 99)), 1),
            "max_ms": round(float(latencies.max()), 1)}


def run(camera_hz: float, probe: bool = True) -> dict:
    """One walk with the cameras at ``camera_hz``; with ``probe``, the cmd_vel steps after."""
    sim, driver, _ = _e2e.start_as_launched("spot_walk_", camera_hz, LIDAR_HZ, STATE_HZ)
    subscriber = _e2e.Subscriber()
    watched = topics(camera_hz)
    subscriber.subscribe(watched)
    stop = threading.Event()
    steps = None
    try:
        for name in ("/claim", "/power_on", "/stand"):
            assert _e2e.call_trigger(subscriber.node, name).success, name
        walker = threading.Thread(target=walk, args=(subscriber.node, stop), daemon=True)
        walker.start()
        time.sleep(3.0)  # walking, every stream flowing
        before, start = cpu_split(sim.pid, driver.pid), time.time()
        time.sleep(WINDOW_S)
        after, end = cpu_split(sim.pid, driver.pid), time.time()
        stop.set()
        walker.join()
        rates = stamped_rates(subscriber.samples, watched, start, end)
        if probe:
            steps = probe_steps()
    finally:
        stop.set()
        subscriber.close()
        _e2e.stop(driver, sim)
    cpu = {k: round(100 * (after[k] - before[k]) / (end - start), 1) for k in after}
    images = sum(v["hz"] for k, v in rates.items() if k.endswith("/image"))
    wanted = 2 * len(_e2e.CAMERAS) * camera_hz
    sensors = {k: v for k, v in rates.items() if not k.startswith(("/joint", "/odom"))}
    robot_cpu = cpu["robot_serving"] + cpu["robot_renderers"]
    out = {
        "camera_hz": camera_hz, "cpu_percent_of_one_core": cpu,
        "images_delivered_per_s": round(images, 1),
        "robot_cpu_ms_per_image": round(10 * robot_cpu / images, 2),
        "cpu_ms_per_image": {k: round(10 * v / images, 2) for k, v in cpu.items()},
        # every process's CPU scaled to the configured rate (each grows with the images):
        # the cores this machine would need to deliver them all
        "cores_needed_at_configured_rate": round(sum(cpu.values()) * wanted / images / 100, 2),
        "sensor_percent_worst": min(v["percent"] for v in sensors.values()),
        "state_hz": rates["/joint_states"]["hz"], "topics": rates}
    if steps is not None:
        out["cmd_vel_steps"] = steps
    return out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="after",
                        help="before: keep this run as the figures of the code before")
    args = parser.parse_args(argv)
    path = _results.RESULTS_DIR / "walking_rates.json"
    result = json.loads(path.read_text()) if path.exists() else {}
    result.update({"benchmark": "walking_rates", "window_s": WINDOW_S, "camera_hz": CAMERA_HZ,
                   "lidar_hz": LIDAR_HZ, "state_hz": STATE_HZ,
                   "goals": {"rate_percent_min": GOAL_RATE_PERCENT,
                             "state_hz_min": GOAL_STATE_HZ,
                             "cmd_vel_step_p99_ms_max": GOAL_STEP_P99_MS}})
    simulator = Path(importlib.util.find_spec("spot_sim").origin).parent  # maybe another tree
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=simulator).stdout.strip()
    result[args.label] = {"commit": commit, "measured_at": time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **run(CAMERA_HZ, probe=True)}
    if args.label == "after":  # the highest camera rate this machine holds while walking
        result["lower_camera_rates"] = [run(hz, probe=True) for hz in LOWER_CAMERA_HZ]
    _results.write("walking_rates", result)
    return result


if __name__ == "__main__":
    out = main()
    print(json.dumps({k: {f: out[k][f] for f in ("sensor_percent_worst", "state_hz",
                                                 "robot_cpu_ms_per_image")}
                      for k in ("before", "after") if k in out}))
