"""Stand up and walk 1 m forward, then sit: the ``trajectory`` action with a goal in the body
frame (the driver puts it in the world where the robot stands when the goal arrives)."""

from geometry_msgs.msg import PoseStamped

from spot_driver_examples.spot import Spot, arguments
from spot_msgs.action import Trajectory


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--distance", type=float, default=1.0, help="m forward")
    args = parser.parse_args()
    spot = Spot("walk_forward", args.robot)
    try:
        spot.action_client(Trajectory, "trajectory")
        spot.connect()
        spot.ready()
        goal = Trajectory.Goal(target_pose=PoseStamped())
        goal.target_pose.header.frame_id = "body"
        goal.target_pose.pose.position.x = args.distance
        goal.target_pose.pose.orientation.w = 1.0
        goal.precise_positioning = True
        print(f"walking {args.distance} m forward")
        spot.act(Trajectory, "trajectory", goal)
        print(f"sit: {spot.trigger('sit')}")
    finally:
        spot.close()


if __name__ == "__main__":
    main()
