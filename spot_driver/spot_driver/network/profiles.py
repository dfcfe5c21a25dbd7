"""Fast DDS XML profiles for each side of the robot's port forward (pure: text in, text out).

- ``payload``: a process on the payload computer. A client of the discovery server beside it
  (127.0.0.1), listening on fixed ports in the forwarded range and announcing them as loopback
  and with the robot's address (``*_external_unicast_locators``), so the operator's computer,
  which can only reach ``ROBOT_IP:21000-22000``, sends there (and nowhere else) and the
  robot's DNAT delivers. Shared memory stays on for processes on the payload itself.
- ``server``: the discovery server (``fast-discovery-server -x``), on the forwarded port.
- ``operator``: the laptop (RViz, Nav2, rosbag, the ``ros2`` CLI): a super client of each
  robot's discovery server, so it sees every robot's whole graph.
- ``payload_tcp``: for robots that do not route the payload's own traffic back: each launch
  process listens on a forwarded TCP port with the robot as WAN address, and the operator (a
  TCP client) dials them all; simple discovery, no server.
- ``local_commands``, ``image_writers``, ``default_writer``: endpoint profiles (command
  partition, image flow control and heartbeats, every writer's heartbeat).
"""

import ipaddress
from xml.sax.saxutils import escape

from spot_driver.network.ports import PORT_BASE, PortPlan

SHM_SEGMENT = 64 * 1024 * 1024  # images and clouds between local processes (config/fastdds_shm.xml)
# The address payload processes and the discovery server listen on and announce. Fast DDS
# still binds the port on every interface (the robot's DNAT delivers to the payload's own
# address), announces the robot's address as an external locator, and ignores another
# host's loopback locators: so the operator learns only ROBOT_IP, and sends nothing to the
# payload's own addresses, which it cannot reach (with the null address it did: ~40
# packets/s to its default gateway; test_network_e2e counts them).
LOOPBACK = "127.0.0.1"
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


def _tcp(address: str, physical: int, logical: int) -> str:
    inner = f"<address>{escape(address)}</address>" if address else ""
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


def _udp_transport() -> str:
    """UDPv4 with a 4 MB receive buffer (Linux caps it at ``net.core.rmem_max``): with the
    default 208 KB, a burst (discovery of the driver's ~400 endpoints, images) overflowed the
    operator's socket, and reliable topics stalled until Fast DDS's 3 s heartbeat repaired
    them. (Measured too: ``non_blocking_send`` drops datagrams whenever the socket is full.)"""
    return ("<transport_descriptor><transport_id>udp</transport_id><type>UDPv4</type>"
            f"<receiveBufferSize>{RECEIVE_BUFFER}</receiveBufferSize>"
            f"<sendBufferSize>{RECEIVE_BUFFER}</sendBufferSize>"
            "</transport_descriptor>")


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


LOCAL_PARTITION = "spot_local"
# Topics that command the robot (relative to the robot's namespace); services and actions are
# all covered by rmw's "service" and "client" fallback profiles.
COMMAND_TOPICS = ("cmd_vel", "body_pose")


def _partitioned(kind: str, name: str) -> str:
    return (f'<{kind} profile_name="{escape(name)}"><propertiesPolicy><properties><property>'
            f"<name>partitions</name><value>{LOCAL_PARTITION}</value></property></properties>"
            f"</propertiesPolicy></{kind}>")


def local_commands(namespace: str) -> str:
    """Endpoint profiles that keep command interfaces on the payload (``remote_commands:=
    false``): every service server and client (rmw's fallback profiles ``service`` and
    ``client``) and the command topics join partition ``spot_local``. A participant across
    the link without these profiles (the operator's) matches none of them: its calls find no
    server and its ``cmd_vel`` reaches no subscriber, while every telemetry topic still flows.
    rmw looks endpoint profiles up by the full ROS topic name."""
    ns = namespace.rstrip("/")
    ns = f"/{ns.lstrip('/')}" if ns else ""
    out = [_partitioned(k, n) for k in ("data_reader", "data_writer")
           for n in ("service", "client")]
    out += [_partitioned(k, f"{ns}/{topic}") for k in ("data_reader", "data_writer")
            for topic in COMMAND_TOPICS]
    return "".join(out)


CAMERAS = ("frontleft", "frontright", "left", "right", "back", "hand")
_PER_CAMERA = ("camera/{}/image", "camera/{}/image/compressed", "depth/{}/image",
               "depth_registered/{}/image", "depth/{}/points")
IMAGE_TOPICS = (*(t.format(c) for c in CAMERAS for t in _PER_CAMERA), "lidar/points")
RECEIVE_BUFFER = 4 * 1024 * 1024
HEARTBEAT_NS = 20_000_000  # image writers ask for acknowledgements every 20 ms (default 3 s)


STATE_HEARTBEAT_NS = 50_000_000  # every other writer: a lost datagram is repaired in 50 ms


def _heartbeat(ns: int) -> str:
    return (f"<times><heartbeatPeriod><sec>0</sec><nanosec>{ns}</nanosec></heartbeatPeriod>"
            f"</times>")


def default_writer() -> str:
    """Every writer's default: a heartbeat every 50 ms instead of Fast DDS's 3 s. A datagram
    lost on the way (Wi-Fi, a full socket) is repaired at the next heartbeat, and a reliable
    reader delivers nothing newer until then: measured across the forward, joint_states
    stalled for exactly 3 s now and then with the default, and with 100 ms a capped link's
    Trigger round trips reached 55 ms at p99 (8-16 ms on the payload itself)."""
    return (f'<data_writer profile_name="spot_default_writer" is_default_profile="true">'
            f"{_heartbeat(STATE_HEARTBEAT_NS)}</data_writer>")


FLOW_CONTROLLER = "spot_images"
FLOW_PERIOD_MS = 10


def flow_controller(mbit: float) -> str:
    """One controller for every image writer of the process: at most ``mbit`` Mbit/s in all,
    sent in 10 ms slices, round robin between the topics."""
    per_period = max(1500, int(mbit * 1e6 / 8 * FLOW_PERIOD_MS / 1000))
    return (f"<flow_controller_descriptor_list><flow_controller_descriptor>"
            f"<name>{FLOW_CONTROLLER}</name><scheduler>ROUND_ROBIN</scheduler>"
            f"<max_bytes_per_period>{per_period}</max_bytes_per_period>"
            f"<period_ms>{FLOW_PERIOD_MS}</period_ms></flow_controller_descriptor>"
            f"</flow_controller_descriptor_list>")


def image_writers(namespace: str, mbit: float = 0.0) -> str:
    """Writer profiles of the large topics: a short heartbeat period, so a reader's
    acknowledgement comes within a frame period and the driver's pacing (it holds a frame back
    while the previous one is unacknowledged) follows the link, not Fast DDS's 3 s default;
    with ``mbit``, published asynchronously through ``flow_controller``: a frame's fragments
    leave no faster than the link takes them instead of overflowing its queue in one burst
    (measured at 10 Mbit/s: five cameras fell to 0.5 frames/s in all without it)."""
    ns = f"/{namespace.strip('/')}" if namespace.strip("/") else ""
    mode = (f"<qos><publishMode><kind>ASYNCHRONOUS</kind><flow_controller_name>"
            f"{FLOW_CONTROLLER}</flow_controller_name></publishMode></qos>" if mbit else "")
    return "".join(f'<data_writer profile_name="{escape(ns)}/{topic}">{mode}'
                   f"{_heartbeat(HEARTBEAT_NS)}</data_writer>" for topic in IMAGE_TOPICS)


def payload(plan: PortPlan, index: int | None, command_namespace: str | None = None,
            namespace: str = "", image_mbit: float = 0.0) -> str:
    """The profile of the launch's ``index``-th process on the payload; with
    ``command_namespace``, command interfaces stay on the payload (``local_commands``).
    ``index`` None: another process on the payload (a user's node, the ``ros2`` CLI), with
    Fast DDS's well-known ports from ``portBase`` and nothing announced across the link."""
    extra = "" if command_namespace is None else local_commands(command_namespace)
    extra += default_writer() + image_writers(namespace, image_mbit)
    flows = flow_controller(image_mbit) if image_mbit else ""
    if plan.mode == "payload_tcp":
        return _payload_tcp(plan, index, flows, extra)
    if index is None:
        server = _server_entry(plan.robot_ip, _udp("127.0.0.1", plan.discovery_port))
        return _document(_shm() + _udp_transport(), _participant(
            "spot_payload_local", ["shm", "udp"], _discovery("CLIENT", server),
            f"<port><portBase>{PORT_BASE}</portBase></port>{flows}") + extra)
    meta, user = plan.fixed(index)
    server = _server_entry(plan.robot_ip, _udp("127.0.0.1", plan.discovery_port))
    builtin = (_discovery("CLIENT", server)
               + f"<metatrafficUnicastLocatorList>{_udp(LOOPBACK, meta)}"
               f"</metatrafficUnicastLocatorList>"
               + f"<metatraffic_external_unicast_locators>{_external(plan.robot_ip, meta)}"
               f"</metatraffic_external_unicast_locators>")
    rtps = (f"<defaultUnicastLocatorList>{_udp(LOOPBACK, user)}</defaultUnicastLocatorList>"
            f"<default_external_unicast_locators>{_external(plan.robot_ip, user)}"
            f"</default_external_unicast_locators>"
            f"<port><portBase>{PORT_BASE}</portBase></port>{flows}")
    return _document(_shm() + _udp_transport(), _participant(
        "spot_payload", ["shm", "udp"], builtin, rtps) + extra)


TCP_PROCESSES = 3  # the launch's driver, robot_state_publisher, RViz: each listens on a port


def _tcp_peers(address: str, plan: PortPlan) -> str:
    locators = "".join(_tcp(address, port, port) for port in
                       (plan.fixed(i)[0] for i in range(TCP_PROCESSES)))
    return f"<initialPeersList>{locators}</initialPeersList>"


def _payload_tcp(plan: PortPlan, index: int | None, flows: str, extra: str) -> str:
    """TCP across the forward (Fast DDS's WAN recipe; a discovery-server client over TCP needs
    a listening port the operator cannot offer): each launch process listens on its own
    forwarded port with the robot's address as WAN address, simple discovery with the
    launch's processes as initial peers; other payload processes are TCP clients of them."""
    peers = _tcp_peers("127.0.0.1", plan)
    if index is None:
        return _document(_shm() + _tcp_transport(None), _participant(
            "spot_payload_local_tcp", ["shm", "tcp"], _discovery("SIMPLE", "") + peers, flows)
            + extra)
    port, _ = plan.fixed(index)
    locators = (f"<metatrafficUnicastLocatorList>{_tcp('', port, port)}"
                f"</metatrafficUnicastLocatorList>")
    return _document(_shm() + _tcp_transport(port, plan.robot_ip), _participant(
        "spot_payload_tcp", ["shm", "tcp"], _discovery("SIMPLE", "") + peers + locators,
        f"<defaultUnicastLocatorList>{_tcp('', port, port + 1000)}</defaultUnicastLocatorList>"
        f"{flows}") + extra)


def server(plan: PortPlan) -> str:
    """The discovery server's profile (run as ``fast-discovery-server -x <file>``)."""
    prefix = server_prefix(plan.robot_ip)
    locators = (f"<metatrafficUnicastLocatorList>{_udp(LOOPBACK, plan.discovery_port)}"
                f"</metatrafficUnicastLocatorList><metatraffic_external_unicast_locators>"
                f"{_external(plan.robot_ip, plan.discovery_port)}"
                f"</metatraffic_external_unicast_locators>")
    transports = _udp_transport()
    used = ["udp"]
    participant = _participant("spot_discovery_server", used,
                               _discovery("SERVER", "") + locators, "", prefix=prefix)
    return _document(transports, participant)


def operator(robot_ips: list[str], mode: str = "payload",
             discovery_port: int = 0) -> str:
    """The operator's profile: a super client of every listed robot's discovery server."""
    from spot_driver.network.ports import DISCOVERY_PORT

    port = discovery_port or DISCOVERY_PORT
    if mode == "payload_tcp":  # a TCP client of every robot's launch processes
        plans = [PortPlan(mode, ip, 0) for ip in robot_ips]
        peers = "".join(_tcp_peers(p.robot_ip, p)[len("<initialPeersList>"):-len(
            "</initialPeersList>")] for p in plans)
        return _document(_tcp_transport(None), _participant(
            "spot_operator_tcp", ["tcp"], _discovery("SIMPLE", "")
            + f"<initialPeersList>{peers}</initialPeersList>", "") + default_writer())
    servers = "".join(_server_entry(ip, _udp(ip, port)) for ip in robot_ips)
    return _document(_udp_transport(), _participant(
        "spot_operator", ["udp"], _discovery("SUPER_CLIENT", servers), "") + default_writer())


def _participant(name: str, transports: list[str], builtin: str, rtps: str,
                 prefix: str = "") -> str:
    ids = "".join(f"<transport_id>{t}</transport_id>" for t in transports)
    guid = f"<prefix>{prefix}</prefix>" if prefix else ""
    return (f'<participant profile_name="{name}" is_default_profile="true"><rtps>{guid}'
            f"<builtin>{builtin}</builtin>{rtps}<userTransports>{ids}</userTransports>"
            f"<useBuiltinTransports>false</useBuiltinTransports></rtps></participant>")


EXAMPLE_ROBOT_IP = "192.168.80.3"  # Spot's own address on its Wi-Fi access point


def examples() -> dict[str, str]:
    """``config/dds/``'s example profiles (robot at 192.168.80.3, no robot_name, images at
    8 Mbit/s), for setups that do not use the launch files, which render their own."""
    from spot_driver.network.ports import plan

    udp, tcp = plan("payload", EXAMPLE_ROBOT_IP, 0), plan("payload_tcp", EXAMPLE_ROBOT_IP, 0)
    note = ("<!-- Rendered by spot_driver/network/profiles.py (scripts/render_dds_examples.py) "
            f"for a robot at {EXAMPLE_ROBOT_IP}; the launch files render their own. -->\n")

    def stamped(text: str) -> str:
        head, _, rest = text.partition("\n")
        return f"{head}\n{note}{rest}"

    return {"payload_driver.xml": stamped(payload(udp, 0, image_mbit=8.0)),
            "discovery_server.xml": stamped(server(udp)),
            "operator.xml": stamped(operator([EXAMPLE_ROBOT_IP])),
            "payload_driver_tcp.xml": stamped(payload(tcp, 0, image_mbit=8.0)),
            "operator_tcp.xml": stamped(operator([EXAMPLE_ROBOT_IP], "payload_tcp"))}
