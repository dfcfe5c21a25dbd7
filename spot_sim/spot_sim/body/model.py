"""Spot's geometry, read from the ``spot_description`` package's ``urdf/spot_kinematics.yaml``:
the same file the URDF (``urdf/spot.urdf.xacro``) and the driver's joint limits come from."""

from pathlib import Path

import numpy as np
import yaml
from ament_index_python.packages import get_package_share_directory
from bosdyn.client.math_helpers import Quat, SE3Pose
from transforms3d.euler import euler2mat

FILE_NAME = "spot_kinematics.yaml"


def geometry_file() -> Path:
    """``urdf/spot_kinematics.yaml`` of the spot_description package (the ament index)."""
    return Path(get_package_share_directory("spot_description")) / "urdf" / FILE_NAME


GEOMETRY = yaml.safe_load(geometry_file().read_text())


def pose(entry: dict) -> SE3Pose:
    """An SE3Pose from a ``{xyz, rpy}`` entry (URDF convention: fixed-axis roll, pitch, yaw)."""
    rotation = euler2mat(*entry["rpy"], axes="sxyz")
    return SE3Pose(*entry["xyz"], Quat.from_matrix(np.asarray(rotation)))
