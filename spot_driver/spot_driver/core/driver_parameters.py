"""The driver process's own parameters: how it reaches the robot (node spot_driver).

Capabilities declare theirs in their ``Capability``; ``config/spot_driver.yaml`` is rendered
from both (``config_file.py``).
"""

from spot_driver.core.capability import Parameter, Section

CONNECTION = Section(
    "connection (node spot_driver)",
    (
        Parameter("hostname", "192.168.80.3", "robot address (Spot's Wi-Fi access point default)"),
        Parameter("port", 0, "0: the robot's standard port (443)"),
        Parameter("certificate", "", 'CA certificate of the robot; "": Boston Dynamics\' root CA'),
        Parameter("credentials_file", "", "optional file with username=/password= lines"),
        Parameter("client_name", "spot_ros2_driver",
                  "name the driver's SDK client gives the robot (lease owner, logs)"),
        Parameter("estop_endpoint", False, "register the driver's own software e-stop endpoint"),
        Parameter("estop_timeout", 9.0,
                  "s; motors are cut if the driver stops checking in this long"),
        Parameter("auto_claim", False, "claim the body lease at startup"),
        Parameter("auto_power_on", False, "power on at startup (needs auto_claim)"),
        Parameter("auto_stand", False, "stand at startup (needs auto_power_on)"),
        Parameter("heartbeat_period", 0.5, "s between connection heartbeats (one ListLeases call)"),
        Parameter("link_timeout", 1.5, "s without an answer before the link counts as lost"),
        Parameter("reconnect_max_backoff", 1.0,
                  "s; reconnect attempts back off from 0.25 s up to this"),
    ))
