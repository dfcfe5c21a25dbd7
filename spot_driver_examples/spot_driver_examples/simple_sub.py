"""Walk to the poses published on ``pose_commands`` (geometry_msgs/Pose, relative to where
the body is when each arrives), one at a time; a pose that arrives during a walk waits, and
only the newest waiting one is walked to. ``--count N`` stops after N walks."""

import threading

from geometry_msgs.msg import Pose, PoseStamped

from spot_driver_examples.spot import Spot, arguments
from spot_msgs.action import Trajectory


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--count", type=int, default=0, help="walks before exiting (0: never)")
    args = parser.parse_args()
    spot = Spot("simple_sub", args.robot)
    newest: list[Pose | None] = [None]  # the pose waiting to be walked to
    lock = threading.Lock()
    arrived = threading.Event()

    def keep(pose: Pose) -> None:
        with lock:
            newest[0] = pose
            arrived.set()

    try:
        spot.action_client(Trajectory, "trajectory")
        spot.node.create_subscription(Pose, spot.name("pose_commands"), keep, 10)
        spot.connect()
        spot.ready()
        print(f"waiting for poses on {spot.name('pose_commands')}")
        walks = 0
        while args.count == 0 or walks < args.count:
            arrived.wait()
            with lock:
                pose, newest[0] = newest[0], None
                arrived.clear()
            goal = Trajectory.Goal(target_pose=PoseStamped(pose=pose), precise_positioning=True)
            goal.target_pose.header.frame_id = "body"
            print(f"walking to x={pose.position.x:.2f} y={pose.position.y:.2f} (body)")
            spot.act(Trajectory, "trajectory", goal)
            walks += 1
    finally:
        spot.close()


if __name__ == "__main__":
    main()
