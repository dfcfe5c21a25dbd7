"""Walk once around a circle to the robot's left, facing along it, and stop where it started:
``trajectory`` goals in ``odom`` placed from the robot's ``odometry``."""

import math

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry

from spot_driver_examples.spot import Spot, arguments, yaw
from spot_msgs.action import Trajectory


def circle(x: float, y: float, facing: float, radius: float, steps: int):
    """(x, y, heading) of ``steps`` points around a circle whose centre is ``radius`` m to the
    left of a robot at (x, y) facing ``facing``; the last point is the start."""
    cx, cy = x - radius * math.sin(facing), y + radius * math.cos(facing)
    start = math.atan2(y - cy, x - cx)
    for step in range(1, steps + 1):
        angle = start + 2 * math.pi * step / steps
        yield (cx + radius * math.cos(angle), cy + radius * math.sin(angle),
               angle + math.pi / 2)


def pose_goal(x: float, y: float, heading: float, frame: str) -> Trajectory.Goal:
    goal = Trajectory.Goal(target_pose=PoseStamped())
    goal.target_pose.header.frame_id = frame
    goal.target_pose.pose.position.x, goal.target_pose.pose.position.y = x, y
    goal.target_pose.pose.orientation.z = math.sin(heading / 2)
    goal.target_pose.pose.orientation.w = math.cos(heading / 2)
    return goal


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--radius", type=float, default=1.0, help="m")
    parser.add_argument("--steps", type=int, default=8, help="goals around the circle")
    args = parser.parse_args()
    spot = Spot("spot_in_circle", args.robot)
    try:
        spot.action_client(Trajectory, "trajectory")
        spot.connect()
        spot.ready()
        odometry = spot.next_message(Odometry, "odometry")
        here, q = odometry.pose.pose.position, odometry.pose.pose.orientation
        for step, (x, y, heading) in enumerate(
                circle(here.x, here.y, yaw(q), args.radius, args.steps), start=1):
            print(f"to x={x:.2f} y={y:.2f} heading={math.degrees(heading):.0f} deg")
            goal = pose_goal(x, y, heading, odometry.header.frame_id)
            # on the way a goal counts once the robot is near it; the last one only there
            goal.precise_positioning = step == args.steps
            spot.act(Trajectory, "trajectory", goal)
        print("back where it started")
    finally:
        spot.close()


if __name__ == "__main__":
    main()
