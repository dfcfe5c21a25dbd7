"""Run an unmodified Spot SDK program against the simulated robot.

A robot listens on port 443 with a certificate from Boston Dynamics' CA; the simulated one
listens on its own port with its own CA. This runs ``PROGRAM`` as ``__main__`` with every
``Sdk.create_robot`` of the SDK pointed at both, and changes nothing else:

    python -m spot_sim.sdk_program --port PORT --ca DIR/ca.crt PROGRAM.py 127.0.0.1 [ARGS...]
"""

import argparse
import runpy
import signal
import sys
from pathlib import Path

from bosdyn.client import sdk as sdk_module


def point_sdk_at(port: int, ca_cert: str) -> None:
    """Make every Robot the SDK creates use ``port`` and trust ``ca_cert``."""
    create_robot = sdk_module.Sdk.create_robot

    def create_simulated_robot(self, address, *args, **kwargs):
        self.load_robot_cert(ca_cert)
        robot = create_robot(self, address, *args, **kwargs)
        robot.update_secure_channel_port(port)
        return robot

    sdk_module.Sdk.create_robot = create_simulated_robot


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True, help="the simulated robot's ca.crt")
    parser.add_argument("program")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    point_sdk_at(options.port, options.ca)
    program = Path(options.program).resolve()
    sys.argv = [str(program), *options.args]
    sys.path.insert(0, str(program.parent))  # the program's own modules, as python would
    # Ctrl-C stops the program as from a terminal, even when started from a background job
    # (which ignores SIGINT, and Python then installs no handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    runpy.run_path(str(program), run_name="__main__")


if __name__ == "__main__":
    main()
