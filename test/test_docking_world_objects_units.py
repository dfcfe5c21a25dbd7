"""Writing to the robot's world model without a robot: the driver's no-go regions and
mutations (``docking/world_objects.py``) and the simulated footprint against regions
(``spot_sim/body/nogo.py``)."""

import math

import pytest
from bosdyn.api import geometry_pb2, world_object_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_driver.core.errors import CommandError
from spot_driver.docking import world_objects
from spot_sim.body.mobility import Se2
from spot_sim.body.nogo import Region, UserObjects, nogo_refusal

Response = world_object_pb2.MutateWorldObjectResponse


def _tree() -> geometry_pb2.FrameTreeSnapshot:
    """odom -> body: 2 m along x, turned 90 degrees left."""
    tree = geometry_pb2.FrameTreeSnapshot()
    tree.child_to_parent_edge_map["odom"].parent_frame_name = ""
    body = tree.child_to_parent_edge_map["body"]
    body.parent_frame_name = "odom"
    body.parent_tform_child.CopyFrom(SE3Pose(2.0, 0.0, 0.3, Quat.from_yaw(math.pi / 2))
                                     .to_proto())
    return tree


def test_a_region_in_the_body_frame_is_kept_in_odom():
    obj = world_objects.nogo_region("wall", _tree(), "body", SE3Pose(1.0, 0, 0, Quat()),
                                    0.2, 4.0, 0.0, 30.0)
    box = obj.nogo_region_properties.box
    assert box.frame_name == "odom" and (box.box.size.x, box.box.size.y) == (0.2, 4.0)
    assert box.frame_name_tform_box.position.x == pytest.approx(2.0)
    assert box.frame_name_tform_box.position.y == pytest.approx(1.0)
    assert box.frame_name_tform_box.position.z == 0.0
    assert obj.object_lifetime.seconds == 30
    assert nogo_refusal(obj.nogo_region_properties) == ""  # the simulated robot takes it
    circle = world_objects.nogo_region("c", _tree(), "odom", SE3Pose(0, 0, 0, Quat()),
                                       0.0, 0.0, 0.5, 0.0, foot=False)
    assert circle.nogo_region_properties.circle.circle.radius == 0.5
    assert circle.nogo_region_properties.disable_foot_obstacle_generation
    assert not circle.HasField("object_lifetime")  # the robot's default
    for args, words in (((0.2, math.inf, 0.0, 0.0), "width must be finite"),
                        ((0.0, 1.0, 0.0, 0.0), "needs length and width"),
                        ((1.0, 1.0, -1.0, 0.0), "must not be negative")):
        with pytest.raises(CommandError, match=words):
            world_objects.nogo_region("x", _tree(), "body", SE3Pose(0, 0, 0, Quat()), *args)


def test_mutations_are_parsed_and_refusals_said():
    request = world_objects.mutation("delete", b"", "id: 7")
    assert request.mutation.object.id == 7
    with pytest.raises(CommandError, match="set 'id'"):
        world_objects.mutation("change", b"", "name: 'x'")
    with pytest.raises(CommandError, match="exactly one"):
        world_objects.mutation("add", b"\x08\x01", "id: 1")
    assert world_objects.mutated_id(Response(status=Response.STATUS_OK,
                                             mutated_object_id=9), 0) == 9
    with pytest.raises(CommandError, match="world object 4 is one the robot perceives"):
        world_objects.mutated_id(Response(status=Response.STATUS_NO_PERMISSION), 4)
    with pytest.raises(CommandError, match=r"unknown world object types \['cars'\]"):
        world_objects.object_types(["dock", "cars"])


def test_the_footprint_meets_boxes_and_circles_by_its_true_shape():
    wall = Region(Se2(1.5, 0.0, 0.0), half_x=0.1, half_y=2.0)
    assert not wall.meets(Se2(0.84, 0.0, 0.0))  # front at 1.39, the face at 1.4
    assert wall.meets(Se2(0.86, 0.0, 0.0))
    assert not wall.meets(Se2(1.1, 0.0, math.pi / 2))  # turned: 0.25 m half width
    post = Region(Se2(0.0, 0.6, 0.0), radius=0.3)
    assert not post.meets(Se2(0.0, 0.0, 0.0))  # side at 0.25, the post from 0.3
    assert post.meets(Se2(0.0, 0.1, 0.0))


def test_user_objects_expire_and_perceived_ones_are_not_theirs():
    objects = UserObjects()
    add = world_object_pb2.MutateWorldObjectRequest.Mutation(action=1)
    add.object.object_lifetime.seconds = 2
    status, object_id, _ = objects.mutate(add, now_ns=10**9, robot_ids={1})
    assert status == Response.STATUS_OK and objects.live(2 * 10**9)[0].id == object_id
    assert objects.live(4 * 10**9) == []
    delete = world_object_pb2.MutateWorldObjectRequest.Mutation(action=3)
    delete.object.id = 1
    assert objects.mutate(delete, 0, {1})[0] == Response.STATUS_NO_PERMISSION


def test_a_region_in_vision_is_placed_in_odom_through_the_robots_vision_offset():
    objects = UserObjects()
    add = world_object_pb2.MutateWorldObjectRequest.Mutation(action=1)
    box = add.object.nogo_region_properties.box
    box.frame_name = "vision"
    box.box.size.x, box.box.size.y = 0.2, 4.0
    box.frame_name_tform_box.position.x = 3.0
    box.frame_name_tform_box.rotation.w = 1.0
    assert objects.mutate(add, 0, set())[0] == Response.STATUS_OK
    # odom_T_vision: vision's origin 1 m along odom x, turned 90 degrees.
    (region,) = objects.body_regions(0, Se2(1.0, 0.0, math.pi / 2))
    assert (region.centre.x, region.centre.y) == pytest.approx((1.0, 3.0))
    assert region.centre.yaw == pytest.approx(math.pi / 2)


def _tf(parent: str, child: str, x: float = 0.0, y: float = 0.0, yaw: float = 0.0,
        stamp: float = 100.0):
    from geometry_msgs.msg import TransformStamped

    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.header.stamp.sec, t.header.stamp.nanosec = int(stamp), int((stamp % 1) * 1e9)
    t.transform.translation.x, t.transform.translation.y = x, y
    t.transform.rotation.w, t.transform.rotation.z = math.cos(yaw / 2), math.sin(yaw / 2)
    return t


def test_tf_frames_are_looked_up_through_their_common_ancestor_and_pushed_as_drawables():
    from spot_driver.docking import frame_sync

    tree = frame_sync.TransformTree(prefix="spot1/")
    tree.update([_tf("spot1/odom", "spot1/body", x=1.0, yaw=math.pi / 2),
                 _tf("map", "spot1/odom", y=2.0), _tf("map", "goal", x=5.0, stamp=100.0)])
    tree.update([_tf("spot1/body", "marker", x=0.5, stamp=1.0)], static=True)
    marker = tree.lookup("odom", "marker", now=101.0)
    assert (marker.x, marker.y) == pytest.approx((1.0, 0.5))  # 0.5 ahead of a body facing +y
    goal = tree.lookup("odom", "goal", now=101.0)  # through map, above odom
    assert (goal.x, goal.y) == pytest.approx((5.0, -2.0))
    with pytest.raises(CommandError, match="s old"):
        tree.lookup("odom", "goal", now=100.0 + frame_sync.STALE_S + 1)
    assert tree.lookup("body", "marker", now=1e9).x == pytest.approx(0.5)  # static: never old
    with pytest.raises(CommandError, match="has not been heard"):
        tree.lookup("odom", "shelf", now=101.0)
    tree.update([_tf("elsewhere", "island", stamp=100.0)])
    with pytest.raises(CommandError, match="not connected"):
        tree.lookup("odom", "island", now=101.0)
    obj = frame_sync.drawable("marker", "odom", marker, acquired=101.0)
    assert obj.name == "marker" and obj.drawable_properties
    assert obj.object_lifetime.ToNanoseconds() == int(frame_sync.LIFETIME_S * 1e9)
    edge = obj.transforms_snapshot.child_to_parent_edge_map["marker"]
    assert edge.parent_frame_name == "odom" and edge.parent_tform_child.position.x == 1.0
    Request = frame_sync.world_object_pb2.MutateWorldObjectRequest
    assert frame_sync.mutation(obj, None).mutation.action == Request.ACTION_ADD
    change = frame_sync.mutation(obj, 42).mutation
    assert change.action == Request.ACTION_CHANGE and change.object.id == 42


def test_world_objects_are_seen_from_the_body_the_robot_state_reports():
    """A dance's body offset (sway, lean) moves the body frame in the robot's state; the world
    objects' snapshots put the body at the same place (they once left the offset out)."""
    from bosdyn.client.frame_helpers import get_a_tform_b

    from spot_sim.body.base import Base
    from spot_sim.body.robot import SimRobot
    from spot_sim.core.clock import RobotClock
    from spot_sim.core.config import SimConfig
    from spot_sim.docking.docking import Docking
    from spot_sim.docking.world import DockWorld
    robot, docks = SimRobot(SimConfig(), RobotClock()), DockWorld()
    Docking(robot, docks, 520)
    with robot.parts(Base) as (base,):
        base.offset = SE3Pose(0.05, -0.03, 0.02, Quat.from_yaw(0.2))
    state = robot.transforms_snapshot()
    objects = docks.seen_by(robot)
    assert objects
    for obj in objects:
        seen = get_a_tform_b(obj.transforms_snapshot, "vision", "body")
        reported = get_a_tform_b(state, "vision", "body")
        assert (seen.x, seen.y, seen.z) == pytest.approx((reported.x, reported.y, reported.z))
        assert seen.rot.to_yaw() == pytest.approx(reported.rot.to_yaw())
