"""The DDS network the driver runs on: local (shared memory, the default) or across Spot's
payload port forward (``ports.py``: the port plan, ``profiles.py``: Fast DDS XML,
``deployment.py``: what the launch starts), and its health on ``/diagnostics`` (node
``spot_network``)."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="network",
    summary="the DDS network mode and discovery server on /diagnostics (spot_network)",
    nodes=("spot_driver.network.node:NetworkNode",),
    optional=False,
    parameters="network")
