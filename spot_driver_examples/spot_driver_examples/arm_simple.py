"""Boston Dynamics' arm_simple through ROS: unstow the arm, put the hand 0.75 m ahead and
0.25 m up with the gripper open, then level with the body turned 90 degrees about its axis
with the gripper closed, and stow. Poses are in ``flat_body`` (gravity-aligned body)."""

import math

from geometry_msgs.msg import PoseStamped

from spot_driver_examples.spot import Spot, arguments
from spot_msgs.action import ArmPose, ArmPosture, Gripper

# (x, y, z) m and roll rad of the hand in flat_body, and the gripper there
STEPS = (((0.75, 0.0, 0.25), 0.0, Gripper.Goal.OPEN),
         ((0.75, 0.0, 0.0), math.pi / 2, Gripper.Goal.CLOSE))


def hand_goal(position: tuple, roll: float, seconds: int = 2) -> ArmPose.Goal:
    goal = ArmPose.Goal(pose=PoseStamped())
    goal.pose.header.frame_id = "flat_body"
    p = goal.pose.pose.position
    p.x, p.y, p.z = position
    goal.pose.pose.orientation.x = math.sin(roll / 2)
    goal.pose.pose.orientation.w = math.cos(roll / 2)
    goal.duration.sec = seconds
    return goal


def main() -> None:
    args = arguments(__doc__).parse_args()
    spot = Spot("arm_simple", args.robot)
    try:
        for action_type, name in ((ArmPosture, "arm/posture"), (ArmPose, "arm/pose"),
                                  (Gripper, "gripper")):
            spot.action_client(action_type, name)
        spot.connect()
        spot.ready()
        spot.act(ArmPosture, "arm/posture", ArmPosture.Goal(posture=ArmPosture.Goal.UNSTOW))
        for position, roll, gripper in STEPS:
            print(f"hand to {position} roll {roll:.2f} rad")
            spot.act(ArmPose, "arm/pose", hand_goal(position, roll))
            spot.act(Gripper, "gripper", Gripper.Goal(command=gripper))
        print("stowing")
        spot.act(ArmPosture, "arm/posture", ArmPosture.Goal(posture=ArmPosture.Goal.STOW))
    finally:
        spot.close()


if __name__ == "__main__":
    main()
