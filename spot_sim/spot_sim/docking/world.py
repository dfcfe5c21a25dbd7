"""Objects in the simulated world the robot can perceive: docks and their fiducials.

A dock is placed by the body pose of a robot sitting on it (``odom`` coordinates, the robot
facing away from the dock). Its fiducial (AprilTag) is on the dock's back plate, facing the
robot. The robot "sees" a dock when it is within ``VIEW_RANGE`` of it: five body cameras give
Spot a view all around.
"""

import math
from dataclasses import dataclass

from bosdyn.api import geometry_pb2, world_object_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim.body import mobility
from spot_sim.body.mobility import Se2
from spot_sim.body.robot import SimRobot

VIEW_RANGE = 4.0  # m
PREP_DISTANCE = 1.0  # m in front of the dock
TAG_SIZE = 0.16  # m, the fiducial's edge
# dock_T_fiducial: on the back plate, 0.45 m up, the tag's +z (its normal) along the dock's +x.
DOCK_TFORM_FIDUCIAL = SE3Pose(-0.45, 0.0, 0.45, Quat.from_pitch(math.pi / 2))
# Fiducial ids the robot treats as docks, as GetDockingConfig reports them.
DOCK_ID_RANGES = ((520, 539, docking_pb2.DOCK_TYPE_SPOT_DOCK),)


@dataclass(frozen=True)
class Dock:
    """One dock: its fiducial id and the body pose (odom) of a robot docked on it."""

    dock_id: int
    pose: Se2

    @property
    def prep_pose(self) -> Se2:
        """Where the robot stands before backing onto the dock."""
        return mobility.compose(self.pose, Se2(PREP_DISTANCE, 0.0, 0.0))

    @property
    def dock_type(self) -> int:
        return dock_type(self.dock_id)


def dock_type(dock_id: int) -> int:
    """The type of dock a fiducial id denotes, or DOCK_TYPE_UNKNOWN outside the ranges."""
    for start, end, kind in DOCK_ID_RANGES:
        if start <= dock_id <= end:
            return kind
    return docking_pb2.DOCK_TYPE_UNKNOWN


DEFAULT_DOCKS = (Dock(520, Se2(-2.0, -1.5, 0.0)), Dock(521, Se2(4.5, 4.5, math.pi)))


class DockWorld:
    """The docks placed in one simulated world, each with ids its world objects keep for the
    robot's lifetime. Immutable: anyone may read it without a lock."""

    def __init__(self, docks: tuple[Dock, ...] = DEFAULT_DOCKS) -> None:
        self.docks = {dock.dock_id: dock for dock in docks}
        self._object_ids = {dock_id: 1 + 2 * index
                            for index, dock_id in enumerate(sorted(self.docks))}

    def seen_by(self, robot: SimRobot) -> list[world_object_pb2.WorldObject]:
        """The docks and fiducials in ``robot``'s view now, as ListWorldObjects reports them:
        seen from the body where the robot's state puts it (a dance's offset included)."""
        odom_tform_body, vision_tform_body = robot.body_poses()
        return world_objects(tuple(self.docks.values()), odom_tform_body, vision_tform_body,
                             robot.odom_body(), robot.clock.timestamp(), self._object_ids)


def in_view(body: Se2, dock: Dock) -> bool:
    return math.hypot(dock.pose.x - body.x, dock.pose.y - body.y) <= VIEW_RANGE


def _dock_pose_3d(dock: Dock) -> SE3Pose:
    return SE3Pose(dock.pose.x, dock.pose.y, 0.0, Quat.from_yaw(dock.pose.yaw))


def world_objects(docks: tuple[Dock, ...], odom_tform_body: SE3Pose, vision_tform_body: SE3Pose,
                  body: Se2, timestamp, object_ids: dict[int, int]
                  ) -> list[world_object_pb2.WorldObject]:
    """A dock world object (dock and fiducial frames, parent ``vision``) per dock in view,
    plus an AprilTag world object for its fiducial, as ListWorldObjects reports them."""
    objects = []
    vision_tform_odom = vision_tform_body * odom_tform_body.inverse()
    for dock in docks:
        if not in_view(body, dock):
            continue
        dock_frame, tag_frame = f"dock_{dock.dock_id}", f"fiducial_{dock.dock_id}"
        vision_tform_dock = vision_tform_odom * _dock_pose_3d(dock)
        snapshot = geometry_pb2.FrameTreeSnapshot()
        for child, parent, pose in (
                ("body", "", None),
                ("vision", "body", vision_tform_body.inverse()),
                ("odom", "body", odom_tform_body.inverse()),
                (dock_frame, "vision", vision_tform_dock),
                (tag_frame, "vision", vision_tform_dock * DOCK_TFORM_FIDUCIAL),
                (f"filtered_{tag_frame}", "vision", vision_tform_dock * DOCK_TFORM_FIDUCIAL)):
            edge = snapshot.child_to_parent_edge_map[child]
            edge.parent_frame_name = parent
            if pose is not None:
                edge.parent_tform_child.CopyFrom(pose.to_proto())
        dock_object = world_object_pb2.WorldObject(
            id=object_ids[dock.dock_id], name=f"world_obj_dock_{dock.dock_id}",
            acquisition_time=timestamp, transforms_snapshot=snapshot)
        dock_object.dock_properties.dock_id = dock.dock_id
        dock_object.dock_properties.type = dock.dock_type
        dock_object.dock_properties.frame_name_dock = dock_frame
        tag_object = world_object_pb2.WorldObject(
            id=object_ids[dock.dock_id] + 1, name=f"world_obj_apriltag_{dock.dock_id}",
            acquisition_time=timestamp, transforms_snapshot=snapshot)
        tag = tag_object.apriltag_properties
        tag.tag_id = dock.dock_id
        tag.dimensions.x = tag.dimensions.y = TAG_SIZE
        tag.frame_name_fiducial = tag_frame
        tag.frame_name_fiducial_filtered = f"filtered_{tag_frame}"
        tag.fiducial_pose_status = tag.STATUS_OK
        tag.fiducial_filtered_pose_status = tag.STATUS_OK
        objects.extend((dock_object, tag_object))
    return objects


def object_kind(obj: world_object_pb2.WorldObject) -> int:
    for field, kind in (("dock_properties", world_object_pb2.WORLD_OBJECT_DOCK),
                        ("nogo_region_properties", world_object_pb2.WORLD_OBJECT_USER_NOGO),
                        ("apriltag_properties", world_object_pb2.WORLD_OBJECT_APRILTAG),
                        ("image_properties", world_object_pb2.WORLD_OBJECT_IMAGE_COORDINATES),
                        ("staircase_properties", world_object_pb2.WORLD_OBJECT_STAIRCASE)):
        if obj.HasField(field):
            return kind
    return world_object_pb2.WORLD_OBJECT_DRAWABLE if obj.drawable_properties else \
        world_object_pb2.WORLD_OBJECT_UNKNOWN
