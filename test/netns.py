"""Several hosts on one machine: an operator's laptop, Spot routers and payload computers, each
a network namespace this module makes and removes (root only).

    operator ──veth── robot k ──veth── payload k        (k = 1..robots)
    10.231.(80+k).2    .3 | 10.231.(50+k).3     .5

Robot k forwards ``ROBOT_IP:21000-22000`` (udp and tcp) to its payload (DNAT) and drops every
other packet that arrives from the operator's side, as a real Spot does; it routes the
payload's own traffic out (masqueraded). Multicast does not cross. A tbf qdisc can cap the
robot -> operator direction. Every address is private to these veths: no namespace has a
route to the machine's real interfaces.
"""

import os
import shutil
import subprocess
from contextlib import suppress
from dataclasses import dataclass, field

FORWARD = "21000:22000"


def available() -> str:
    """'' when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "iptables", "tc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    probe = f"spotprobe{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode:
        return f"ip netns add failed: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    ipt = subprocess.run(["iptables", "-t", "nat", "-L"], capture_output=True, text=True)
    if ipt.returncode:
        return f"iptables nat table unavailable: {ipt.stderr.strip()}"
    return ""


def _run(*args: str) -> None:
    result = subprocess.run(list(args), capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"{' '.join(args)}: {result.stderr.strip()}")


@dataclass
class Robot:
    index: int
    ns: str  # the robot's router namespace
    payload_ns: str
    robot_ip: str  # as the operator reaches it
    payload_ip: str
    operator_ip: str
    uplink: str  # the robot's interface towards the operator (where tbf shapes)


@dataclass
class Topology:
    """Operator + ``robots`` (robot router, payload) namespaces; use as a context manager."""

    robots: int = 1
    tag: str = field(default_factory=lambda: str(os.getpid()))
    operator_ns: str = ""
    fleet: list[Robot] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.operator_ns = f"spot-op-{self.tag}"

    def __enter__(self) -> "Topology":
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def namespaces(self) -> list[str]:
        return [self.operator_ns] + [n for r in self.fleet for n in (r.ns, r.payload_ns)]

    def _build(self) -> None:
        op = self.operator_ns
        self.fleet = [Robot(k, f"spot-rb{k}-{self.tag}", f"spot-pl{k}-{self.tag}",
                            f"10.231.{80 + k}.3", f"10.231.{50 + k}.5", f"10.231.{80 + k}.2",
                            f"up{k}-{self.tag}"[:15])
                      for k in range(1, self.robots + 1)]
        for ns in self.namespaces():
            _run("ip", "netns", "add", ns)
            self.ns_run(ns, "ip", "link", "set", "lo", "up")
        for r in self.fleet:
            lan = f"op{r.index}-{self.tag}"[:15]
            pay, pay_r = f"pl{r.index}-{self.tag}"[:15], f"pr{r.index}-{self.tag}"[:15]
            _run("ip", "link", "add", lan, "netns", op, "type", "veth", "peer", "name", r.uplink,
                 "netns", r.ns)
            _run("ip", "link", "add", pay, "netns", r.payload_ns, "type", "veth", "peer", "name",
                 pay_r, "netns", r.ns)
            self.ns_run(op, "ip", "addr", "add", f"{r.operator_ip}/24", "dev", lan)
            self.ns_run(op, "ip", "link", "set", lan, "up")
            self.ns_run(r.ns, "ip", "addr", "add", f"{r.robot_ip}/24", "dev", r.uplink)
            self.ns_run(r.ns, "ip", "addr", "add", f"10.231.{50 + r.index}.3/24", "dev", pay_r)
            for dev in (r.uplink, pay_r):
                self.ns_run(r.ns, "ip", "link", "set", dev, "up")
            self.ns_run(r.payload_ns, "ip", "addr", "add", f"{r.payload_ip}/24", "dev", pay)
            self.ns_run(r.payload_ns, "ip", "link", "set", pay, "up")
            self.ns_run(r.payload_ns, "ip", "route", "add", "default", "via",
                        f"10.231.{50 + r.index}.3")
            self._robot_rules(r, pay_r)

    def _robot_rules(self, r: Robot, payload_side: str) -> None:
        """Spot's forward: ROBOT_IP:21000-22000 -> payload; everything else from the operator's
        side dropped; the payload's traffic routed out, masqueraded as the robot."""
        ns = r.ns
        self.ns_run(ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        for proto in ("udp", "tcp"):
            self.ns_run(ns, "iptables", "-t", "nat", "-A", "PREROUTING", "-i", r.uplink, "-p",
                        proto, "--dport", FORWARD, "-j", "DNAT", "--to-destination",
                        r.payload_ip)
        self.ns_run(ns, "iptables", "-t", "nat", "-A", "POSTROUTING", "-o", r.uplink, "-j",
                    "MASQUERADE")
        self.ns_run(ns, "iptables", "-P", "FORWARD", "DROP")
        self.ns_run(ns, "iptables", "-A", "FORWARD", "-m", "conntrack", "--ctstate",
                    "ESTABLISHED,RELATED,DNAT", "-j", "ACCEPT")
        self.ns_run(ns, "iptables", "-A", "FORWARD", "-i", payload_side, "-o", r.uplink, "-j",
                    "ACCEPT")
        self.ns_run(ns, "iptables", "-A", "INPUT", "-i", r.uplink, "-m", "conntrack",
                    "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT")
        self.ns_run(ns, "iptables", "-A", "INPUT", "-i", r.uplink, "-j", "DROP")

    def cap(self, robot: Robot, mbit: float | None) -> None:
        """Cap the robot -> operator direction at ``mbit`` Mbit/s (None: remove the cap)."""
        with suppress(RuntimeError):
            self.ns_run(robot.ns, "tc", "qdisc", "del", "dev", robot.uplink, "root")
        if mbit:
            self.ns_run(robot.ns, "tc", "qdisc", "add", "dev", robot.uplink, "root", "tbf",
                        "rate", f"{mbit}mbit", "burst", "64kb", "latency", "100ms")

    def link(self, robot: Robot, up: bool) -> None:
        """Cut or restore the operator's link to ``robot`` (Wi-Fi out of range)."""
        self.ns_run(robot.ns, "ip", "link", "set", robot.uplink, "up" if up else "down")

    @staticmethod
    def ns_run(ns: str, *args: str) -> None:
        _run("ip", "netns", "exec", ns, *args)

    @staticmethod
    def command(ns: str, args: list[str]) -> list[str]:
        """``args`` run on the host ``ns``: inside its network namespace, with a /dev/shm of
        its own (separate computers share no memory: Fast DDS's shared-memory transport must
        not carry what the network should)."""
        return ["ip", "netns", "exec", ns, "unshare", "-m", "--propagation", "private", "sh",
                "-c", 'mount -t tmpfs -o size=512m tmpfs /dev/shm && exec "$@"', "sh", *args]

    def close(self) -> None:
        """Kill every process left in the namespaces and remove them."""
        for ns in self.namespaces():
            pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                                  text=True).stdout.split()
            for pid in pids:
                with suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), 9)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
