"""The ``spot_driver`` node: connection parameters and the one robot session."""

from rclpy.node import Node

from spot_driver.connection import ConnectionConfig
from spot_driver.supervisor import SupervisorConfig


class DriverNode(Node):
    """Declares how to reach the robot. Credentials are never parameters."""

    def __init__(self, namespace: str = "") -> None:
        super().__init__("spot_driver", namespace=namespace)
        self.connection_config = ConnectionConfig(
            hostname=self.declare_parameter("hostname", "").value,
            port=self.declare_parameter("port", 0).value,
            certificate=self.declare_parameter("certificate", "").value,
            client_name=self.declare_parameter("client_name", "spot_ros2_driver").value,
            estop_endpoint=self.declare_parameter("estop_endpoint", False).value,
            estop_timeout=self.declare_parameter("estop_timeout", 9.0).value,
        )
        self.supervisor_config = SupervisorConfig(
            period=self.declare_parameter("heartbeat_period", 0.5).value,
            link_timeout=self.declare_parameter("link_timeout", 1.5).value,
            max_backoff=self.declare_parameter("reconnect_max_backoff", 1.0).value,
        )
        self.credentials_file = self.declare_parameter("credentials_file", "").value
        self.auto_claim = self.declare_parameter("auto_claim", False).value
        self.auto_power_on = self.declare_parameter("auto_power_on", False).value
        self.auto_stand = self.declare_parameter("auto_stand", False).value
        if not self.connection_config.hostname:
            raise ValueError("parameter 'hostname' is required (the robot's address)")
