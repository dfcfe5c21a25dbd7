"""Write requirements.lock: every wheel-installed distribution of the venv, pinned.

The ROS wheels also register the ROS packages inside them as egg-info distributions
(``action_msgs``, ``rclpy``...); those are not installable from an index and are left out.
Run with the venv's interpreter: ``.venv/bin/python scripts/lock_requirements.py``.
"""

import importlib.metadata
from pathlib import Path

HEADER = """\
# Pinned Python environment of spot_ros2_driver: ROS 2 Jazzy wheels, Spot SDK 5.2.0, tools.
# Regenerate after changing the venv: .venv/bin/python scripts/lock_requirements.py
"""


def main() -> None:
    pins = set()
    for dist in importlib.metadata.distributions():
        location = str(getattr(dist, "_path", ""))
        name = dist.metadata["Name"]
        if location.endswith(".egg-info") or name in ("pip",):
            continue
        pins.add(f"{name}=={dist.version}")
    lock = Path(__file__).resolve().parent.parent / "requirements.lock"
    lock.write_text(HEADER + "".join(f"{p}\n" for p in sorted(pins, key=str.lower)))


if __name__ == "__main__":
    main()
