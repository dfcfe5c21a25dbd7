"""Spot's robot model, from the ``spot_description`` package: the URDF (``urdf/spot.urdf.xacro``)
expanded for the connected robot, and the joint limits from its source
``urdf/spot_kinematics.yaml`` (the simulated robot reads the same file, so model, simulator and
driver agree)."""

from functools import cache
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import xacro
import yaml
from ament_index_python.packages import get_package_share_directory

from spot_driver.description import frame_names as naming

PACKAGE = "spot_description"
XACRO = "spot.urdf.xacro"
KINEMATICS = "spot_kinematics.yaml"


def urdf_dir() -> Path:
    """``urdf/`` of the spot_description package, found through the ament index."""
    return Path(get_package_share_directory(PACKAGE)) / "urdf"


@cache
def geometry() -> dict:
    return yaml.safe_load((urdf_dir() / KINEMATICS).read_text())


def arm_limits() -> np.ndarray:
    """(6, 2) lower/upper limits (rad) of arm0.sh0 .. arm0.wr1."""
    return np.array(geometry()["arm"]["limits"], dtype=float)


def gripper_open() -> float:
    """arm0.f1x fully open (rad); 0 is closed."""
    return float(geometry()["arm"]["gripper_limits"][0])


def robot_description(has_arm: bool, prefix: str = "", frame_names: str = "spot") -> str:
    """The URDF of a Spot with or without arm, links and joints prefixed with ``prefix``, its
    links named as ``frame_names`` says (``description/frame_names.py``)."""
    mappings = {"arm": str(has_arm).lower(), "prefix": prefix,
                "frame_names": naming.check(frame_names),
                "kinematics": str(urdf_dir() / KINEMATICS)}
    document = xacro.process_file(str(urdf_dir() / XACRO), mappings=mappings)
    return document.toprettyxml(indent="  ")


@cache
def link_names(has_arm: bool = True, frame_names: str = "spot") -> frozenset[str]:
    """The model's links (unprefixed, as published): the frames robot_state_publisher
    publishes from it."""
    root = ElementTree.fromstring(robot_description(has_arm, frame_names=frame_names))
    return frozenset(link.get("name") for link in root.iter("link"))
