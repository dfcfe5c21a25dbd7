"""The driver's memory under full perception load over ten minutes, and its growth per hour.

The load is perception_e2e.py's: the five body cameras (image, compressed, camera_info, depth
and its camera_info) at 15 Hz, the lidar at 10 Hz and the whole robot state at 50 Hz, every
topic taken raw by a bare subscriber in this process. The driver's resident set (RSS) and
unique set (USS, the memory only it holds) are sampled every few seconds. Growth per hour is
the slope of a least-squares line through the samples after the first two minutes (start-up,
caches and allocator arenas fill first); the JSON keeps every sample. Bar: the driver grows
by at most 10 MB per hour (a day-long mission ends within a quarter gigabyte of its start).
Writes benchmarks/results/driver_memory.json.

    python benchmarks/driver_memory.py      # BENCH_MEMORY_S=120 for a short look
"""

import json
import os
import tempfile
import time

import _e2e
import _results
import numpy as np
import psutil
from perception_e2e import driver_params, topics

DURATION_S = float(os.environ.get("BENCH_MEMORY_S", 600.0))
SAMPLE_S = 5.0
SETTLE_S = min(120.0, DURATION_S / 5)  # samples before this are start-up, not growth
GOALS = {"growth_mb_per_hour_max": 10.0, "delivered_percent_min": 99.5}


def sample(process: psutil.Process) -> tuple[float, float]:
    """(RSS, USS) in MB."""
    info = process.memory_full_info()
    return info.rss / 1e6, info.uss / 1e6


def main() -> dict:
    wanted = topics()
    subscriber = _e2e.Subscriber()
    subscriber.subscribe(wanted)
    samples = []  # (seconds since start, RSS MB, USS MB)
    with tempfile.TemporaryDirectory() as certs:
        sim, port, ca = _e2e.start_sim(certs)
        driver = _e2e.start_driver(port, ca, driver_params())
        try:
            process = psutil.Process(driver.pid)
            start = time.monotonic()
            while (elapsed := time.monotonic() - start) < DURATION_S:
                samples.append((round(elapsed, 1), *(round(v, 2) for v in sample(process))))
                time.sleep(SAMPLE_S - (time.monotonic() - start) % SAMPLE_S)
            window_start = time.time() - (DURATION_S - SETTLE_S)
            delivered = _e2e.delivery(subscriber.samples, wanted, window_start, time.time())
        finally:
            _e2e.stop(driver, sim)
    subscriber.close()
    settled = np.array([s for s in samples if s[0] >= SETTLE_S])
    rss_slope, uss_slope = (float(np.polyfit(settled[:, 0], settled[:, i], 1)[0]) * 3600
                            for i in (1, 2))
    results = {
        "duration_s": DURATION_S, "sample_s": SAMPLE_S, "settle_s": SETTLE_S, "goals": GOALS,
        "rss_mb_after_settle": float(settled[0, 1]), "rss_mb_at_end": samples[-1][1],
        "uss_mb_at_end": samples[-1][2], "rss_mb_peak": max(s[1] for s in samples),
        "rss_growth_mb_per_hour": round(rss_slope, 1),
        "uss_growth_mb_per_hour": round(uss_slope, 1),
        "min_delivered_percent": min(v["delivered_percent"] for v in delivered.values()),
        "samples_s_rss_uss": samples,
    }
    _results.write("driver_memory", results)
    return results


if __name__ == "__main__":
    out = main()
    print(json.dumps({k: v for k, v in out.items() if k != "samples_s_rss_uss"}, indent=2))
