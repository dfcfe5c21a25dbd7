"""Choreography: sequence and animation files, their checks against the robot's move
specifications, and the robot's choreography service (upload, execute, status)."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "choreography (node spot_choreography)",
    (
        Parameter("choreography_status_rate", 2.0, "Hz of status/choreography"),
    ))

CAPABILITY = Capability(
    name="choreography", summary="start choreography (spot_choreography)",
    nodes=("spot_driver.choreography.node:ChoreographyNode",), executor="autonomy",
    sdk_clients=("bosdyn.choreography.client.choreography:ChoreographyClient",),
    parameters=PARAMETERS,
    readme="Choreography (node `spot_choreography`)",
    field_test=("test/test_choreography_e2e.py::"
                "test_dance_to_the_end_with_feedback_while_the_body_moves"))
