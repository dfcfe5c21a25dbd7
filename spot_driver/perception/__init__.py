"""Cameras and lidar: what to request (``streams.py``, ``cameras.py``), image conversions,
and the ``spot_perception`` node."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="perception",
    summary="start the cameras and lidar (node spot_perception)",
    nodes=("spot_driver.perception.node:PerceptionNode",),
    parameters="cameras and lidar")
