"""Docking state and world objects as ROS messages (pure functions)."""

from bosdyn.api import world_object_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.client.frame_helpers import ValidateFrameTreeError, get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose
from geometry_msgs.msg import PoseStamped, TransformStamped

from spot_driver.conversions.time import robot_stamp_to_msg
from spot_msgs.msg import DockState, WorldObject, WorldObjectArray


def dock_state(state: docking_pb2.DockState, stamp) -> DockState:
    msg = DockState(status=state.status, dock_id=state.dock_id, dock_type=state.dock_type,
                    power_status=state.power_status)
    msg.header.stamp = stamp
    msg.status_name = docking_pb2.DockState.DockedStatus.Name(state.status)
    return msg


def _object_frame(obj: world_object_pb2.WorldObject) -> tuple[str, str, int]:
    """(type, frame name, fiducial id) of a dock or AprilTag object; ("", "", 0) otherwise."""
    if obj.HasField("dock_properties"):
        props = obj.dock_properties
        return WorldObject.TYPE_DOCK, props.frame_name_dock, props.dock_id
    if obj.HasField("apriltag_properties"):
        props = obj.apriltag_properties
        return WorldObject.TYPE_APRILTAG, props.frame_name_fiducial, props.tag_id
    return "", "", 0


def _nogo_pose(obj: world_object_pb2.WorldObject, root: str, world) -> tuple[object, tuple]:
    """(root_T_region, size) of a user no-go region; (None, ...) if it cannot be related."""
    props = obj.nogo_region_properties
    if props.WhichOneof("region") == "circle":
        shape, pose = props.circle, props.circle.frame_name_tform_circle
        centre = SE3Pose.from_proto(pose) * SE3Pose(shape.circle.center_pt.x,
                                                    shape.circle.center_pt.y, 0.0, Quat())
        size = (shape.circle.radius, shape.circle.radius)
    else:
        shape, pose = props.box, props.box.frame_name_tform_box
        centre, size = SE3Pose.from_proto(pose), (shape.box.size.x, shape.box.size.y)
    if world is None:
        return None, size
    try:
        root_tform_frame = get_a_tform_b(world, root, shape.frame_name)
    except ValidateFrameTreeError:
        return None, size
    return (root_tform_frame * centre if root_tform_frame is not None else None), size


def world_objects(objects, root: str, skew_nsec: int, prefix: str = "", world=None
                  ) -> tuple[WorldObjectArray, list[TransformStamped]]:
    """Docks, fiducials and user no-go regions as a WorldObjectArray, and the docks' and
    fiducials' transforms ``root`` -> object frame.

    ``root`` is the driver's tf_root (odom or vision); ``world`` (the robot state's frame
    tree) relates a no-go region's frame to it. Objects that cannot be related to ``root``
    are left out.
    """
    array = WorldObjectArray()
    array.header.frame_id = prefix + root
    transforms = []
    for obj in objects:
        kind, frame, fiducial_id = _object_frame(obj)
        size = (0.0, 0.0)
        if obj.HasField("nogo_region_properties"):
            kind = WorldObject.TYPE_USER_NOGO
            pose, size = _nogo_pose(obj, root, world)
        elif not frame:
            continue
        else:
            try:
                pose = get_a_tform_b(obj.transforms_snapshot, root, frame)
            except ValidateFrameTreeError:
                pose = None  # an empty or malformed snapshot
        if pose is None:
            continue
        stamp = robot_stamp_to_msg(obj.acquisition_time, skew_nsec)
        msg = WorldObject(id=obj.id, name=obj.name, type=kind, fiducial_id=fiducial_id,
                          frame_id=prefix + frame if frame else "")
        msg.size.x, msg.size.y = float(size[0]), float(size[1])
        msg.pose = PoseStamped()
        msg.pose.header.stamp, msg.pose.header.frame_id = stamp, prefix + root
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z = float(pose.x), float(pose.y), float(pose.z)
        q.w, q.x, q.y, q.z = (float(pose.rot.w), float(pose.rot.x), float(pose.rot.y),
                              float(pose.rot.z))
        array.objects.append(msg)
        array.header.stamp = stamp
        if not frame:
            continue
        transform = TransformStamped()
        transform.header = msg.pose.header
        transform.child_frame_id = prefix + frame
        t = transform.transform
        t.translation.x, t.translation.y, t.translation.z = p.x, p.y, p.z
        t.rotation = msg.pose.pose.orientation
        transforms.append(transform)
    return array, transforms
