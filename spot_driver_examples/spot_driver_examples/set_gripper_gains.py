"""Open and close the gripper with joint-level control at the gains you choose
(spot_ros2_control's set_gripper_gains): each open-close streams the gripper's target at
50 Hz, 1 s to open (-1.57 rad) and 1 s to close, with k_q_p (N m/rad, nominal 16) and k_qd_p
(N m s/rad, nominal 0.32) clamped to 0-50 and 0-4; the rest of the arm and the legs hold
where they stand. First at the nominal gains, then at each ``--gains KP,KD`` given, or, with
none given, at gains typed in until an empty line (as spot_ros2's asks). Each open-close
prints how far the gripper opened. Then the stand controller takes over. Needs an arm and
``low_level:=true``."""

from spot_driver_examples.joint_stream import JointStream
from spot_driver_examples.spot import Spot, arguments

OPEN, CLOSED = -1.57, 0.0  # rad
MOVE_S, RATE_HZ = 1.0, 50.0
NOMINAL = (16.0, 0.32)
LIMITS = (50.0, 4.0)  # k_q_p, k_qd_p: the largest accepted (spot_ros2's clamp)


def clamp(kp: float, kd: float) -> tuple[float, float]:
    """The gains within 0..LIMITS."""
    return max(0.0, min(kp, LIMITS[0])), max(0.0, min(kd, LIMITS[1]))


def parse(text: str) -> tuple[float, float]:
    """``"16,0.32"`` -> (16.0, 0.32), clamped; ValueError for anything else."""
    kp, kd = (float(part) for part in text.split(","))
    return clamp(kp, kd)


def asked():
    """Gains typed in, until an empty line or the end of input."""
    while True:
        try:
            text = input("k_q_p,k_qd_p (empty to stop): ").strip()
        except EOFError:
            return
        if not text:
            return
        try:
            yield parse(text)
        except ValueError:
            print(f"not two numbers: {text!r}; the gains stay as they were")


def open_and_close(joints: JointStream, gripper: str, gains: tuple[float, float]) -> float:
    """One open-close at ``gains``; the most open angle the gripper reached (rad)."""
    print(f"k_q_p={gains[0]} k_qd_p={gains[1]}")
    start = joints.positions()[gripper]
    reached = [start]

    def opening(t: float) -> list[float]:
        reached.append(joints.positions()[gripper])
        return [start + (OPEN - start) * min(1.0, t / MOVE_S)]

    stream = {"rate_hz": RATE_HZ, "gains_of": {gripper: gains}}
    joints.follow([gripper], opening, MOVE_S, **stream)
    reached.append(joints.positions()[gripper])
    joints.move([gripper], [OPEN], [CLOSED], MOVE_S, settle=0.2, **stream)
    print(f"opened to {min(reached):.2f} rad, closed to {joints.positions()[gripper]:.2f} rad")
    return min(reached)


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--gains", action="append", type=parse, default=[],
                        help="KP,KD: an open-close at these gains (repeatable)")
    args = parser.parse_args()
    spot = Spot("set_gripper_gains", args.robot)
    try:
        joints = JointStream(spot)
        spot.connect()
        spot.ready()
        joints.wait_for_subscriber()
        gripper = joints.named(["arm_f1x"])[0]
        print(joints.activate())
        open_and_close(joints, gripper, NOMINAL)
        for gains in args.gains or asked():
            open_and_close(joints, gripper, gains)
        print(f"back to the stand controller: {joints.activate(False)}")
    finally:
        spot.close()


if __name__ == "__main__":
    main()
