"""Joint-level Spot (opt-in, ``low_level:=true``).

The joint-control API's 333 Hz state stream and the joint command stream run in a process of
their own (``process.py``, executable ``spot_low_level``, started by the launch), so the
driver's camera work never holds the GIL they need: ``streams.py`` reads and writes the two
gRPC streams, ``conversions.py`` turns each state message into ROS messages, ``commands.py``
checks joint commands. In the driver process, ``activation.py`` serves
``low_level/activate``, which needs the driver's lease.
"""

from spot_driver.capability import Capability

CAPABILITY = Capability(
    name="low_level",
    summary="333 Hz joint states and IMU, joint commands (spot_low_level process; opt-in)",
    nodes=("spot_driver.low_level.activation:JointModeNode",),
    default_enabled=False,
    parameters="low_level")
