"""Docking: dock/undock commands with their checks (``commander.py``), docks and fiducials
as messages (``conversions.py``), and the ``spot_docking`` node."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="docking",
    summary="start docking and world objects (spot_docking)",
    nodes=("spot_driver.docking.node:DockingNode",),
    parameters="docking and world objects")
