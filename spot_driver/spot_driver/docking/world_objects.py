"""Writing to the robot's world model: user no-go regions and any world object, built and
checked before anything is sent, and the robot's answers as sentences. Pure functions."""

import math

from bosdyn.api import geometry_pb2, world_object_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_driver.core.errors import CommandError
from spot_driver.core.proto_input import parse_one_form

Request = world_object_pb2.MutateWorldObjectRequest
Response = world_object_pb2.MutateWorldObjectResponse
ACTIONS = {"add": Request.ACTION_ADD, "change": Request.ACTION_CHANGE,
           "delete": Request.ACTION_DELETE}
TYPES = {"dock": world_object_pb2.WORLD_OBJECT_DOCK,
         "apriltag": world_object_pb2.WORLD_OBJECT_APRILTAG,
         "user_nogo": world_object_pb2.WORLD_OBJECT_USER_NOGO,
         "image_coordinates": world_object_pb2.WORLD_OBJECT_IMAGE_COORDINATES,
         "staircase": world_object_pb2.WORLD_OBJECT_STAIRCASE,
         "drawable": world_object_pb2.WORLD_OBJECT_DRAWABLE}
_REFUSALS = {
    Response.STATUS_INVALID_MUTATION_ID: "the robot has no world object {id}",
    Response.STATUS_NO_PERMISSION: "world object {id} is one the robot perceives: only objects "
                                   "added through the API can be changed or deleted",
    Response.STATUS_INVALID_WORLD_OBJECT: "the robot refused the world object as invalid",
}


def nogo_region(name: str, snapshot: geometry_pb2.FrameTreeSnapshot, frame: str,
                pose: SE3Pose, length: float, width: float, radius: float,
                lifetime_s: float, body: bool = True, foot: bool = True,
                foot_inflation: bool = True) -> world_object_pb2.WorldObject:
    """A user no-go region centred at ``pose`` in ``frame`` (any frame of the robot's tree),
    kept in odom: a box ``length`` x ``width`` m along the pose's axes, or a circle when
    ``radius`` > 0. CommandError for non-finite or non-positive sizes, an unknown frame or a
    region that is neither body nor foot obstacle."""
    numbers = {"length": length, "width": width, "radius": radius, "lifetime": lifetime_s,
               "pose": pose.x + pose.y + pose.z + pose.rot.w + pose.rot.x + pose.rot.y
               + pose.rot.z}
    bad = [name for name, value in numbers.items() if not math.isfinite(value)]
    if bad:
        raise CommandError(f"the no-go region's {', '.join(bad)} must be finite")
    if radius < 0 or lifetime_s < 0:
        raise CommandError("radius and lifetime must not be negative")
    if radius == 0 and (length <= 0 or width <= 0):
        raise CommandError(f"a box no-go region needs length and width > 0 m (got {length} x "
                           f"{width}); or give a radius for a circle")
    if not (body or foot):
        raise CommandError("a no-go region that is neither a body nor a foot obstacle does "
                           "nothing")
    known = snapshot.child_to_parent_edge_map
    if frame not in known:
        raise CommandError(f"unknown frame {frame!r} (frame_id); the robot knows "
                           f"{', '.join(sorted(known))}")
    odom_tform_centre = get_a_tform_b(snapshot, "odom", frame) * pose
    flat = SE3Pose(odom_tform_centre.x, odom_tform_centre.y, 0.0,
                   Quat.from_yaw(odom_tform_centre.rot.to_yaw()))
    obj = world_object_pb2.WorldObject(name=name or "nogo")
    if lifetime_s > 0:
        obj.object_lifetime.FromNanoseconds(int(lifetime_s * 1e9))
    props = obj.nogo_region_properties
    props.disable_body_obstacle_generation = not body
    props.disable_foot_obstacle_generation = not foot
    props.disable_foot_obstacle_inflation = not foot_inflation
    if radius > 0:
        props.circle.frame_name = "odom"
        props.circle.circle.radius = radius
        props.circle.frame_name_tform_circle.CopyFrom(flat.to_proto())
    else:
        props.box.frame_name = "odom"
        props.box.box.size.x, props.box.box.size.y = length, width
        props.box.frame_name_tform_box.CopyFrom(flat.to_proto())
    return obj


def mutation(action: str, serialized: bytes, text: str) -> Request:
    """A MutateWorldObjectRequest for ``action`` (add, change, delete) of the object given in
    exactly one of its serialized or text forms."""
    if action not in ACTIONS:
        raise CommandError(f"action {action!r} is not one of {', '.join(ACTIONS)}")
    obj = parse_one_form(world_object_pb2.WorldObject(), serialized, text,
                         ("object", "object_text"))
    if action != "add" and obj.id == 0:
        raise CommandError(f"{action} names the object by its id: set 'id'")
    return Request(mutation=Request.Mutation(action=ACTIONS[action], object=obj))


def mutated_id(response: Response, object_id: int) -> int:
    """The mutated object's id; CommandError with the robot's reason when it refused."""
    if response.status == Response.STATUS_OK:
        return response.mutated_object_id
    reason = _REFUSALS.get(response.status, "the robot refused the mutation ({status})")
    detail = response.header.error.message
    sentence = reason.format(id=object_id, status=Response.Status.Name(response.status))
    raise CommandError(f"{sentence}: {detail}" if detail else sentence)


def object_types(names: list[str]) -> list[int]:
    """World object types by name; CommandError for an unknown one."""
    unknown = sorted(set(names) - set(TYPES))
    if unknown:
        raise CommandError(f"unknown world object types {unknown}; the types are "
                           f"{', '.join(TYPES)}")
    return [TYPES[name] for name in names]
