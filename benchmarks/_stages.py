"""Where a cmd_vel step's time goes: the operator's step starts joined with the stage stamps
the driver and the simulated robot wrote (``SPOT_STAGE_STAMPS``, ``stage_stamps.py``).

A step starts at the operator's first publish of a new speed (0.4 m/s or 0). A command stage
is the first stamp after that start carrying the step's speed; a state stage is the first
stamp after the start whose body speed shows the change (> 0.02 m/s on a walk step, < 0.38 on a
stop step: the operator probe's own test on odometry). The last stage is the operator's
receipt of that odometry.
"""

from pathlib import Path

import numpy as np

# In the order a step passes them; (stage, kind): "command" carries the commanded speed,
# "state" the robot's measured body speed.
STAGES = (
    ("driver_callback", "command"),
    ("command_sent", "command"),
    ("sim_command_received", "command"),
    ("sim_command_accepted", "command"),
    ("command_answered", "command"),
    ("sim_state_read", "state"),
    ("state_received", "state"),
    ("odometry_published", "state"),
)
OPERATOR_RECEIVED = "operator_received"


def read_stamps(folder: Path) -> dict[str, np.ndarray]:
    """Every stamp in ``folder``'s files: stage -> array of (seconds, value), time-sorted."""
    rows: dict[str, list[tuple[float, float]]] = {}
    for path in sorted(folder.glob("*.stamps")):
        for line in path.read_text(encoding="ascii").splitlines():
            parts = line.split()
            if len(parts) == 3:
                rows.setdefault(parts[0], []).append((int(parts[1]) / 1e9, float(parts[2])))
    return {stage: np.array(sorted(values)) for stage, values in rows.items()}


def _first(stamps: np.ndarray | None, start: float, end: float, match) -> float | None:
    if stamps is None or not len(stamps):
        return None
    after = stamps[(stamps[:, 0] >= start) & (stamps[:, 0] < end)]
    hits = after[match(after[:, 1])]
    return float(hits[0, 0]) if len(hits) else None


def step_stages(starts: list, stamps: dict[str, np.ndarray], step_s: float = 1.0
                ) -> list[dict[str, float | None]]:
    """Per step, each stage's time (ms) after the step's start (None: not seen)."""
    out = []
    for start, speed, seen_ms in starts:
        end = start + step_s
        row: dict[str, float | None] = {}
        for stage, kind in STAGES:
            if kind == "command":
                def match(v, speed=speed):
                    return np.abs(v - speed) < 1e-3
            elif speed > 0:
                def match(v):
                    return v > 0.02
            else:
                def match(v):
                    return v < 0.38
            at = _first(stamps.get(stage), start, end, match)
            row[stage] = None if at is None else (at - start) * 1e3
        row[OPERATOR_RECEIVED] = seen_ms
        out.append(row)
    return out


def summarize(rows: list[dict[str, float | None]]) -> dict[str, dict[str, float | None]]:
    """p50/p99/max of each stage's time since the step's start, and of its increment over the
    stage before it (steps where both were seen)."""
    names = [stage for stage, _ in STAGES] + [OPERATOR_RECEIVED]
    out = {}
    for i, name in enumerate(names):
        since = [r[name] for r in rows if r.get(name) is not None]
        prev = names[i - 1] if i else None
        added = [r[name] - r[prev] for r in rows
                 if prev and r.get(name) is not None and r.get(prev) is not None] if prev else since
        out[name] = {
            "seen": len(since),
            "since_step_ms_p50": _pct(since, 50), "since_step_ms_p99": _pct(since, 99),
            "added_ms_p50": _pct(added, 50), "added_ms_p99": _pct(added, 99),
            "added_ms_max": float(np.max(added)) if added else None,
        }
    return out


def _pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None
