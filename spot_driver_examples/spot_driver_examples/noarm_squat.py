"""Squat with joint-level control (spot_ros2_control's noarm_squat): every leg joint
streamed at 200 Hz from the standing pose down to a crouch in 1.5 s and back up (an arm, if
any, holds still), then the stream stops and the stand controller takes over. Needs
``low_level:=true`` (the launch argument)."""

from spot_driver_examples.joint_stream import LEGS, JointStream
from spot_driver_examples.spot import Spot, arguments

CROUCH = [0.15, 1.3, -2.25, -0.15, 1.3, -2.25, 0.15, 1.3, -2.25, -0.15, 1.3, -2.25]  # rad
MOVE_S = 1.5


def main() -> None:
    args = arguments(__doc__).parse_args()
    spot = Spot("noarm_squat", args.robot)
    try:
        joints = JointStream(spot)
        spot.connect()
        spot.ready()
        joints.wait_for_subscriber()
        names = joints.named(LEGS)
        here = joints.positions()
        stand = [here[n] for n in names]
        print(joints.activate())
        joints.follow(names, lambda t: stand, 0.5)  # hold while the stream opens
        for a, b, word in ((stand, CROUCH, "down"), (CROUCH, stand, "up")):
            print(word)
            joints.move(names, a, b, MOVE_S, settle=1.0)
        print(f"back to the stand controller: {joints.activate(False)}")
    finally:
        spot.close()


if __name__ == "__main__":
    main()
