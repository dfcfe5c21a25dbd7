"""``spot-sim``: run a simulated Spot on 127.0.0.1 until interrupted."""

import argparse
import logging
import os
import signal
import sys
import threading

from bosdyn.api.point_cloud_pb2 import PointCloud

from spot_sim.core.admin import AdminServer
from spot_sim.core.config import SimConfig
from spot_sim.core.field import PROFILES, knob_flags, parse_range
from spot_sim.core.hardware import OPTIONS
from spot_sim.server import SimulatedSpot

LIDAR_ENCODINGS = {"32F": PointCloud.ENCODING_XYZ_32F, "4SC": PointCloud.ENCODING_XYZ_4SC,
                   "5SC": PointCloud.ENCODING_XYZ_5SC}


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="spot-sim", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any)")
    parser.add_argument("--rest-port", type=int, default=None,
                        help="also serve the data-acquisition REST download over HTTPS on this "
                             "port of 127.0.0.1 (a robot's is 443); off by default")
    parser.add_argument("--certs-dir", default="certs",
                        help="where the CA (ca.crt) and server certificate are kept or created")
    parser.add_argument("--username", default=os.environ.get("SPOT_SIM_USERNAME", "user"))
    parser.add_argument("--password", default=None,
                        help="robot password (default: $SPOT_SIM_PASSWORD or 'password')")
    hardware = parser.add_argument_group("optional hardware")
    for option in OPTIONS:
        hardware.add_argument(f"--{option.flag}", dest=option.name,
                              action=argparse.BooleanOptionalAction, default=option.default,
                              help=option.help)
    parser.add_argument("--lidar-encoding", choices=sorted(LIDAR_ENCODINGS), default="32F",
                        help="encoding of the lidar's point clouds")
    parser.add_argument("--render-workers", type=_count, default=SimConfig.render_workers,
                        help="processes that render the cameras and lidar (0: in the serving "
                             "process, one render at a time)")
    parser.add_argument("--clock-offset", type=float, default=12.345,
                        help="robot clock minus host clock, seconds")
    parser.add_argument("--no-estop-required", action="store_true",
                        help="allow motor power without a registered e-stop endpoint")
    parser.add_argument("--docked", type=int, default=0, metavar="DOCK_ID",
                        help="start sitting on this dock (520: the dock near the origin)")
    parser.add_argument("--withhold-feature", action="append", default=[], metavar="FEATURE",
                        help="license feature the robot lacks (docking, choreography, "
                             "graph_navigation, arm, autowalk, spot_check); repeatable")
    parser.add_argument("--admin-port", type=int, default=None,
                        help="serve the fault-injection HTTP channel on 127.0.0.1:PORT "
                             "(0: any free port; default: off)")
    parser.add_argument("--profile", choices=sorted(PROFILES), default="default",
                        help="default: deterministic; field: a robot on Wi-Fi (latency, "
                             "stalls, failures, clock drift, sensor age and noise, real braking)")
    knobs = parser.add_argument_group("field profile knobs (override the profile's)")
    for flag, (kind, text) in knob_flags().items():
        knobs.add_argument(f"--{flag}", type=parse_range if kind is tuple else kind,
                           default=None, metavar="LOW,HIGH" if kind is tuple else None,
                           help=text)
    parser.add_argument("--log-level", default="WARNING")
    return parser.parse_args(argv)


def field_profile(args: argparse.Namespace):
    """The ``--profile`` with any knob flags applied."""
    knobs = {flag.replace("-", "_"): getattr(args, flag.replace("-", "_"))
             for flag in knob_flags()}
    return PROFILES[args.profile].with_knobs(**knobs)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        profile = field_profile(args)
    except ValueError as exc:
        print(f"spot-sim: {exc}", file=sys.stderr)
        return 2
    sys.setswitchinterval(0.001)  # the 333 Hz stream's thread waits at most ~1 ms for the GIL
    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    password = args.password or os.environ.get("SPOT_SIM_PASSWORD", "password")
    config = SimConfig(username=args.username, password=password,
                       clock_offset_sec=args.clock_offset,
                       estop_required=not args.no_estop_required,
                       **{option.field: getattr(args, option.name) for option in OPTIONS},
                       start_docked_id=args.docked, render_workers=args.render_workers,
                       withheld_features=tuple(args.withhold_feature), field=profile)
    sim = SimulatedSpot(config, certs_dir=args.certs_dir, port=args.port,
                        rest_port=args.rest_port)
    sim.sensors.lidar_encoding = LIDAR_ENCODINGS[args.lidar_encoding]
    port = sim.start()
    sim.sensors.start()
    print(f"spot-sim listening on 127.0.0.1:{port}", flush=True)
    print(f"spot-sim ca-cert {sim.ca_cert.resolve()}", flush=True)
    admin = None
    if args.admin_port is not None:
        admin = AdminServer(sim, args.admin_port)
        print(f"spot-sim admin http://127.0.0.1:{admin.start()}", flush=True)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    for sig in (signal.SIGINT, signal.SIGTERM):  # a repeated signal must not cut shutdown short
        signal.signal(sig, signal.SIG_IGN)        # (Python restores SIG_DFL for handlers at exit)
    if admin is not None:
        admin.stop()
    sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
