"""Node ``spot_network``: the network mode and the discovery server's state on /diagnostics."""

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from rclpy.node import Node

from spot_driver.core.capability import DriverContext
from spot_driver.network import ports
from spot_driver.network.health import discovery_server_listening
from spot_driver.nodes.parameters import declare


class NetworkNode(Node):
    """Reports how the driver's DDS traffic reaches the operator (set by the launch file)."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_network", namespace=context.namespace)
        self.mode = declare(self, "network_mode", "local")
        self.discovery_port = declare(self, "discovery_port", ports.DISCOVERY_PORT)
        if self.mode not in ports.MODES:
            raise ValueError(f"parameter network_mode must be one of {ports.MODES}, "
                             f"not {self.mode!r}")
        context.health.append(self.status)

    def status(self, prefix: str, hardware_id: str) -> DiagnosticStatus:
        values = [KeyValue(key="mode", value=self.mode)]
        level, message = DiagnosticStatus.OK, f"network {self.mode}"
        if self.mode == "payload_tcp":
            values.append(KeyValue(key="tcp ports", value=f"from {ports.TCP_PORT}"))
            message += f": the operator dials tcp {ports.TCP_PORT} and up"
        elif self.mode != "local":
            port = self.discovery_port
            up = discovery_server_listening(self.discovery_port)
            values.append(KeyValue(key="discovery server",
                                   value=f"{'listening' if up else 'absent'} on port {port}"))
            if not up:
                level = DiagnosticStatus.ERROR
                message = (f"no discovery server on port {port}: the operator's computer "
                           f"cannot discover the driver")
            else:
                message += f", discovery server on port {port}"
        return DiagnosticStatus(level=level, name=f"{prefix}network", message=message,
                                hardware_id=hardware_id, values=values)
