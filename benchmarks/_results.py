"""Where every benchmark writes its JSON (``benchmarks/results/NAME.json``), each file stamped
with the machine and the time it was measured on, so a figure read later says where it came
from (absolute figures differ 2x between machines; ratios to a same-run floor travel).

A module, not a benchmark: run_benchmarks.sh skips files starting with ``_``.
"""

import json
import os
import platform
import time
from pathlib import Path

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (the platform's processor string elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    """Cores, CPU model, architecture, Python, and the load when the benchmark ended."""
    return {"cores": os.cpu_count(), "cpu": cpu_model(), "arch": platform.machine(),
            "python": platform.python_version(),
            "load_average_1min": round(os.getloadavg()[0], 2)}


def write(name: str, results: dict) -> Path:
    """Write ``results`` with ``machine`` and ``measured_at`` (UTC) to ``NAME.json``."""
    stamped = {**results, "machine": machine(),
               "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(stamped, indent=2) + "\n")
    return path
