"""The DDS network the driver runs on: local (shared memory, the default) or across Spot's
payload port forward (``ports.py``: the port plan, ``profiles.py``: Fast DDS XML,
``deployment.py``: what the launch starts), and its health on ``/diagnostics`` (node
``spot_network``)."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "network (node spot_network; the launch file sets these from network:=...)",
    (
        Parameter("network_mode", "local",
                  "DDS network: local, payload or payload_tcp (doc/across_the_robot.md)"),
        Parameter("discovery_port", 21811,
                  "payload modes: the discovery server's UDP port beside the driver"),
    ))

CAPABILITY = Capability(
    name="network",
    summary="the DDS network mode and discovery server on /diagnostics (spot_network)",
    nodes=("spot_driver.network.node:NetworkNode",),
    optional=False,
    parameters=PARAMETERS,
    readme="Across the robot: payload computer and operator's laptop (node `spot_network`)",
    health=("network",),
    field_test=("none: it configures DDS between ROS hosts; the robot's link, which the field "
                "profile degrades, is not on its path"))
