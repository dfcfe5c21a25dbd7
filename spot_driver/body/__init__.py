"""Body commands: lease, power and posture services, mobility settings, the body
``trajectory`` action (``commander.py``, ``mobility.py``, ``trajectory.py``)."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="body",
    summary="lease, power, posture, mobility settings, trajectory action (spot_commands)",
    nodes=("spot_driver.body.command_node:CommandNode",),
    optional=False,
    parameters="commands")
