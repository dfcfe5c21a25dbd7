"""Joint-level Spot (opt-in, ``low_level:=true``).

The joint-control API's 333 Hz state stream and the joint command stream run in a process of
their own (``process.py``, executable ``spot_low_level``, started by the launch), so the
driver's camera work never holds the GIL they need: ``streams.py`` reads and writes the two
gRPC streams, ``conversions.py`` turns each state message into ROS messages, ``commands.py``
checks joint commands. In the driver process, ``activation.py`` serves
``low_level/activate``, which needs the driver's lease.
"""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "low_level: joint-level control (process spot_low_level; opt-in: low_level:=true)",
    (
        Parameter("low_level_watchdog", 0.1,
                  "s: the joint command stream ends when low_level/joint_command is silent this"
                  " long (the robot then goes back to standing)"),
        Parameter("low_level_command_horizon", 0.05,
                  "s: each joint command's end_time, from when it is sent"),
        Parameter("low_level_extrapolation", 0.005,
                  "s the robot extrapolates a command along its velocity"),
    ))

CAPABILITY = Capability(
    name="low_level",
    summary="333 Hz joint states and IMU, joint commands (spot_low_level process; opt-in)",
    nodes=("spot_driver.low_level.activation:JointModeNode",),
    default_enabled=False,
    parameters=PARAMETERS,
    readme="Joint-level control (process `spot_low_level`; opt-in: `low_level:=true`)",
    field_test=("test/test_low_level_e2e.py::"
                "test_every_stream_message_is_published_at_333_hz_with_robot_stamps"))
