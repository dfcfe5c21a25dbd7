"""What the removed wire templates were worth: driver CPU end to end, with and without them.

Issue 28 kept the state templates (``state/wire.py``, ``kinematic_wire.py``,
``status_cdr.StatusTemplate``) only if removing them cost
more than 5 % of the driver's CPU at 50 Hz state with the cameras on. This runs the driver of
this tree and the driver of the last commit that had them (``BASELINE``, its ``spot_driver``
package taken with ``git archive``) against one simulated Spot, alternately for ``ROUNDS``
rounds, with a bare subscriber taking joint_states, /tf, odometry, the statuses and every
image of the five body cameras (so the driver streams them), and compares the driver's CPU.

Writes benchmarks/results/state_templates.json.

    python benchmarks/state_templates.py [BASELINE]
"""

import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import _e2e
import _results

BASELINE = "158fe3c"  # the last commit with the state templates (same shape otherwise)
ROUNDS, WARMUP_S, WINDOW_S = 3, 8.0, 15.0
CAMERA_HZ, STATE_HZ = 15.0, 50.0
GOAL_MAX_COST_PERCENT = 5.0


def baseline_tree(revision: str, into: Path) -> Path:
    """``spot_driver/`` of ``revision`` extracted under ``into``."""
    archive = subprocess.run(["git", "archive", revision, "spot_driver"], cwd=_e2e.REPO,
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    assert (into / "spot_driver" / "state" / "wire.py").is_file(), \
        f"{revision} has no state templates"
    return into


def measure(port: int, ca: str, source: Path | None, subscriber) -> float:
    """Driver CPU % of one core over the window, after the warm-up."""
    driver = _e2e.start_driver(port, ca, {"robot_state_rate": STATE_HZ,
                                          "camera_rate": CAMERA_HZ}, source=source)
    try:
        time.sleep(WARMUP_S)
        subscriber.reset()
        cpu, start, end = _e2e.measure({"driver": driver.pid}, WINDOW_S)
        joint_states = subscriber.samples.get("/joint_states", [])
        rate = sum(1 for t, _, _ in joint_states if start <= t < end) / (end - start)
        assert rate > 0.9 * STATE_HZ, f"joint_states at {rate:.1f} Hz: the driver is not up"
        return cpu["driver"]
    finally:
        _e2e.stop(driver)


def main(revision: str = BASELINE) -> dict:
    with tempfile.TemporaryDirectory() as work:
        old = baseline_tree(revision, Path(work) / "baseline")
        sim, port, ca = _e2e.start_sim(str(Path(work) / "certs"))
        subscriber = _e2e.Subscriber()
        topics = _e2e.state_topics(STATE_HZ) + [
            t for camera in _e2e.CAMERAS
            for t in _e2e.camera_topics(camera, CAMERA_HZ, "reliable")]
        subscriber.subscribe(topics)
        rounds: dict[str, list[float]] = {"without_templates": [], "with_templates": []}
        try:
            for _ in range(ROUNDS):  # alternate, so machine-speed drift hits both alike
                rounds["without_templates"].append(measure(port, ca, None, subscriber))
                rounds["with_templates"].append(measure(port, ca, old, subscriber))
        finally:
            subscriber.close()
            _e2e.stop(sim)
    cost = statistics.median(100 * (a - b) / b for a, b in zip(
        rounds["without_templates"], rounds["with_templates"], strict=True))
    results = {
        "baseline_commit": revision,
        "robot_state_rate_hz": STATE_HZ, "cameras": len(_e2e.CAMERAS),
        "camera_rate_hz": CAMERA_HZ, "window_s": WINDOW_S, "rounds": ROUNDS,
        "driver_cpu_percent_without_templates": rounds["without_templates"],
        "driver_cpu_percent_with_templates": rounds["with_templates"],
        "removal_cost_percent_of_driver_cpu": round(cost, 1),
        "goal_max_removal_cost_percent": GOAL_MAX_COST_PERCENT,
        "templates_kept": cost > GOAL_MAX_COST_PERCENT,
    }
    _results.write("state_templates", results)
    return results


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:2]), indent=2))
