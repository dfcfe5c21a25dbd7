"""Forward joint targets from another node to the robot (spot_ros2_control's
joint_command_passthrough): each sensor_msgs/JointState on ``joint_commands`` (any subset of
the joints, by name, positions only: what a teleop panel or a planner publishes) becomes one
``low_level/joint_command`` with the SDK's gains; a joint not named keeps its target. The
robot follows them while they keep coming; when they stop (longer than ``--idle`` s, the
driver's ``low_level_watchdog``), it stands again by itself, and the next targets switch
joint mode on again first. Ctrl-C hands the robot back to the stand controller. Needs
``low_level:=true``."""

import math
import threading
import time

from sensor_msgs.msg import JointState

from spot_driver_examples.joint_stream import JointStream
from spot_driver_examples.spot import Spot, SpotError, arguments


class Passthrough:
    """JointState targets in, joint commands out, while joint mode is on. A message naming an
    unknown joint, without one position per name or with one not finite is refused whole
    (each reason printed once): nothing of it is sent. Targets that arrive while joint mode is
    off wait (the latest only) and set ``wanted``: the main thread switches it on (a service
    call cannot be made from this callback: it would wait on its own executor)."""

    def __init__(self, spot: Spot, joints: JointStream, idle_s: float) -> None:
        self._joints = joints
        self._by_name = {n.split("/")[-1]: n for n in joints.positions()}
        self._idle_ns = int(idle_s * 1e9)
        self._refused: set[str] = set()
        self._lock = threading.Lock()
        self._active = False
        self._last_ns = 0
        self._pending: tuple[list[str], list[float]] | None = None
        self.wanted = threading.Event()
        self.forwarded = 0
        spot.node.create_subscription(JointState, spot.name("joint_commands"), self._on, 10)

    def _on(self, msg: JointState) -> None:
        unknown = [n for n in msg.name if n.split("/")[-1] not in self._by_name]
        if unknown:
            why = f"unknown joints {unknown}"
        elif len(msg.position) != len(msg.name):
            why = "not one position per name"
        elif not all(math.isfinite(p) for p in msg.position):
            why = "a position that is not finite"
        else:
            why = ""
        if why:
            if why not in self._refused:
                print(f"refused: {why}")
                self._refused.add(why)
            return
        command = ([self._by_name[n.split("/")[-1]] for n in msg.name], list(msg.position))
        now = time.monotonic_ns()
        with self._lock:
            if self._active and now - self._last_ns > self._idle_ns:
                self._active = False  # the robot stood again when the targets stopped
            if not self._active:
                self._pending = command
                self.wanted.set()
                return
            self._last_ns = now
        self._send(command)

    def activated(self) -> None:
        """Joint mode is on: every joint held (the stream's gains), then forward from now,
        the waiting targets first."""
        self._joints.hold()
        with self._lock:
            pending, self._pending = self._pending, None
            self._active, self._last_ns = True, time.monotonic_ns()
            self.wanted.clear()
        if pending is not None:
            self._send(pending)

    def _send(self, command: tuple[list[str], list[float]]) -> None:
        self._joints.command(*command)
        self.forwarded += 1
        if self.forwarded == 1 or self.forwarded % 100 == 0:
            print(f"forwarded {self.forwarded} commands")


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--idle", type=float, default=0.1,
                        help="s without targets after which the robot has stood again")
    args = parser.parse_args()
    spot = Spot("joint_command_passthrough", args.robot)
    try:
        joints = JointStream(spot)
        spot.connect()
        spot.ready()
        joints.wait_for_subscriber()
        passthrough = Passthrough(spot, joints, args.idle)
        print(f"forwarding {spot.name('joint_commands')} to "
              f"{spot.name('low_level/joint_command')}; Ctrl-C to stop")
        while True:
            passthrough.wanted.wait()
            print(joints.activate())
            passthrough.activated()
    except KeyboardInterrupt:
        try:
            print(f"back to the stand controller: {joints.activate(False)}")
        except SpotError as error:
            print(error)
    finally:
        spot.close()


if __name__ == "__main__":
    main()
