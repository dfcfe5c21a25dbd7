"""Switch between high-level commands and joint-level control in one program
(spot_ros2_control's mixed_level_example): claim, power on and stand through the driver's
services; switch joint mode on (``low_level/activate``, where spot_ros2 loads and activates
its ros2_control controllers); open and close the gripper by streaming its target at 50 Hz,
1 s each way; switch joint mode off (the stand controller takes back); sit. Before each
step it waits for Enter, as spot_ros2's does (``--no-pause`` runs straight through). Needs
an arm and ``low_level:=true``."""

from spot_driver_examples.joint_stream import JointStream
from spot_driver_examples.spot import Spot, arguments

OPEN, CLOSED = -1.57, 0.0  # rad
MOVE_S, RATE_HZ = 1.0, 50.0


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--no-pause", action="store_true", help="do not wait for Enter")
    args = parser.parse_args()

    def pause(next_step: str) -> None:
        if not args.no_pause:
            input(f"press [enter] to {next_step}:")

    spot = Spot("mixed_level_example", args.robot)
    try:
        joints = JointStream(spot)
        spot.connect()
        spot.ready()  # high level: claim, power on, stand
        joints.wait_for_subscriber()
        gripper = joints.named(["arm_f1x"])[0]
        pause("switch to joint-level control")
        print(f"joint level: {joints.activate()}")
        pause("open and close the gripper")
        start = joints.positions()[gripper]
        joints.move([gripper], [start], [OPEN], MOVE_S, settle=0.2, rate_hz=RATE_HZ)
        joints.move([gripper], [OPEN], [CLOSED], MOVE_S, settle=0.2, rate_hz=RATE_HZ)
        pause("switch back to high-level commands")
        print(f"high level: {joints.activate(False)}")
        pause("sit")
        print(f"sit: {spot.trigger('sit')}")
    finally:
        spot.close()


if __name__ == "__main__":
    main()
