"""Missions: mission files and Autowalk ``.walk`` directories, play settings and the
mission-service session (``session.py``), mission state as messages, and the ``spot_mission``
node. A walk's map is uploaded with autonomy's ``GraphNavigator``."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "missions (node spot_mission)",
    (
        Parameter("mission_pause_window", 3.0,
                  "s: the robot pauses a mission this long after the driver stops renewing it "
                  "(driver crash, lost link)"),
        Parameter("mission_chunk_bytes", 2097152,
                  "missions larger than this load through the chunked RPC"),
        Parameter("mission_status_rate", 1.0, "Hz of status/mission"),
    ))

CAPABILITY = Capability(
    name="missions",
    summary="start missions (spot_mission)",
    nodes=("spot_driver.missions.node:MissionNode",),
    sdk_clients=("bosdyn.mission.client:MissionClient",),
    parameters=PARAMETERS,
    uses=("autonomy",),
    readme="Missions (node `spot_mission`)",
    field_test="test/test_docking_missions_e2e.py::test_mission_with_a_prompt_answered_over_ros")
