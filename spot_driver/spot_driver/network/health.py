"""Is the discovery server beside the driver there? (read from /proc, no ROS, no sockets: a
check that bound the port itself could take it from a server starting at that instant)"""

from pathlib import Path

SOCKET_TABLES = ("/proc/net/udp", "/proc/net/udp6")


def discovery_server_listening(udp_port: int, tables: tuple[str, ...] = SOCKET_TABLES) -> bool:
    """Whether some process on this computer holds UDP port ``udp_port``."""
    wanted = f"{udp_port:04X}"
    for table in tables:
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 1 and fields[1].rsplit(":", 1)[-1] == wanted:
                return True
    return False
