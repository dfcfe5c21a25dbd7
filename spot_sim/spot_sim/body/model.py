"""Spot's geometry, read from ``urdf/spot_kinematics.yaml``: the same file the URDF
(``urdf/spot.urdf.xacro``) and the driver's joint limits come from."""

import os
from pathlib import Path

import numpy as np
import yaml
from bosdyn.client.math_helpers import Quat, SE3Pose
from transforms3d.euler import euler2mat

FILE_NAME = "spot_kinematics.yaml"


def geometry_file() -> Path:
    """spot_driver's ``urdf/`` file beside this package in the source tree, or the installed
    package share's."""
    here = Path(__file__).resolve().parents[3] / "spot_driver" / "urdf" / FILE_NAME
    if here.is_file():
        return here
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        installed = Path(prefix) / "share" / "spot_driver" / "urdf" / FILE_NAME
        if installed.is_file():
            return installed
    raise FileNotFoundError(f"{FILE_NAME} not found beside spot_sim or in AMENT_PREFIX_PATH")


GEOMETRY = yaml.safe_load(geometry_file().read_text())


def pose(entry: dict) -> SE3Pose:
    """An SE3Pose from a ``{xyz, rpy}`` entry (URDF convention: fixed-axis roll, pitch, yaw)."""
    rotation = euler2mat(*entry["rpy"], axes="sxyz")
    return SE3Pose(*entry["xyz"], Quat.from_matrix(np.asarray(rotation)))
