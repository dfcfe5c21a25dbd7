"""The operator's side in one line: ``eval "$(spot-operator-env ROBOT_IP [ROBOT_IP ...])"``.

Writes the operator's Fast DDS profile (a super client of each robot's discovery server) and
prints the ``export`` lines RViz, Nav2, rosbag and the ``ros2`` CLI need in that shell.
``--on-payload`` prints instead what a process on the payload itself needs to join the
driver's discovery server (and, with ``remote_commands:=false``, to command the robot).
"""

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

from spot_driver.network import ports, profiles
from spot_driver.network.deployment import variables


def environment(robot_ips: list[str], mode: str, discovery_port: int,
                directory: Path) -> dict[str, str]:
    """The operator's environment for ``robot_ips`` (each checked like the payload's)."""
    for ip in robot_ips:
        ports.plan(mode, ip, 0, discovery_port)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"operator_{mode}.xml"
    path.write_text(profiles.operator(robot_ips, mode, discovery_port))
    return variables(path, os.environ.get("ROS_DOMAIN_ID", "0"))


def payload_environment(robot_ip: str, mode: str, discovery_port: int, namespace: str,
                        directory: Path, domain: int | None = None,
                        local_commands: bool = False) -> dict[str, str]:
    """A payload-side process's environment: a client of the discovery server beside the
    driver; with ``local_commands``, in the partition of a driver launched with
    ``remote_commands:=false`` (it may then call the command interfaces kept on the payload)."""
    if domain is None:
        domain = int(os.environ.get("ROS_DOMAIN_ID") or 0)
    plan = ports.plan(mode, robot_ip, domain, discovery_port)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"payload_local_{mode}.xml"
    path.write_text(profiles.payload(plan, None, namespace if local_commands else None,
                                     namespace))
    return variables(path, domain)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spot-operator-env", description=__doc__)
    parser.add_argument("robot_ip", nargs="+", help="each robot's address (a fleet: several)")
    parser.add_argument("--mode", choices=ports.MODES[1:], default="payload")
    parser.add_argument("--discovery-port", type=int, default=ports.DISCOVERY_PORT)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(),
                                                      f"spot_operator_{os.getuid()}"))
    parser.add_argument("--on-payload", action="store_true",
                        help="a process on the payload computer, not the operator's")
    parser.add_argument("--namespace", default="", help="with --on-payload: the robot's")
    parser.add_argument("--local-commands", action="store_true",
                        help="with --on-payload: the driver runs with remote_commands:=false")
    args = parser.parse_args(argv)
    try:
        env = (payload_environment(args.robot_ip[0], args.mode, args.discovery_port,
                                   args.namespace, Path(args.dir),
                                   local_commands=args.local_commands) if args.on_payload else
               environment(args.robot_ip, args.mode, args.discovery_port, Path(args.dir)))
    except ports.NetworkConfigError as exc:
        print(f"spot-operator-env: {exc}", file=sys.stderr)
        return 2
    for key, value in env.items():
        print(f"export {key}={shlex.quote(value)}")
    print("unset ROS_DISCOVERY_SERVER ROS_STATIC_PEERS")
    # a running ros2 daemon keeps its old discovery settings
    print("ros2 daemon stop >/dev/null 2>&1 || true")
    return 0


if __name__ == "__main__":
    sys.exit(main())
