"""Is the discovery server beside the driver there? (a plain socket check, no ROS)"""

import errno
import socket


def discovery_server_listening(udp_port: int) -> bool:
    """Whether a process holds the discovery server's UDP port on this computer."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind(("0.0.0.0", udp_port))  # taken: the server holds it
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False
