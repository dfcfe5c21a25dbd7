"""Docking state and world objects as ROS messages (pure functions)."""

from bosdyn.api import world_object_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.client.frame_helpers import ValidateFrameTreeError, get_a_tform_b
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


def world_objects(objects, root: str, skew_nsec: int, prefix: str = ""
                  ) -> tuple[WorldObjectArray, list[TransformStamped]]:
    """Docks and fiducials as a WorldObjectArray and as transforms ``root`` -> object frame.

    ``root`` is the driver's tf_root (odom or vision); objects whose frame cannot be related
    to it are left out.
    """
    array = WorldObjectArray()
    array.header.frame_id = prefix + root
    transforms = []
    for obj in objects:
        kind, frame, fiducial_id = _object_frame(obj)
        if not frame:
            continue
        try:
            pose = get_a_tform_b(obj.transforms_snapshot, root, frame)
        except ValidateFrameTreeError:
            pose = None  # an empty or malformed snapshot
        if pose is None:
            continue
        stamp = robot_stamp_to_msg(obj.acquisition_time, skew_nsec)
        msg = WorldObject(id=obj.id, name=obj.name, type=kind, fiducial_id=fiducial_id,
                          frame_id=prefix + frame)
        msg.pose = PoseStamped()
        msg.pose.header.stamp, msg.pose.header.frame_id = stamp, prefix + root
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z = float(pose.x), float(pose.y), float(pose.z)
        q.w, q.x, q.y, q.z = (float(pose.rot.w), float(pose.rot.x), float(pose.rot.y),
                              float(pose.rot.z))
        array.objects.append(msg)
        array.header.stamp = stamp
        transform = TransformStamped()
        transform.header = msg.pose.header
        transform.child_frame_id = prefix + frame
        t = transform.transform
        t.translation.x, t.translation.y, t.translation.z = p.x, p.y, p.z
        t.rotation = msg.pose.pose.orientation
        transforms.append(transform)
    return array, transforms
