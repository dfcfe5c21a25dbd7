"""Wiggle the wrist with joint-level control (spot_ros2_control's wiggle_arm): from the
stowed arm, wr0 turns 1 rad up and back, then 1 rad down and back, while the gripper opens
0.5 rad; each motion in 1 s, streamed at 200 Hz; the legs hold where they stand. Then the
stand controller takes over. Needs an arm and ``low_level:=true``."""

from spot_driver_examples.joint_stream import ARM, JointStream
from spot_driver_examples.spot import Spot, arguments
from spot_msgs.action import ArmPosture

MOVE_S = 1.0


def main() -> None:
    args = arguments(__doc__).parse_args()
    spot = Spot("wiggle_arm", args.robot)
    try:
        joints = JointStream(spot)
        spot.action_client(ArmPosture, "arm/posture")
        spot.connect()
        spot.ready()
        spot.act(ArmPosture, "arm/posture", ArmPosture.Goal(posture=ArmPosture.Goal.STOW))
        joints.wait_for_subscriber()
        names = joints.named(ARM)
        print(joints.activate())
        here = joints.positions()
        start = [here[n] for n in names]
        joints.follow(names, lambda t: start, 0.5)  # hold while the stream opens
        for turn in (1.0, -1.0):
            wiggled = list(start)
            wiggled[ARM.index("arm_wr0")] += turn
            wiggled[ARM.index("arm_f1x")] -= 0.5
            print(f"wr0 {turn:+.1f} rad")
            joints.move(names, start, wiggled, MOVE_S)
            joints.move(names, wiggled, start, MOVE_S)
        print(f"back to the stand controller: {joints.activate(False)}")
    finally:
        spot.close()


if __name__ == "__main__":
    main()
