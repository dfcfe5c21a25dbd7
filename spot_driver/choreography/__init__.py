"""Choreography: sequence and animation files, their checks against the robot's move
specifications, and the robot's choreography service (upload, execute, status)."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="choreography", summary="start choreography (spot_choreography)",
    nodes=("spot_driver.choreography.node:ChoreographyNode",), executor="autonomy",
    sdk_clients=("bosdyn.choreography.client.choreography:ChoreographyClient",),
    parameters="choreography")
