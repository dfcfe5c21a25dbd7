"""Is the discovery server beside the driver there? (plain socket checks, no ROS)"""

import errno
import socket


def discovery_server_listening(mode: str, udp_port: int, tcp_port: int) -> bool:
    """Whether a process listens on the discovery server's port on this computer."""
    if mode == "payload_tcp":
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.2)
            return sock.connect_ex(("127.0.0.1", tcp_port)) == 0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind(("0.0.0.0", udp_port))  # taken: the server holds it
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False
