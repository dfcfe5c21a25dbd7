"""Missions: mission files and Autowalk ``.walk`` directories, play settings and the
mission-service session (``session.py``), mission state as messages, and the ``spot_mission``
node. A walk's map is uploaded with autonomy's ``GraphNavigator``."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="missions",
    summary="start missions (spot_mission)",
    nodes=("spot_driver.missions.node:MissionNode",),
    sdk_clients=("bosdyn.mission.client:MissionClient",),
    parameters="missions",
    uses=("autonomy",))
