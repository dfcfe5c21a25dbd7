"""Motion that must never wait: cmd_vel with its watchdog, stop and the e-stop services,
spun in an executor of their own."""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="motion",
    summary="cmd_vel, stop and e-stop (spot_motion)",
    nodes=("spot_driver.motion.node:MotionNode",),
    executor="motion",
    optional=False,
    parameters="commands")
