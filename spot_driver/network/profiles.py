"""Fast DDS XML profiles for each side of the robot's port forward (pure: text in, text out).

- ``payload``: a process on the payload computer. A client of the discovery server beside it
  (127.0.0.1), listening on fixed ports in the forwarded range and announcing them with the
  robot's address too (``*_external_unicast_locators``), so the operator's computer, which can
  only reach ``ROBOT_IP:21000-22000``, sends there and the robot's DNAT delivers. Shared memory
  stays on for processes on the payload itself.
- ``server``: the discovery server (``fast-discovery-server -x``), on the forwarded port.
- ``operator``: the laptop (RViz, Nav2, rosbag, the ``ros2`` CLI): a super client of each
  robot's discovery server, so it sees every robot's whole graph.
- ``*_tcp``: the same over TCP through one forwarded port per process, for robots that do not
  route the payload's own traffic back to the operator: the operator connects out.
"""

import ipaddress
from xml.sax.saxutils import escape

from spot_driver.network.ports import PORT_BASE, PortPlan

SHM_SEGMENT = 64 * 1024 * 1024  # images and clouds between local processes (config/fastdds_shm.xml)
NAMESPACE = "http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles"


def server_prefix(robot_ip: str) -> str:
    """A discovery server's GUID prefix, unique per robot: an operator can be a client of
    several robots' servers at once (each needs its own prefix)."""
    address = ipaddress.IPv4Address(robot_ip).packed
    return ".".join(f"{b:02x}" for b in (0x44, 0x53, 0x00, 0x5F, *address, 0x53, 0x50, 0x4F,
                                          0x54))


def _udp(address: str, port: int) -> str:
    inner = f"<address>{escape(address)}</address>" if address else ""
    return f"<locator><udpv4>{inner}<port>{port}</port></udpv4></locator>"


def _tcp(address: str, physical: int, logical: int, wan: str = "") -> str:
    inner = f"<address>{escape(address)}</address>" if address else ""
    inner += f"<wan_address>{escape(wan)}</wan_address>" if wan else ""
    return (f"<locator><tcpv4>{inner}<physical_port>{physical}</physical_port>"
            f"<port>{logical}</port></tcpv4></locator>")


def _external(robot_ip: str, port: int) -> str:
    return (f'<udpv4 externality="1" cost="0" mask="24"><address>{escape(robot_ip)}</address>'
            f"<port>{port}</port></udpv4>")


def _document(transports: str, participant: str) -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<dds xmlns="{NAMESPACE}">\n<profiles>\n'
            f"<transport_descriptors>{transports}</transport_descriptors>\n{participant}\n"
            f"</profiles>\n</dds>\n")


def _shm() -> str:
    return (f"<transport_descriptor><transport_id>shm</transport_id><type>SHM</type>"
            f"<segment_size>{SHM_SEGMENT}</segment_size>"
            f"<maxMessageSize>{SHM_SEGMENT}</maxMessageSize>"
            f"<port_queue_capacity>4096</port_queue_capacity></transport_descriptor>")


def _udp_transport(non_blocking: bool) -> str:
    """UDPv4; ``non_blocking``: a full socket drops the datagram (reliable writers resend)
    instead of blocking the publishing thread and every writer of the process behind it."""
    flag = "<non_blocking_send>true</non_blocking_send>" if non_blocking else ""
    return (f"<transport_descriptor><transport_id>udp</transport_id><type>UDPv4</type>{flag}"
            f"</transport_descriptor>")


def _tcp_transport(listening: int | None, wan: str = "") -> str:
    ports = f"<listening_ports><port>{listening}</port></listening_ports>" if listening else ""
    wan_addr = f"<wan_addr>{escape(wan)}</wan_addr>" if wan else ""
    return (f"<transport_descriptor><transport_id>tcp</transport_id><type>TCPv4</type>"
            f"{ports}{wan_addr}</transport_descriptor>")


def _discovery(protocol: str, servers: str) -> str:
    # Announce quickly and then often: a peer across the link that missed the first
    # announcements otherwise waits for the periodic one (see config/fastdds_shm.xml).
    listed = f"<discoveryServersList>{servers}</discoveryServersList>" if servers else ""
    return (f"<discovery_config><discoveryProtocol>{protocol}</discoveryProtocol>{listed}"
            f"<leaseDuration><sec>10</sec></leaseDuration>"
            f"<leaseAnnouncement><sec>1</sec></leaseAnnouncement>"
            f"<initialAnnouncements><count>10</count><period><sec>0</sec>"
            f"<nanosec>200000000</nanosec></period></initialAnnouncements>"
            f"</discovery_config>")


def _server_entry(robot_ip: str, locator: str) -> str:
    return (f'<RemoteServer prefix="{server_prefix(robot_ip)}"><metatrafficUnicastLocatorList>'
            f"{locator}</metatrafficUnicastLocatorList></RemoteServer>")


def payload(plan: PortPlan, index: int) -> str:
    """The profile of the launch's ``index``-th process on the payload."""
    meta, user = plan.fixed(index)
    if plan.mode == "payload_tcp":
        server = _server_entry(plan.robot_ip, _tcp("127.0.0.1", plan.tcp_port,
                                                   plan.discovery_port))
        locators = (f"<metatrafficUnicastLocatorList>{_tcp('', meta, meta + 1000, plan.robot_ip)}"
                    f"</metatrafficUnicastLocatorList>")
        participant = _participant(
            "spot_payload_tcp", ["shm", "tcp"], _discovery("CLIENT", server) + locators,
            f"<defaultUnicastLocatorList>{_tcp('', meta, meta + 2000, plan.robot_ip)}"
            f"</defaultUnicastLocatorList>")
        return _document(_shm() + _tcp_transport(meta, plan.robot_ip), participant)
    server = _server_entry(plan.robot_ip, _udp("127.0.0.1", plan.discovery_port))
    builtin = (_discovery("CLIENT", server)
               + f"<metatrafficUnicastLocatorList>{_udp('', meta)}</metatrafficUnicastLocatorList>"
               + f"<metatraffic_external_unicast_locators>{_external(plan.robot_ip, meta)}"
               f"</metatraffic_external_unicast_locators>")
    rtps = (f"<defaultUnicastLocatorList>{_udp('', user)}</defaultUnicastLocatorList>"
            f"<default_external_unicast_locators>{_external(plan.robot_ip, user)}"
            f"</default_external_unicast_locators>"
            f"<port><portBase>{PORT_BASE}</portBase></port>")
    return _document(_shm() + _udp_transport(True), _participant(
        "spot_payload", ["shm", "udp"], builtin, rtps))


def server(plan: PortPlan) -> str:
    """The discovery server's profile (run as ``fast-discovery-server -x <file>``)."""
    prefix = server_prefix(plan.robot_ip)
    if plan.mode == "payload_tcp":
        locators = (f"<metatrafficUnicastLocatorList>"
                    f"{_tcp('', plan.tcp_port, plan.discovery_port, plan.robot_ip)}"
                    f"</metatrafficUnicastLocatorList>")
        transports = _tcp_transport(plan.tcp_port, plan.robot_ip)
        used = ["tcp"]
    else:
        locators = (f"<metatrafficUnicastLocatorList>{_udp('', plan.discovery_port)}"
                    f"</metatrafficUnicastLocatorList><metatraffic_external_unicast_locators>"
                    f"{_external(plan.robot_ip, plan.discovery_port)}"
                    f"</metatraffic_external_unicast_locators>")
        transports = _udp_transport(True)
        used = ["udp"]
    participant = _participant("spot_discovery_server", used,
                               _discovery("SERVER", "") + locators, "", prefix=prefix)
    return _document(transports, participant)


def operator(robot_ips: list[str], mode: str = "payload",
             discovery_port: int = 0) -> str:
    """The operator's profile: a super client of every listed robot's discovery server."""
    from spot_driver.network.ports import DISCOVERY_PORT, TCP_PORT

    port = discovery_port or DISCOVERY_PORT
    if mode == "payload_tcp":
        servers = "".join(_server_entry(ip, _tcp(ip, TCP_PORT, port)) for ip in robot_ips)
        return _document(_tcp_transport(None), _participant(
            "spot_operator_tcp", ["tcp"], _discovery("SUPER_CLIENT", servers), ""))
    servers = "".join(_server_entry(ip, _udp(ip, port)) for ip in robot_ips)
    return _document(_udp_transport(False), _participant(
        "spot_operator", ["udp"], _discovery("SUPER_CLIENT", servers), ""))


def _participant(name: str, transports: list[str], builtin: str, rtps: str,
                 prefix: str = "") -> str:
    ids = "".join(f"<transport_id>{t}</transport_id>" for t in transports)
    guid = f"<prefix>{prefix}</prefix>" if prefix else ""
    return (f'<participant profile_name="{name}" is_default_profile="true"><rtps>{guid}'
            f"<builtin>{builtin}</builtin>{rtps}<userTransports>{ids}</userTransports>"
            f"<useBuiltinTransports>false</useBuiltinTransports></rtps></participant>")
