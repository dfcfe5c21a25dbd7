"""Body commands: lease, power and posture services, mobility settings, the body
``trajectory`` action (``commander.py``, ``mobility.py``, ``trajectory.py``)."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "commands (node spot_commands)",
    (
        Parameter("max_linear_velocity_x", 1.0, "m/s, cmd_vel is clamped to these (robot max 1.6)"),
        Parameter("max_linear_velocity_y", 0.5, "m/s (robot max 0.5)"),
        Parameter("max_angular_velocity_z", 1.0, "rad/s (robot max 1.5)"),
    ))

CAPABILITY = Capability(
    name="body",
    summary="lease, power, posture, mobility settings, trajectory action (spot_commands)",
    nodes=("spot_driver.body.command_node:CommandNode",),
    optional=False,
    parameters=PARAMETERS,
    readme="Lease, power and body commands (nodes `spot_commands`, `spot_motion`)",
    field_test="test/test_core_e2e.py::test_claim_power_stand_walk_and_stop_when_commands_stop")
