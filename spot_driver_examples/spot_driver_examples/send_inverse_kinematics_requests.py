"""Ask the robot's inverse kinematics where the arm would put its hand at a few poses in
front of the body (nothing moves), then move the arm to each reachable solution with the
``arm/joint_move`` action. The last target is out of reach on purpose."""

from geometry_msgs.msg import PoseStamped

from spot_driver_examples.spot import Spot, SpotError, arguments
from spot_msgs.action import ArmJointMove, ArmPosture
from spot_msgs.srv import GetInverseKinematics

TARGETS = ((0.7, 0.2, 0.3), (0.7, -0.2, 0.1), (3.0, 0.0, 0.5))  # hand in flat_body, m


def ask(spot: Spot, x: float, y: float, z: float) -> GetInverseKinematics.Response:
    target = PoseStamped()
    target.header.frame_id = "flat_body"
    target.pose.position.x, target.pose.position.y, target.pose.position.z = x, y, z
    target.pose.orientation.w = 1.0
    answer = spot.call(GetInverseKinematics, "arm/inverse_kinematics",
                       GetInverseKinematics.Request(target_pose=target))
    if not answer.success:
        raise SpotError(f"arm/inverse_kinematics: {answer.message}")
    return answer


def main() -> None:
    args = arguments(__doc__).parse_args()
    spot = Spot("send_inverse_kinematics_requests", args.robot)
    try:
        spot.action_client(ArmPosture, "arm/posture")
        spot.action_client(ArmJointMove, "arm/joint_move")
        spot.connect()
        spot.ready()
        spot.act(ArmPosture, "arm/posture", ArmPosture.Goal(posture=ArmPosture.Goal.UNSTOW))
        for x, y, z in TARGETS:
            answer = ask(spot, x, y, z)
            if not answer.reachable:
                print(f"({x}, {y}, {z}): not reachable ({answer.status})")
                continue
            arm = [(n, q) for n, q in zip(answer.joint_names, answer.joint_positions, strict=True)
                   if n != "arm_f1x"]  # the gripper is not an arm joint to move
            print(f"({x}, {y}, {z}): reachable; joints " +
                  " ".join(f"{n}={q:.3f}" for n, q in arm))
            spot.act(ArmJointMove, "arm/joint_move", ArmJointMove.Goal(
                joint_names=[n for n, _ in arm], positions=[q for _, q in arm]))
        spot.act(ArmPosture, "arm/posture", ArmPosture.Goal(posture=ArmPosture.Goal.STOW))
    finally:
        spot.close()


if __name__ == "__main__":
    main()
