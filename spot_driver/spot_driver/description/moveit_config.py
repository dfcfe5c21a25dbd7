"""MoveIt's files for one robot: ``config/moveit/`` with the robot's prefix on every link and
joint name the SRDF, the controllers and the OMPL pipeline name (the URDF carries the same
prefix, from the driver's frame_prefix)."""

import re
from xml.etree import ElementTree

from spot_driver.conversions import frames
from spot_driver.description import frame_names as naming

# attributes naming links, joints or frames (parent_frame: the virtual joint's parent, which
# MoveIt's current-state monitor looks up in TF)
NAME_ATTRIBUTES = ("link", "link1", "link2", "base_link", "tip_link", "parent_link",
                   "child_link", "parent_frame", "name")


def srdf(text: str, prefix: str = "", tf_root: str = "odom", frame_names: str = "spot") -> str:
    """The SRDF with every link, joint and frame name prefixed (group, state and end-effector
    names stay: they are MoveIt's own), its links named as ``frame_names`` says, and the
    virtual joint hung from the driver's world frame (``tf_root``, or odom under a body root),
    the frame MoveIt looks up ``body`` in."""
    naming.check(frame_names)
    root = ElementTree.fromstring(text)
    for joint in root.iter("virtual_joint"):
        joint.set("parent_frame", frames.odometry_frame(tf_root))
    for element in root.iter():
        for attribute in NAME_ATTRIBUTES:
            value = element.get(attribute)
            if value is None:
                continue
            if attribute != "name" or element.tag in ("joint", "passive_joint", "link"):
                is_link = attribute not in ("name", "parent_frame") or element.tag == "link"
                element.set(attribute, prefix + (naming.published(value, frame_names)
                                                 if is_link else value))
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


def octomap(prefix: str = "", tf_root: str = "odom") -> dict:
    """move_group's occupancy map settings: in the robot's world frame, and no 3D sensor,
    declared as such (an undeclared list is an error in move_group's log). A sensor would be
    moveit_ros_perception's PointCloudOctomapUpdater on the driver's depth points; that
    package is not in this project's MoveIt layer."""
    return {"octomap_frame": prefix + frames.odometry_frame(tf_root),
            "octomap_resolution": 0.05,
            "sensors": ["no_3d_sensor"],
            "no_3d_sensor": {"sensor_plugin": ""}}  # an empty plugin: skipped, by design
