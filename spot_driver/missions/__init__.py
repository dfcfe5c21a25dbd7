"""Missions: mission files, play settings and the mission-service session
(``session.py``), mission state as messages, and the ``spot_mission`` node."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="missions",
    summary="start missions (spot_mission)",
    nodes=("spot_driver.missions.node:MissionNode",),
    sdk_clients=("bosdyn.mission.client:MissionClient",),
    parameters="missions")
