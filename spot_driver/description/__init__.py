"""The robot model: the URDF (``robot_model.py``) and ``robot_description``."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="description",
    summary="robot_description of the connected robot (spot_description)",
    nodes=("spot_driver.description.node:DescriptionNode",),
    optional=False,
    parameters="robot model")
