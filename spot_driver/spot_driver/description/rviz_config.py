"""RViz's configuration for one robot: ``rviz/spot.rviz`` (relative topics) with the frames of
the launch's ``robot_name`` (frame prefix) and ``tf_root``. RViz runs in the robot's namespace,
so the relative topics resolve to that robot's."""

import yaml

from spot_driver.conversions import frames


def render(template: str, prefix: str = "", root: str = "odom", compressed: bool = False) -> str:
    """The configuration text with its fixed frame ``<prefix><root>`` and every frame it names
    prefixed; with ``compressed`` (an operator across a link), image displays take the
    robot's JPEG (``.../image/compressed``: rviz picks image_transport's transport from the
    topic's last name)."""
    config = yaml.safe_load(template)
    manager = config["Visualization Manager"]
    for display in manager["Displays"]:
        topic = display.get("Topic")
        if compressed and display.get("Class", "").endswith("/Image") and isinstance(topic, dict) \
                and topic["Value"].endswith("/image"):
            topic["Value"] += "/compressed"
    manager["Global Options"]["Fixed Frame"] = prefix + frames.odometry_frame(root)
    view = manager["Views"]["Current"]
    view["Target Frame"] = prefix + view["Target Frame"]
    return yaml.safe_dump(config, sort_keys=False)


def topics(template: str) -> set[str]:
    """The topics the displays and tools subscribe or publish to, as written."""
    manager = yaml.safe_load(template)["Visualization Manager"]
    found = set()
    for item in [*manager["Displays"], *manager.get("Tools", [])]:
        for key in ("Topic", "Description Topic"):
            if isinstance(item.get(key), dict):
                found.add(item[key]["Value"])
    return found
