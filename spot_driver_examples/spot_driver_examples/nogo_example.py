"""No-go regions: put a 4 m wide wall ``--ahead`` m in front of the robot, try to walk
through it (the robot stops at it and the ``trajectory`` goal fails, blocked), list the
robot's no-go regions, delete the wall and walk on."""

from geometry_msgs.msg import PoseStamped

from spot_driver_examples.spot import Spot, SpotError, arguments
from spot_msgs.action import Trajectory
from spot_msgs.srv import AddNoGoRegion, ListWorldObjects, MutateWorldObject


def in_body(x: float) -> PoseStamped:
    pose = PoseStamped()
    pose.header.frame_id = "body"
    pose.pose.position.x = x
    pose.pose.orientation.w = 1.0
    return pose


def walk(spot: Spot, distance: float) -> str:
    """Walk ``distance`` m forward; the trajectory's outcome in words."""
    try:
        spot.act(Trajectory, "trajectory",
                 Trajectory.Goal(target_pose=in_body(distance), precise_positioning=True))
        return "reached the goal"
    except SpotError as exc:
        return str(exc)


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--ahead", type=float, default=1.5, help="m to the wall")
    args = parser.parse_args()
    spot = Spot("nogo_example", args.robot)
    try:
        spot.action_client(Trajectory, "trajectory")
        spot.connect()
        spot.ready()
        wall = AddNoGoRegion.Request(name="wall", pose=in_body(args.ahead), length=0.2,
                                     width=4.0)
        wall.lifetime.sec = 300
        added = spot.call(AddNoGoRegion, "world_objects/add_nogo_region", wall)
        if not added.success:
            raise SpotError(f"world_objects/add_nogo_region: {added.message}")
        print(f"added no-go region {added.id}")
        print(f"walking through it: {walk(spot, args.ahead + 1.0)}")
        listed = spot.call(ListWorldObjects, "world_objects/list",
                           ListWorldObjects.Request(types=["user_nogo"]))
        print("no-go regions: " + ", ".join(f"{o.id} ({o.name})" for o in listed.objects.objects))
        deleted = spot.call(MutateWorldObject, "world_objects/mutate", MutateWorldObject.Request(
            action="delete", object_text=f"id: {added.id}"))
        if not deleted.success:
            raise SpotError(f"world_objects/mutate: {deleted.message}")
        print(f"deleted it; walking on: {walk(spot, 1.0)}")
    finally:
        spot.close()


if __name__ == "__main__":
    main()
