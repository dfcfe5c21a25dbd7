"""Full perception load end to end: simulated Spot -> driver -> subscriber, three processes.

The driver publishes the five body cameras (image, compressed, camera_info, depth image and
its camera_info) at 15 Hz, the lidar at 10 Hz and the whole robot state (joint_states, /tf,
odometry and every status) at 50 Hz. This process takes every one of those topics raw (a bare
subscriber; reliable as RViz and image_transport do) for 30 s and records delivery, image age
(header stamp = acquisition time on the local clock, to receipt) and every process's CPU.

Floors in the same run, by code that does not depend on the driver: a bare publisher
(``_replay.py``) publishes the driver's own serialized messages at the same rates once the
driver is stopped, and the same bare subscriber's CPU while it receives them is the floor
(the subscriber fed by the driver moves with the driver's timing and is reported beside it).
Driver and replay alternate over ``ROUNDS`` rounds (a new driver each round, the simulated
robot kept): a ratio is the median of the rounds' ratios, so a passing slowdown of the
machine moves one round, not the figure. The driver's own added latency (response received
-> published, per stream) comes from its ``/diagnostics`` (the last 20 s of each round's
window). A py-spy profile of the driver (last round) says where its cycles go. Goals (issues
19 and 31): driver CPU <= 1.5x the replay-fed subscriber's, delivered >= 99.5 % on every
topic, image age p99 <= 15 ms, driver added latency p99 <= 5 ms, state 50 Hz.
Writes benchmarks/results/perception_e2e.json (``BENCH_SENSOR_QOS=best_effort``:
perception_e2e_best_effort.json).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import _e2e
import _results
import numpy as np

CAMERA_HZ, LIDAR_HZ, STATE_HZ = 15.0, 10.0, 50.0
WARMUP_S = float(os.environ.get("BENCH_WARMUP_S", 6.0))
WINDOW_S = float(os.environ.get("BENCH_WINDOW_S", 20.0))  # per round (the replay: half)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 3))
PROFILE_S = float(os.environ.get("BENCH_PROFILE_S", 10.0))
SENSOR_QOS = os.environ.get("BENCH_SENSOR_QOS", "reliable")  # or best_effort (both: README)
GOALS = {"driver_to_subscriber_cpu_max": 1.5, "delivered_percent_min": 99.5,
         "image_age_ms_p99_max": 15.0, "state_delivered_percent_min": 99.0,
         "driver_added_latency_ms_p99_max": 5.0}


def topics(camera_hz: float = CAMERA_HZ) -> list[_e2e.Topic]:
    out = [t for camera in _e2e.CAMERAS
           for t in _e2e.camera_topics(camera, camera_hz, SENSOR_QOS)]
    out.append(_e2e.Topic("/lidar/points", "sensor_msgs/msg/PointCloud2", LIDAR_HZ,
                          _e2e.qos.SENSOR_PROFILES[SENSOR_QOS]))
    return out + _e2e.state_topics(STATE_HZ)


def driver_params(camera_hz: float = CAMERA_HZ) -> dict:
    return {"camera_rate": camera_hz, "lidar_rate": LIDAR_HZ, "publish_raw_images": "true",
            "publish_compressed_images": "true", "publish_depth": "true",
            "robot_state_rate": STATE_HZ, "status_rate": STATE_HZ, "sensor_qos": SENSOR_QOS}


def replay_floor(subscriber: _e2e.Subscriber, wanted: list[_e2e.Topic]) -> dict:
    """CPU of a bare publisher of the driver's last messages at the same rates."""
    entries = [{"name": t.name, "type": t.type_name, "hz": t.hz,
                "qos": ("state" if t.profile is _e2e.qos.STATE else
                        "stream" if t.state else SENSOR_QOS),
                "data": subscriber.last[t.name].hex()}
               for t in wanted if t.name in subscriber.last]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(entries, f)
    replay = subprocess.Popen([sys.executable, str(_e2e.REPO / "benchmarks" / "_replay.py"),
                               f.name])
    try:
        time.sleep(WARMUP_S / 2)
        subscriber.reset()
        cpu, start, end = _e2e.measure({"bare_publisher": replay.pid,
                                        "subscriber": os.getpid()}, WINDOW_S / 2)
    finally:
        _e2e.stop(replay)
        os.unlink(f.name)
    delivered = _e2e.delivery(subscriber.samples, wanted, start, end)
    images = [t.name for t in wanted if t.name.endswith("/image")]
    ages = _e2e.ages_ms(subscriber.samples, images, start, end)  # publish -> receipt
    return {"cpu_percent_of_one_core": cpu, "topics_replayed": len(entries),
            "image_transport_age_ms_p50": round(float(np.percentile(ages, 50)), 1),
            "image_transport_age_ms_p99": round(float(np.percentile(ages, 99)), 1),
            "min_delivered_percent": min(v["delivered_percent"] for v in delivered.values()),
            "max_delivered_percent": max(v["delivered_percent"] for v in delivered.values()),
            "messages_received_per_s": round(sum(v["delivered_hz"] for v in delivered.values()),
                                             1)}


def driver_round(subscriber: _e2e.Subscriber, added: _e2e.StreamLatencies,
                 wanted: list[_e2e.Topic], sim, port: int, ca: str, profile: bool) -> dict:
    """One round: a new driver, warmed up, measured over WINDOW_S, stopped; then the floor."""
    added.latest.clear()
    driver = _e2e.start_driver(port, ca, driver_params())
    try:
        time.sleep(WARMUP_S)
        cpu, start, end = _e2e.measure({"driver": driver.pid, "sim": sim.pid,
                                        "subscriber": os.getpid()}, WINDOW_S,
                                       threads_of="driver")
        time.sleep(1.5)  # the diagnostics report that covers the window's end
        out = {"cpu": cpu, "per_topic": _e2e.delivery(subscriber.samples, wanted, start, end),
               "ages": _e2e.ages_ms(subscriber.samples,
                                    [t.name for t in wanted if t.name.endswith("/image")],
                                    start, end),
               "added": added.summary(),
               "profile": _e2e.profile(driver.pid, PROFILE_S) if profile else None}
    finally:
        _e2e.stop(driver)
    out["floor"] = replay_floor(subscriber, wanted)
    subscriber.reset()
    return out


def median(values) -> float:
    return round(float(np.median(values)), 2)


def main() -> dict:
    wanted = topics()
    subscriber = _e2e.Subscriber()
    subscriber.subscribe(wanted)
    added = _e2e.StreamLatencies(subscriber.node)
    with tempfile.TemporaryDirectory() as certs:
        sim, port, ca = _e2e.start_sim(certs)
        try:
            rounds = [driver_round(subscriber, added, wanted, sim, port, ca, r == ROUNDS - 1)
                      for r in range(ROUNDS)]
        finally:
            _e2e.stop(sim)
    subscriber.close()

    def floor_cpu(r: dict, name: str) -> float:
        return r["floor"]["cpu_percent_of_one_core"][name]

    ratios = [r["cpu"]["driver"] / floor_cpu(r, "subscriber") for r in rounds]
    middle = rounds[int(np.argsort(ratios)[len(ratios) // 2])]  # the median round's details
    cpu, floor, per_topic = middle["cpu"], middle["floor"], middle["per_topic"]
    ages = np.concatenate([r["ages"] for r in rounds])
    sensors = {k: v for k, v in per_topic.items()
               if not any(k == t.name and t.state for t in wanted)}
    state = {k: min(r["per_topic"][k]["delivered_percent"] for r in rounds)
             for k in per_topic if k not in sensors}
    worst_added = [r["added"]["worst_ms_p99"] for r in rounds]
    added_round = rounds[int(np.argsort(worst_added)[len(rounds) // 2])]["added"]
    results = {
        "window_s": WINDOW_S, "rounds": ROUNDS, "sensor_qos": SENSOR_QOS,
        "cameras": list(_e2e.CAMERAS),
        "camera_hz": CAMERA_HZ, "lidar_hz": LIDAR_HZ, "state_hz": STATE_HZ,
        "topics_subscribed": len(wanted),
        "cpu_percent_of_one_core": cpu,  # the median round's
        "messages_received_per_s": round(sum(v["delivered_hz"] for v in per_topic.values()), 1),
        "bare_publisher_floor": floor,  # the median round's
        # the floor: the same subscriber fed by the replay, which does not depend on the driver
        "driver_to_subscriber_cpu": median(ratios),
        "driver_to_subscriber_cpu_rounds": [round(x, 2) for x in ratios],
        "driver_to_driver_fed_subscriber_cpu": median(
            [r["cpu"]["driver"] / r["cpu"]["subscriber"] for r in rounds]),
        "driver_added_latency": added_round,  # the round of the median worst p99
        "driver_added_latency_worst_ms_p99_rounds": worst_added,
        "driver_to_bare_publisher_cpu": median(
            [r["cpu"]["driver"] / floor_cpu(r, "bare_publisher") for r in rounds]),
        "min_delivered_percent": min(v["delivered_percent"] for r in rounds
                                     for k, v in r["per_topic"].items() if k in sensors),
        "state_delivered_percent": state,
        "min_state_delivered_percent": min(state.values()),
        "image_age_ms_p50": round(float(np.percentile(ages, 50)), 1),
        "image_age_ms_p95": round(float(np.percentile(ages, 95)), 1),
        "image_age_ms_p99": round(float(np.percentile(ages, 99)), 1),
        "state_age_ms_p99": max(r["per_topic"]["/joint_states"]["age_ms_p99"] for r in rounds),
        "goals": GOALS,
        "driver_profile": rounds[-1]["profile"],
        "topics": per_topic,
    }
    name = "perception_e2e" if SENSOR_QOS == "reliable" else f"perception_e2e_{SENSOR_QOS}"
    _results.write(name, results)
    return results


if __name__ == "__main__":
    out = main()
    print(json.dumps({k: v for k, v in out.items() if k != "topics"}, indent=2))
