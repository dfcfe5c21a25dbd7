"""Walk with the arm: a hand goal 1.25 m ahead of the body (out of the arm's reach) with
follow-arm, so the body walks until the hand is there. Boston Dynamics'
arm_with_body_follow, as one ``robot_command`` goal built with RobotCommandBuilder."""

import math

from bosdyn.client.robot_command import RobotCommandBuilder
from nav_msgs.msg import Odometry

from spot_driver_examples.spot import Spot, arguments, yaw
from spot_msgs.action import ArmPosture, RobotCommand


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--ahead", type=float, default=1.25, help="m in front of the body")
    args = parser.parse_args()
    spot = Spot("arm_with_body_follow", args.robot)
    try:
        spot.action_client(RobotCommand, "robot_command")
        spot.action_client(ArmPosture, "arm/posture")
        spot.connect()
        spot.ready()
        spot.act(ArmPosture, "arm/posture", ArmPosture.Goal(posture=ArmPosture.Goal.UNSTOW))
        odometry = spot.next_message(Odometry, "odometry")  # pose in odom (or vision)
        p, q = odometry.pose.pose.position, odometry.pose.pose.orientation
        heading = yaw(q)
        x, y = p.x + args.ahead * math.cos(heading), p.y + args.ahead * math.sin(heading)
        arm = RobotCommandBuilder.arm_pose_command(
            x, y, p.z + 0.25, q.w, q.x, q.y, q.z, odometry.header.frame_id, 3.0)
        command = RobotCommandBuilder.build_synchro_command(
            RobotCommandBuilder.follow_arm_command(), arm)
        print(f"hand to ({x:.2f}, {y:.2f}) in {odometry.header.frame_id}; the body follows")
        result = spot.act(RobotCommand, "robot_command",
                          RobotCommand.Goal(command=command.SerializeToString()))
        print(f"done: {result.status}")
        spot.act(ArmPosture, "arm/posture", ArmPosture.Goal(posture=ArmPosture.Goal.STOW))
    finally:
        spot.close()


if __name__ == "__main__":
    main()
