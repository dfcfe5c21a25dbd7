"""Drive Spot from a terminal: w/s forward/back, a/d sideways, q/e turn, f stand, v sit,
space stop, x (or Esc) quit. A terminal has no key-up: a motion key keeps the robot moving
for HOLD_S after it was last pressed (held keys repeat faster), then ``cmd_vel`` stops and
the robot stops by itself."""

import curses
import time

from geometry_msgs.msg import Twist

from spot_driver_examples.spot import Spot, SpotError, arguments

SPEED = 0.5  # m/s and rad/s
HOLD_S = 0.6
RATE_S = 0.1
MOTIONS = {"w": (SPEED, 0.0, 0.0), "s": (-SPEED, 0.0, 0.0), "a": (0.0, SPEED, 0.0),
           "d": (0.0, -SPEED, 0.0), "q": (0.0, 0.0, SPEED), "e": (0.0, 0.0, -SPEED)}
SERVICES = {"f": "stand", "v": "sit", " ": "stop"}
QUIT = {"x", "\x1b"}


def twist(vx: float, vy: float, wz: float) -> Twist:
    msg = Twist()
    msg.linear.x, msg.linear.y, msg.angular.z = vx, vy, wz
    return msg


def drive(screen, spot: Spot) -> None:
    publisher = spot.node.create_publisher(Twist, spot.name("cmd_vel"), 10)
    screen.timeout(int(RATE_S * 1000))
    motion, pressed, status = None, 0.0, "ready"
    while True:
        screen.erase()
        screen.addstr(0, 0, __doc__.splitlines()[0])
        screen.addstr(2, 0, f"status: {status}")
        screen.refresh()
        key = screen.getch()
        char = chr(key) if 0 <= key < 256 else ""
        if char in QUIT:
            return
        if char in MOTIONS:
            motion, pressed = MOTIONS[char], time.monotonic()
            status = f"moving {motion}"
        elif char in SERVICES:
            motion = None
            try:
                status = f"{SERVICES[char]}: {spot.trigger(SERVICES[char])}"
            except SpotError as exc:
                status = str(exc)
        if motion is not None and time.monotonic() - pressed > HOLD_S:
            motion, status = None, "stopped (no key)"
        if motion is not None:
            publisher.publish(twist(*motion))


def main() -> None:
    args = arguments(__doc__).parse_args()
    spot = Spot("wasd", args.robot)
    try:
        spot.connect(("claim", "power_on", "stand", "sit", "stop"))
        spot.ready()
        curses.wrapper(drive, spot)
    finally:
        spot.close()


if __name__ == "__main__":
    main()
