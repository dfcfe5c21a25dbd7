"""The operator's laptop across the robot's port forward, at several link capacities.

Network namespaces as in ``test/test_network_e2e.py``: an operator, a robot router that
forwards only 21000-22000 to its payload (DNAT), and the payload running the simulated Spot,
the discovery server and the driver (``network:=payload``, default ``image_bandwidth``). At
each cap of the robot -> operator link (tbf; no cap, 100, 30, 10 Mbit/s) the operator
subscribes to joint_states, /tf, odometry, the five body cameras' compressed images and one
raw image, and measures rates and gaps, Trigger and e-stop service round trips, cmd_vel step
latency (publish -> odometry shows the change) and frames held back for it; once more with
no camera subscribed (uncapped). The floor of each figure is the same probe run on the payload
itself in the same run (loopback and shared memory: no link). Discovery: a new operator
process until its first joint_states. Needs root.

Where a cmd_vel step's time goes: the driver and the simulated robot stamp each stage
(``SPOT_STAGE_STAMPS``: the driver's callback, the RobotCommand sent, received and accepted by
the robot, answered; the robot state read with the change, received, odometry published) and
``_stages.py`` joins the stamps with the probe's step starts and its receipt of odometry:
p50/p99 per stage, in every run.

    python benchmarks/operator_link.py      # writes benchmarks/results/operator_link.json
"""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "test"))

import _results  # noqa: E402
import _stages  # noqa: E402
import netns  # noqa: E402
import test_network_e2e as across  # noqa: E402

from spot_driver.network.operator import environment, payload_environment  # noqa: E402

CAPS = (None, 100, 30, 10)  # Mbit/s robot -> operator; None: the veth's own speed
SECONDS = 20
CALLS = 40
STEPS = 25  # cmd_vel walk/stop cycles: 50 step latencies per run
CAMERAS = across.CAMERAS
# (run name, cap in Mbit/s, cameras subscribed): every cap with the images, and the
# uncapped link without them
RUNS = [*(("uncapped" if cap is None else f"{cap}mbit", cap, True) for cap in CAPS),
        ("uncapped_no_images", None, False)]


def summary(out: dict, ns: str, stamps: Path) -> dict:
    rates = out["rates"]
    joint = rates[f"{ns}/joint_states"]
    compressed = [rates.get(f"{ns}/camera/{c}/image/compressed", {"hz": 0.0})["hz"]
                  for c in CAMERAS]
    raw = rates.get(f"{ns}/camera/frontleft/image", {"hz": 0.0})["hz"]
    return {
        "discovery_s": out["discovery_s"],
        "joint_states_hz": joint["hz"], "joint_states_max_gap_ms": joint["max_gap_ms"],
        "tf_hz": rates["/tf"]["hz"], "odometry_hz": rates[f"{ns}/odometry"]["hz"],
        "compressed_fps_each": compressed, "compressed_fps_total": float(sum(compressed)),
        "raw_fps": raw,
        "trigger_ms_p50": float(np.percentile(out["trigger"]["rtt_ms"], 50)),
        "trigger_ms_p99": float(np.percentile(out["trigger"]["rtt_ms"], 99)),
        "trigger_answered": out["trigger"]["answered"],
        "estop_ms_p99": float(np.percentile(out["estop"]["rtt_ms"], 99)),
        "estop_ms_max": float(np.max(out["estop"]["rtt_ms"])),
        "cmd_vel_ms_p50": float(np.percentile(out["cmd_vel"]["step_latency_ms"], 50)),
        "cmd_vel_ms_p99": float(np.percentile(out["cmd_vel"]["step_latency_ms"], 99)),
        "cmd_vel_steps_seen": len(out["cmd_vel"]["step_latency_ms"]),
        "cmd_vel_steps": out["cmd_vel"]["steps"],
        "stopped_when_commands_stopped": out["cmd_vel"]["stopped"],
        "dropped_for_slow_readers": out.get("dropped", {}),
        "cmd_vel_stages": _stages.summarize(_stages.step_stages(
            out["cmd_vel"]["step_starts"], _stages.read_stamps(stamps))),
    }


def main() -> dict:
    why = netns.available()
    if why:
        raise SystemExit(f"operator_link needs network namespaces: {why}")
    tmp = Path(f"/tmp/spot_operator_link_{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    stamps = tmp / "stamps"
    common = ("--namespace", "/spot1", "--checks", "rates,trigger,estop,cmd_vel,dropped",
              "--seconds", str(SECONDS), "--calls", str(CALLS), "--steps", str(STEPS))
    runs: dict = {}
    with netns.Topology(robots=1, tag=f"b{os.getpid()}") as topology:
        robot = topology.fleet[0]
        operator = {**os.environ, **environment([robot.robot_ip], "payload", 21811,
                                                tmp / "operator"), "ROS_DOMAIN_ID": "0"}
        local = {**os.environ, **payload_environment(robot.robot_ip, "payload", 21811, "spot1",
                                                     tmp / "local", domain=0)}
        launch = across.start_payload(robot, tmp, env={"SPOT_STAGE_STAMPS": str(stamps)})
        try:
            while "streaming camera" not in launch.output():
                time.sleep(0.2)
            setup = across.probe(topology, topology.operator_ns, operator, "--namespace",
                                 "/spot1", "--checks", "trigger,stand", "--calls", "1",
                                 timeout=120)
            assert setup["stand"]["success"], setup
            for name, cap, images in RUNS:
                topology.cap(robot, cap)
                print(f"== {name}", flush=True)
                args = (*common, "--images", "5" if images else "0",
                        "--raw-images", "1" if images else "0")
                out = across.probe(topology, topology.operator_ns, operator, *args, timeout=300)
                floor = across.probe(topology, robot.payload_ns, local, *args, timeout=300)
                runs[name] = {"cap_mbit": cap, "images": images,
                              "operator": summary(out, "/spot1", stamps),
                              "floor_on_payload": summary(floor, "/spot1", stamps)}
                print(json.dumps({k: v for k, v in runs[name]["operator"].items()
                                  if k != "cmd_vel_stages"}), flush=True)
            topology.cap(robot, None)
        finally:
            launch.stop()
    result = {
        "benchmark": "operator_link",
        "pinned": None,  # every process on every core (the renders in their own workers)
        "seconds_per_run": SECONDS, "calls": CALLS, "cmd_vel_steps": STEPS * 2,
        "image_bandwidth_mbit": 8,
        "goals": {"joint_states_hz_min": 49, "cmd_vel_ms_p99_max": 100,
                  "trigger_ms_p99": 50, "estop_ms_max": 100, "discovery_s_max": 3},
        "runs": runs,
    }
    _results.write("operator_link", result)
    return result


if __name__ == "__main__":
    print(json.dumps(main()["runs"], indent=2))
