"""The operator's side in one line: ``eval "$(spot-operator-env ROBOT_IP [ROBOT_IP ...])"``.

Writes the operator's Fast DDS profile (a super client of each robot's discovery server) and
prints the ``export`` lines RViz, Nav2, rosbag and the ``ros2`` CLI need in that shell.
``--on-payload`` prints instead what a process on the payload itself needs to join the
driver's discovery server (and, with ``remote_commands:=false``, to command the robot).
"""

import argparse
import hashlib
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

from spot_driver.network import ports, profiles
from spot_driver.network.deployment import variables


def environment(robot_ips: list[str], mode: str, discovery_port: int,
                directory: Path) -> dict[str, str]:
    """The operator's environment for ``robot_ips`` (each checked like the payload's)."""
    for ip in robot_ips:
        ports.plan(mode, ip, 0, discovery_port)
    return variables(_written(directory, f"operator_{mode}",
                              profiles.operator(robot_ips, mode, discovery_port)),
                     os.environ.get("ROS_DOMAIN_ID", "0"))


def _written(directory: Path, stem: str, xml: str) -> Path:
    """``xml`` in a file named after its content: a shell that evaluates the output for
    other robots writes another file, so it never changes what an earlier shell's processes
    read."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}_{hashlib.sha256(xml.encode()).hexdigest()[:12]}.xml"
    if not path.exists() or path.read_text() != xml:
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(xml)
        temporary.replace(path)  # whole or not at all, for a process reading it now
    return path


def payload_environment(robot_ip: str, mode: str, discovery_port: int, namespace: str,
                        directory: Path, domain: int | None = None,
                        local_commands: bool = False) -> dict[str, str]:
    """A payload-side process's environment: a client of the discovery server beside the
    driver; with ``local_commands``, in the partition of a driver launched with
    ``remote_commands:=false`` (it may then call the command interfaces kept on the payload)."""
    if domain is None:
        domain = int(os.environ.get("ROS_DOMAIN_ID") or 0)
    plan = ports.plan(mode, robot_ip, domain, discovery_port)
    xml = profiles.payload(plan, None, namespace if local_commands else None, namespace)
    return variables(_written(directory, f"payload_local_{mode}", xml), domain)


_EVERY_NODES = {"/rosout", "/parameter_events"}  # topics any node has, robot or not
DRIVER_NODE = "spot_driver"  # one per robot, in its namespace
SETTLE_S = 1.0  # s the operator's view of the graph stays the same before the wait ends


def wait_for_robot(timeout: float, robots: int = 1) -> bool:
    """Start the ``ros2`` daemon with this shell's settings and wait until it sees the driver
    node of each of ``robots`` robots and its topic list has stopped growing for SETTLE_S, so
    the shell's first ``ros2 topic list`` lists every robot whole (a list taken when the first
    robot topic showed up missed another robot's publishers). Whether it did."""
    from ros2cli.node.daemon import DaemonNode, spawn_daemon

    args = argparse.Namespace(debug=False)
    spawn_daemon(args, timeout=timeout)
    deadline = time.monotonic() + timeout
    last, since = None, 0.0
    while time.monotonic() < deadline:
        with DaemonNode(args) as node:
            if node.connected:
                topics = {name for name, _ in node.get_topic_names_and_types()} - _EVERY_NODES
                drivers = sum(name == DRIVER_NODE
                              for name, _ in node.get_node_names_and_namespaces())
                if topics and drivers >= robots:
                    if topics != last:
                        last, since = topics, time.monotonic()
                    elif time.monotonic() - since >= SETTLE_S:
                        return True
        time.sleep(0.2)
    return False


def _exports(env: dict[str, str], wait: float, robots: int = 1) -> list[str]:
    """The lines the caller's shell evaluates: the settings, then a daemon that has them."""
    lines = [f"export {key}={shlex.quote(value)}" for key, value in env.items()]
    lines += ["unset ROS_DISCOVERY_SERVER ROS_STATIC_PEERS",
              "ros2 daemon stop >/dev/null 2>&1 || true"]  # it keeps its old settings
    if wait > 0:
        lines.append(f"ros2 run spot_driver spot-operator-env --wait-for-robot {wait:g} "
                     f"--robots {robots} || true")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spot-operator-env", description=__doc__)
    parser.add_argument("robot_ip", nargs="*", help="each robot's address (a fleet: several)")
    parser.add_argument("--mode", choices=ports.MODES[1:], default="payload")
    parser.add_argument("--discovery-port", type=int, default=ports.DISCOVERY_PORT)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(),
                                                      f"spot_operator_{os.getuid()}"))
    parser.add_argument("--on-payload", action="store_true",
                        help="a process on the payload computer, not the operator's")
    parser.add_argument("--namespace", default="", help="with --on-payload: the robot's")
    parser.add_argument("--local-commands", action="store_true",
                        help="with --on-payload: the driver runs with remote_commands:=false")
    parser.add_argument("--wait", type=float, default=10.0,
                        help="s the printed lines wait for the robot's topics (0: no wait)")
    parser.add_argument("--wait-for-robot", type=float, metavar="SECONDS",
                        help=argparse.SUPPRESS)  # what the printed lines run
    parser.add_argument("--robots", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.wait_for_robot is not None:
        seen = wait_for_robot(args.wait_for_robot, args.robots)
        print("spot-operator-env: " + ("the robot's topics are visible" if seen else
              f"no robot topic within {args.wait_for_robot:g} s (is the driver running, "
              f"and the robot reachable?)"), file=sys.stderr)
        return 0
    if not args.robot_ip:
        parser.error("give each robot's address")
    try:
        env = (payload_environment(args.robot_ip[0], args.mode, args.discovery_port,
                                   args.namespace, Path(args.dir),
                                   local_commands=args.local_commands) if args.on_payload else
               environment(args.robot_ip, args.mode, args.discovery_port, Path(args.dir)))
    except ports.NetworkConfigError as exc:
        print(f"spot-operator-env: {exc}", file=sys.stderr)
        return 2
    robots = 1 if args.on_payload else len(args.robot_ip)
    print("\n".join(_exports(env, args.wait, robots)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
