"""How the driver's CPU grows: with camera streams, with the state rate, with robots per host.

Each point runs simulated robot(s) and driver(s) as their own processes and this process as a
bare subscriber of every topic they publish (raw, reliable), then reads CPU over a window once
every topic has delivered. Capabilities not measured (arm, docking, missions, autonomy,
choreography) are off, so each series isolates one cost:

- cameras: 1, 2, 4, 6 cameras (the sixth is the hand), each image + compressed + camera_info
  + depth + depth camera_info at 15 Hz, state 50 Hz, no lidar;
- state rate: 10, 50, 100, 200 Hz of the full state set (joint_states, /tf, odometry, every
  status), no cameras or lidar;
- robots: 1, 2, 4 simulated robots, each with its own driver (namespace and frame prefix),
  state 50 Hz + one camera each.

For each series: the cost per unit (per camera and per MB/s delivered, per state cycle, per
robot) between consecutive points, next to the subscriber's CPU for the same topics in the
same run. The bars: per-robot driver CPU at 2 robots within 10 % of 1 robot, and no step of a
series costing more than 1.5x an earlier step (the "knee"), counting only points where the
machine still had CPU to spare (a point whose processes use over 90 % of all cores is
reported but marked saturated: its cost is the machine's, not the driver's). A py-spy
profile of the driver at 200 Hz state says where a state cycle's time goes.
Writes benchmarks/results/driver_scaling.json.
"""

import itertools
import json
import os
import tempfile
import time

import _e2e
import _results
import numpy as np

CAMERA_HZ = 15.0
WINDOW_S = float(os.environ.get("BENCH_WINDOW_S", 10.0))
PROFILE_S = float(os.environ.get("BENCH_PROFILE_S", 8.0))
STARTUP_TIMEOUT_S = 60.0
ALL_CAMERAS = (*_e2e.CAMERAS, "hand")
OFF = {f"enable_{name}": "false"
       for name in ("manipulation", "docking", "missions", "autonomy", "choreography")}
GOALS = {"per_robot_cpu_2_over_1_max": 1.10, "knee_max": 1.5, "saturated_above_percent": 90.0}


def _params(cameras: tuple[str, ...], state_hz: float) -> dict:
    params = dict(OFF, robot_state_rate=state_hz, status_rate=state_hz, lidar_source='""',
                  camera_rate=CAMERA_HZ)
    if cameras:
        params["cameras"] = "[" + ",".join(f'"{c}"' for c in cameras) + "]"
    else:
        params["enable_perception"] = "false"
    return params


def run_point(subscriber: _e2e.Subscriber, robots: int, cameras: tuple[str, ...],
              state_hz: float, arm: bool = False, profile_s: float = 0.0) -> dict:
    """One measurement: ``robots`` sim + driver pairs, each publishing ``cameras``."""
    topics, pids, procs = [], {}, []
    with tempfile.TemporaryDirectory() as certs:
        try:
            for i in range(robots):
                ns = f"/robot{i}" if robots > 1 else ""
                sim, port, ca = _e2e.start_sim(f"{certs}/{i}", *(["--arm"] if arm else []))
                params = _params(cameras, state_hz)
                if ns:
                    params["frame_prefix"] = f"robot{i}/"
                driver = _e2e.start_driver(port, ca, params, ns)
                procs += [driver, sim]
                pids[f"driver{i}"], pids[f"sim{i}"] = driver.pid, sim.pid
                topics += [t for c in cameras for t in _e2e.camera_topics(c, CAMERA_HZ,
                                                                          "reliable", ns)]
                topics += _e2e.state_topics(state_hz, ns, tf=(i == 0))
            subscriber.subscribe(topics)
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while time.monotonic() < deadline and not all(subscriber.samples.get(t.name)
                                                          for t in topics):
                time.sleep(0.5)
            time.sleep(2.0)
            pids["subscriber"] = os.getpid()
            cpu, start, end = _e2e.measure(pids, WINDOW_S, threads_of="driver0")
            delivered = _e2e.delivery(subscriber.samples, topics, start, end,
                                      tf_publishers=robots)
            profile = _e2e.profile(pids["driver0"], profile_s) if profile_s else None
        finally:
            _e2e.stop(*procs)
            subscriber.unsubscribe_all()
    threads = cpu.pop("driver0_threads")
    drivers = sum(v for k, v in cpu.items() if k.startswith("driver"))
    sims = sum(v for k, v in cpu.items() if k.startswith("sim"))
    state = [v["delivered_percent"] for t, v in delivered.items()
             if t.endswith(("joint_states", "odometry"))]
    total = drivers + sims + cpu["subscriber"]
    return {"robots": robots, "cameras": len(cameras), "state_hz": state_hz,
            "driver_cpu_percent": round(drivers, 1), "sim_cpu_percent": round(sims, 1),
            "machine_cpu_percent_of_all_cores": round(total / os.cpu_count(), 1),
            "subscriber_cpu_percent": cpu["subscriber"],
            "driver_to_subscriber_cpu": round(drivers / cpu["subscriber"], 2),
            "messages_per_s": round(sum(v["delivered_hz"] for v in delivered.values()), 1),
            "megabytes_per_s": round(sum(v["bytes_per_s"] for v in delivered.values()) / 1e6, 2),
            "min_delivered_percent": min(v["delivered_percent"] for v in delivered.values()),
            "min_state_delivered_percent": min(state),
            "driver_cpu_percent_by_thread": threads,
            **({"driver_profile": profile} if profile else {})}


def unit_costs(points: list[dict], unit: str) -> list[float]:
    """Driver CPU % added per unit between consecutive points."""
    return [round((b["driver_cpu_percent"] - a["driver_cpu_percent"]) / (b[unit] - a[unit]), 3)
            for a, b in itertools.pairwise(points)]


def saturated(point: dict) -> bool:
    return point["machine_cpu_percent_of_all_cores"] > GOALS["saturated_above_percent"]


def knee(points: list[dict], unit: str) -> float | None:
    """The largest ratio of a later step's per-unit cost to an earlier step's, among steps
    between unsaturated points: 1.0 is linear, below 1 costs fall as load grows, above 1 a
    knee (a cost that grows with load); None when fewer than two such steps cost anything."""
    costs = [c for c in unit_costs([p for p in points if not saturated(p)], unit) if c > 0]
    if len(costs) < 2:
        return None
    return round(max(later / earlier for earlier, later in itertools.combinations(costs, 2)),
                 2)


def series(run, values: tuple) -> list[dict]:
    """Each point measured twice, ascending then descending, and averaged: this VM's speed
    drifts by tens of percent over minutes, which would otherwise read as a knee."""
    first = {v: run(v) for v in values}
    second = {v: run(v) for v in reversed(values)}
    points = []
    for v in values:
        a, b = first[v], second[v]
        point = {k: (round((a[k] + b[k]) / 2, 2) if isinstance(a[k], float) else a[k])
                 for k in a if k not in ("driver_profile", "driver_cpu_percent_by_thread")}
        point["driver_cpu_percent_by_thread"] = a["driver_cpu_percent_by_thread"]
        point["driver_cpu_percent_runs"] = [a["driver_cpu_percent"], b["driver_cpu_percent"]]
        if "driver_profile" in a:
            point["driver_profile"] = a["driver_profile"]
        points.append(point)
    return points


def main() -> dict:
    subscriber = _e2e.Subscriber()
    try:
        cameras = series(lambda n: run_point(subscriber, 1, ALL_CAMERAS[:n], 50.0, arm=True),
                         (1, 2, 4, 6))
        state = series(lambda hz: run_point(subscriber, 1, (), hz, profile_s=PROFILE_S
                                            if hz == 200.0 else 0), (10.0, 50.0, 100.0, 200.0))
        robots = series(lambda n: run_point(subscriber, n, ("frontleft",), 50.0), (1, 2, 4))
    finally:
        subscriber.close()
    camera_costs = unit_costs(cameras, "cameras")
    byte_costs = unit_costs(cameras, "megabytes_per_s")
    state_costs = unit_costs(state, "state_hz")
    robot_costs = unit_costs(robots, "robots")
    slope = float(np.polyfit([p["state_hz"] for p in state],
                             [p["driver_cpu_percent"] for p in state], 1)[0])
    per_robot = [p["driver_cpu_percent"] / p["robots"] for p in robots]
    knees = {"cameras": knee(cameras, "megabytes_per_s"), "state_rate": knee(state, "state_hz")}
    results = {
        "window_s": WINDOW_S, "goals": GOALS,
        "cameras": {"points": cameras, "driver_cpu_percent_per_camera": camera_costs,
                    "driver_cpu_percent_per_megabyte_per_s": byte_costs,
                    "knee": knees["cameras"]},
        "state_rate": {"points": state,
                       "driver_cpu_percent_per_hz": state_costs,
                       "driver_us_per_state_cycle": round(slope * 1e4, 1),
                       "knee": knees["state_rate"]},
        "robots": {"points": robots,
                   "driver_cpu_percent_per_robot": [round(v, 1) for v in per_robot],
                   "driver_cpu_percent_per_added_robot": robot_costs,
                   "per_robot_cpu_2_over_1": round(per_robot[1] / per_robot[0], 3)},
        "saturated_points": [f"{name} {p[unit]:g}" for name, points, unit in (
            ("cameras", cameras, "cameras"), ("state Hz", state, "state_hz"),
            ("robots", robots, "robots")) for p in points if saturated(p)],
    }
    results["goals_met"] = {
        "per_robot_cpu_2_over_1": results["robots"]["per_robot_cpu_2_over_1"]
        <= GOALS["per_robot_cpu_2_over_1_max"],
        **{f"{name}_knee": value is not None and value <= GOALS["knee_max"]
           for name, value in knees.items()}}
    _results.write("driver_scaling", results)
    return results


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
