"""CPU of the driver process while it publishes robot state at 50 Hz from the simulated Spot.

The simulator runs in this process; the driver is a separate process whose CPU time is read
with psutil over a fixed window. Writes benchmarks/results/driver_cpu.json.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _results
import psutil

from spot_sim import SimConfig, SimulatedSpot

REPO = Path(__file__).resolve().parent.parent
WARMUP_S, WINDOW_S = 4.0, 10.0
# Extra driver arguments, e.g. BENCH_EXTRA_ARGS='-p cameras:=[""] -p lidar_source:=""'.
EXTRA_ARGS = os.environ.get("BENCH_EXTRA_ARGS", "").split()


def main() -> dict:
    config = SimConfig(username="bench", password="bench-password")
    with tempfile.TemporaryDirectory() as certs, SimulatedSpot(config, certs_dir=certs) as sim:
        env = dict(os.environ, BOSDYN_CLIENT_USERNAME="bench",
                   BOSDYN_CLIENT_PASSWORD="bench-password")
        driver = subprocess.Popen(
            [sys.executable, "-m", "spot_driver", "--ros-args", "--params-file",
             str(REPO / "spot_driver" / "config" / "spot_driver.yaml"), "-p", "hostname:=127.0.0.1",
             "-p", f"port:={sim.port}", "-p", f"certificate:={sim.ca_cert}",
             "-p", "robot_state_rate:=50.0", *EXTRA_ARGS, "--log-level", "warn"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(WARMUP_S)
            process = psutil.Process(driver.pid)
            before = process.cpu_times()
            start = time.monotonic()
            time.sleep(WINDOW_S)
            after = process.cpu_times()
            elapsed = time.monotonic() - start
        finally:
            driver.send_signal(2)
            driver.wait(timeout=10)
    cpu = (after.user - before.user + after.system - before.system) / elapsed
    results = {"robot_state_rate_hz": 50.0, "window_s": WINDOW_S,
               "driver_cpu_percent_of_one_core": round(100 * cpu, 1)}
    _results.write("driver_cpu", results)
    return results


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
