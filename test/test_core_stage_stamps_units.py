"""Stage stamps (``SPOT_STAGE_STAMPS``) and how the teleop benchmark joins them with a probe's
step starts (``benchmarks/_stages.py``): one clock across processes, each
stage matched to the step whose speed it carries or shows."""

import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import _stages  # noqa: E402

from spot_common import stage_stamps  # noqa: E402

STAMPER = """
import sys, time
from spot_common.stage_stamps import stamp  # the driver's and the robot's stages
print("ready", flush=True)
start = float(sys.stdin.readline())
while time.monotonic() < start + 0.010: pass
stamp("driver_callback", 0.4); stamp("command_sent", 0.4)
stamp("sim_command_received", 0.4); stamp("sim_command_accepted", 0.4)
stamp("command_answered", 0.4)
while time.monotonic() < start + 0.030: pass
stamp("sim_state_read", 0.01)  # not yet moving: not the step's change
stamp("sim_state_read", 0.05)
stamp("state_received", 0.05); stamp("odometry_published", 0.05)
"""


def stamp_in_a_process(env_folder: Path) -> float:
    """Run STAMPER in a new process; the monotonic time (this process's clock) its steps
    count from, given once it has imported everything."""
    env = {"PYTHONPATH": str(REPO / "spot_common")}  # the recorder's package folder
    env["SPOT_STAGE_STAMPS"] = str(env_folder)
    child = subprocess.Popen([sys.executable, "-c", STAMPER], env=env, cwd=REPO, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout.readline().strip() == "ready"
    start = time.monotonic()
    child.communicate(f"{start}\n", timeout=30)
    assert child.returncode == 0
    return start


def test_without_the_variable_nothing_is_recorded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert stage_stamps._FOLDER is None  # the test runs without SPOT_STAGE_STAMPS
    stage_stamps.stamp("driver_callback", 0.4)
    assert not stage_stamps._FILES and not list(tmp_path.iterdir())


def test_stamps_of_another_process_line_up_with_this_ones_steps(tmp_path):
    start = stamp_in_a_process(tmp_path / "stamps")
    rows = _stages.step_stages([(start, 0.4, 45.0), (start + 5.0, 0.0, None)],
                               _stages.read_stamps(tmp_path / "stamps"))
    first = rows[0]
    assert 10 <= first["driver_callback"] <= first["command_answered"] < 30, first
    assert 30 <= first["sim_state_read"] <= first["odometry_published"] < 45, first
    assert first["operator_received"] == 45.0
    assert all(value is None for value in rows[1].values())  # nothing after the stop step
    summary = _stages.summarize(rows)
    assert summary["odometry_published"]["seen"] == 1
    assert summary["operator_received"]["added_ms_p50"] > 0

