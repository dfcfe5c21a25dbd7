"""The ``spot_driver`` node: connection parameters and the one robot session."""

from rclpy.node import Node

from spot_driver import registry
from spot_driver.core.connection import ConnectionConfig
from spot_driver.core.supervisor import SupervisorConfig
from spot_driver.nodes.parameters import declare


class DriverNode(Node):
    """Declares how to reach the robot. Credentials are never parameters."""

    def __init__(self, namespace: str = "") -> None:
        super().__init__("spot_driver", namespace=namespace)
        self.connection_config = ConnectionConfig(
            hostname=declare(self, "hostname", ""),
            port=declare(self, "port", 0),
            certificate=declare(self, "certificate", ""),
            client_name=declare(self, "client_name", "spot_ros2_driver"),
            estop_endpoint=declare(self, "estop_endpoint", False),
            estop_timeout=declare(self, "estop_timeout", 9.0),
        )
        self.supervisor_config = SupervisorConfig(
            period=declare(self, "heartbeat_period", 0.5),
            link_timeout=declare(self, "link_timeout", 1.5),
            max_backoff=declare(self, "reconnect_max_backoff", 1.0),
        )
        self.credentials_file = declare(self, "credentials_file", "")
        self.auto_claim = declare(self, "auto_claim", False)
        self.auto_power_on = declare(self, "auto_power_on", False)
        self.auto_stand = declare(self, "auto_stand", False)
        self.capabilities = {
            c.name: declare(self, f"enable_{c.name}", c.default_enabled,
                            f"{c.summary} (launch argument {c.launch_argument}:=true|false)")
            for c in registry.CAPABILITIES if c.optional}
        if not self.connection_config.hostname:
            raise ValueError("parameter 'hostname' is required (the robot's address)")
