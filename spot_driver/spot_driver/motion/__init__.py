"""Motion that must never wait: cmd_vel with its watchdog, stop and the e-stop services,
spun in an executor of their own."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "cmd_vel (node spot_motion)",
    (
        Parameter("cmd_duration", 0.25,
                  "s each cmd_vel is valid; the robot stops by itself after it"),
        Parameter("cmd_vel_stamped", False,
                  "subscribe to geometry_msgs/TwistStamped instead of Twist"),
        Parameter("cmd_vel_stale_timeout", 0.5, "s; older TwistStamped commands are dropped"),
    ))

CAPABILITY = Capability(
    name="motion",
    summary="cmd_vel, stop and e-stop (spot_motion)",
    nodes=("spot_driver.motion.node:MotionNode",),
    executor="motion",
    optional=False,
    parameters=PARAMETERS,
    readme="Lease, power and body commands (nodes `spot_commands`, `spot_motion`)",
    field_test="test/test_core_e2e.py::test_claim_power_stand_walk_and_stop_when_commands_stop")
