"""Which ports the driver's DDS traffic uses across Spot's payload port forward.

A real Spot forwards ``ROBOT_IP:P`` (UDP and TCP) to its payload for P in 21000-22000, and
nothing else; multicast does not cross. Every port a payload process listens on must sit in
that range, and every locator it announces must name the robot's address on the same port.
This module only computes and checks numbers; ``profiles.py`` writes them into Fast DDS XML.
"""

import ipaddress
from dataclasses import dataclass

FORWARDED = (21000, 22000)  # inclusive: the robot's payload port forward
MODES = ("local", "payload", "payload_tcp")
DISCOVERY_PORT = 21811  # the discovery server beside the driver (UDP)
TCP_PORT = 21500  # TCP mode: the launch's processes listen from here (no discovery server)
PORT_BASE = 21400  # Fast DDS's portBase for payload participants without fixed ports
UNIQUE_FLOW_OFFSET = 400  # rmw's unique-network-flow readers listen from portBase - 400
DOMAIN_GAIN, PARTICIPANT_GAIN, UNICAST_OFFSET = 250, 2, 10  # Fast DDS's well-known port rule
FIRST_FIXED = 21820  # fixed ports of the launch's processes: metatraffic, user data (+1)
MAX_PARTICIPANTS = 16  # per domain, for processes started outside the launch (portBase rule)


class NetworkConfigError(ValueError):
    """A network setting that cannot work across the robot; the message says which."""


@dataclass(frozen=True)
class PortPlan:
    """The ports of one payload in one network mode.

    ``fixed(i)`` are the (metatraffic, user data) ports of the launch's i-th process: those
    are announced with the robot's address. Other processes on the payload (a ``ros2`` CLI,
    a user's node) get Fast DDS's well-known ports from ``PORT_BASE``.
    """

    mode: str
    robot_ip: str
    domain_id: int
    discovery_port: int = DISCOVERY_PORT
    tcp_port: int = TCP_PORT

    def fixed(self, index: int) -> tuple[int, int]:
        if self.mode == "payload_tcp":
            port = self.tcp_port + index
            return port, port
        first = FIRST_FIXED + 2 * index
        return first, first + 1

    def well_known(self) -> tuple[int, int]:
        """The lowest and highest well-known port a payload participant can take."""
        low = PORT_BASE + DOMAIN_GAIN * self.domain_id
        high = low + UNICAST_OFFSET + 1 + PARTICIPANT_GAIN * (MAX_PARTICIPANTS - 1)
        return min(low, PORT_BASE - UNIQUE_FLOW_OFFSET), high

    def table(self, processes: int) -> list[tuple[str, str, str]]:
        """(what, port or range, protocol) of every port the payload listens on."""
        if self.mode == "payload_tcp":  # simple discovery: the operator dials each process
            return [(f"process {i} (discovery and data)", str(self.fixed(i)[0]), "tcp")
                    for i in range(processes)]
        rows = [("discovery server", str(self.discovery_port), "udp")]
        for i in range(processes):
            meta, user = self.fixed(i)
            rows.append((f"process {i} metatraffic", str(meta), "udp"))
            rows.append((f"process {i} user data", str(user), "udp"))
        low, high = self.well_known()
        rows.append(("other payload participants (well-known ports)", f"{low}-{high}", "udp"))
        return rows


def plan(mode: str, robot_ip: str, domain_id: int, discovery_port: int = DISCOVERY_PORT,
         processes: int = 4) -> PortPlan:
    """A checked port plan; ``NetworkConfigError`` says what cannot cross the robot."""
    if mode not in MODES:
        raise NetworkConfigError(f"network must be one of {', '.join(MODES)}, not {mode!r}")
    result = PortPlan(mode, robot_ip, domain_id, discovery_port)
    if mode == "local":
        return result
    if not robot_ip:
        raise NetworkConfigError(f"network:={mode} needs robot_ip:=<the robot's address as "
                                 f"the operator's computer reaches it>")
    try:
        address = ipaddress.ip_address(robot_ip)
    except ValueError:
        raise NetworkConfigError(f"robot_ip {robot_ip!r} is not an IPv4 address") from None
    if address.version != 4 or address.is_unspecified or address.is_multicast:
        raise NetworkConfigError(f"robot_ip {robot_ip!r} must be the robot's unicast IPv4 "
                                 f"address")
    ports = [*result.fixed(0), *result.fixed(processes - 1)]
    if mode == "payload":
        ports += [discovery_port, *result.well_known()]
    outside = sorted({p for p in ports if not FORWARDED[0] <= p <= FORWARDED[1]})
    if outside:
        if discovery_port not in range(FORWARDED[0], FORWARDED[1] + 1):
            raise NetworkConfigError(
                f"discovery port {discovery_port} is outside the ports the robot forwards to "
                f"its payload ({FORWARDED[0]}-{FORWARDED[1]}): choose discovery_port:= in "
                f"that range")
        raise NetworkConfigError(
            f"ROS_DOMAIN_ID={domain_id} puts Fast DDS ports at {outside}, outside the ports "
            f"the robot forwards to its payload ({FORWARDED[0]}-{FORWARDED[1]}); only domains "
            f"0, 1 and 2 fit: launch with ROS_DOMAIN_ID=0 (1 or 2), e.g. "
            f"`export ROS_DOMAIN_ID=0` first")
    return result
