"""MoveIt's files for one robot: ``config/moveit/`` with the robot's prefix on every link and
joint name the SRDF, the controllers and the OMPL pipeline name (the URDF carries the same
prefix, from the driver's frame_prefix)."""

import re
from xml.etree import ElementTree

NAME_ATTRIBUTES = ("link", "link1", "link2", "base_link", "tip_link", "parent_link",
                   "child_link", "name")


def srdf(text: str, prefix: str = "") -> str:
    """The SRDF with every link and joint name prefixed (group, state and end-effector names
    stay: they are MoveIt's own)."""
    if not prefix:
        return text
    root = ElementTree.fromstring(text)
    for element in root.iter():
        for attribute in NAME_ATTRIBUTES:
            value = element.get(attribute)
            if value is None:
                continue
            if attribute != "name" or element.tag in ("joint", "passive_joint", "link"):
                element.set(attribute, prefix + value)
    return ElementTree.tostring(root, encoding="unicode")


def controllers(config: dict, prefix: str = "") -> dict:
    """moveit_controllers.yaml with the controllers' joints prefixed."""
    manager = config["moveit_simple_controller_manager"]
    for name in manager["controller_names"]:
        manager[name]["joints"] = [prefix + joint for joint in manager[name]["joints"]]
    return config


def ompl(config: dict, prefix: str = "") -> dict:
    """ompl_planning.yaml with the projection's joints prefixed."""
    arm = config.get("arm", {})
    match = re.fullmatch(r"joints\((.*)\)", arm.get("projection_evaluator", ""))
    if match:
        names = ",".join(prefix + name.strip() for name in match.group(1).split(","))
        arm["projection_evaluator"] = f"joints({names})"
    return config


def joint_limits(config: dict, prefix: str = "") -> dict:
    """joint_limits.yaml with its joints prefixed."""
    config["joint_limits"] = {prefix + name: value
                              for name, value in config["joint_limits"].items()}
    return config
