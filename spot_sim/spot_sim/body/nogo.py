"""World objects added through the API (MutateWorldObjects) and the user no-go regions among
them: body obstacles the robot's footprint does not enter. A plain part of the robot (its
lock guards it).

Spot's body is 1100 x 500 mm (Boston Dynamics' published dimensions); the footprint is that
rectangle around ``body``. Objects expire ``object_lifetime`` after their acquisition time
(when they were added, if none); without a lifetime the service's default applies.
"""

import math
from dataclasses import dataclass

from bosdyn.api import world_object_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from spot_sim.body.mobility import Se2, compose
from spot_sim.core.clock import timestamp_to_nsec

BODY_HALF_LENGTH, BODY_HALF_WIDTH = 0.55, 0.25  # m
DEFAULT_LIFETIME_S = 60.0  # [ours: the API says only "a default time set in the service"]
FIRST_ID = 5000  # user objects' ids, apart from the docks' and fiducials'
WORLD_FRAMES = ("vision", "odom")
Response = world_object_pb2.MutateWorldObjectResponse
Request = world_object_pb2.MutateWorldObjectRequest


@dataclass(frozen=True)
class Region:
    """A body obstacle in odom: a box (centre, yaw, half sizes) or a circle (radius)."""

    centre: Se2
    half_x: float = 0.0
    half_y: float = 0.0
    radius: float = 0.0

    def meets(self, body: Se2) -> bool:
        """Whether the robot's footprint at ``body`` overlaps the region."""
        if self.radius:
            return _rectangle_meets_circle(body, BODY_HALF_LENGTH, BODY_HALF_WIDTH,
                                           self.centre, self.radius)
        return _rectangles_meet(body, (BODY_HALF_LENGTH, BODY_HALF_WIDTH), self.centre,
                                (self.half_x, self.half_y))


def _corners(pose: Se2, half: tuple[float, float]) -> list[tuple[float, float]]:
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    return [(pose.x + c * dx * half[0] - s * dy * half[1],
             pose.y + s * dx * half[0] + c * dy * half[1])
            for dx, dy in ((1, 1), (1, -1), (-1, -1), (-1, 1))]


def _rectangles_meet(a: Se2, a_half: tuple[float, float], b: Se2,
                     b_half: tuple[float, float]) -> bool:
    """Separating-axis test of two rotated rectangles."""
    corners_a, corners_b = _corners(a, a_half), _corners(b, b_half)
    for yaw in (a.yaw, a.yaw + math.pi / 2, b.yaw, b.yaw + math.pi / 2):
        axis = (math.cos(yaw), math.sin(yaw))
        pa = [x * axis[0] + y * axis[1] for x, y in corners_a]
        pb = [x * axis[0] + y * axis[1] for x, y in corners_b]
        if max(pa) < min(pb) or max(pb) < min(pa):
            return False
    return True


def _rectangle_meets_circle(pose: Se2, half_x: float, half_y: float, centre: Se2,
                            radius: float) -> bool:
    dx, dy = centre.x - pose.x, centre.y - pose.y
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    local_x, local_y = c * dx + s * dy, -s * dx + c * dy
    nearest_x = max(-half_x, min(half_x, local_x))
    nearest_y = max(-half_y, min(half_y, local_y))
    return math.hypot(local_x - nearest_x, local_y - nearest_y) < radius


def nogo_refusal(props: world_object_pb2.NoGoRegionProperties) -> str:
    """Why the robot refuses a no-go region ("" if it does not)."""
    which = props.WhichOneof("region")
    if which is None:
        return "a no-go region needs a box or a circle"
    shape = getattr(props, which)
    if shape.frame_name not in WORLD_FRAMES:
        return (f"no-go regions may only be defined in the vision or odom frame, not "
                f"{shape.frame_name!r}")
    pose = shape.frame_name_tform_box if which == "box" else shape.frame_name_tform_circle
    values = [pose.position.x, pose.position.y, pose.position.z, pose.rotation.w,
              pose.rotation.x, pose.rotation.y, pose.rotation.z]
    sizes = [shape.box.size.x, shape.box.size.y] if which == "box" else \
        [shape.circle.radius, shape.circle.center_pt.x, shape.circle.center_pt.y]
    if not all(math.isfinite(v) for v in values + sizes):
        return "the no-go region's pose and size must be finite"
    if (which == "box" and min(sizes) <= 0.0) or (which == "circle" and sizes[0] <= 0.0):
        return "the no-go region's size must be positive"
    return ""


def _yaw(rotation) -> float:
    w, x, y, z = rotation.w, rotation.x, rotation.y, rotation.z
    if not (w or x or y or z):
        return 0.0
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def region_in_frame(props: world_object_pb2.NoGoRegionProperties) -> tuple[str, Region]:
    """(frame, the region in that frame) of a valid no-go region."""
    if props.WhichOneof("region") == "box":
        box = props.box
        pose = box.frame_name_tform_box
        return box.frame_name, Region(Se2(pose.position.x, pose.position.y, _yaw(pose.rotation)),
                                      half_x=box.box.size.x / 2, half_y=box.box.size.y / 2)
    circle = props.circle
    pose = circle.frame_name_tform_circle
    centre = compose(Se2(pose.position.x, pose.position.y, _yaw(pose.rotation)),
                     Se2(circle.circle.center_pt.x, circle.circle.center_pt.y, 0.0))
    return circle.frame_name, Region(centre, radius=circle.circle.radius)


class UserObjects:
    """The world objects API clients added, by id."""

    def __init__(self) -> None:
        self.objects: dict[int, world_object_pb2.WorldObject] = {}
        self._next_id = FIRST_ID

    def mutate(self, mutation: Request.Mutation, now_ns: int,
               robot_ids: set[int]) -> tuple[int, int, str]:
        """(status, object id, message) of one mutation; ``robot_ids`` are the objects the
        robot's own perception reports (not changeable)."""
        self.expire(now_ns)
        obj = mutation.object
        if mutation.action == Request.ACTION_ADD:
            problem = self._refusal(obj)
            if problem:
                return Response.STATUS_INVALID_WORLD_OBJECT, 0, problem
            object_id, self._next_id = self._next_id, self._next_id + 1
            self.objects[object_id] = self._stored(obj, object_id, now_ns)
            return Response.STATUS_OK, object_id, ""
        if mutation.action not in (Request.ACTION_CHANGE, Request.ACTION_DELETE):
            return Response.STATUS_INVALID_WORLD_OBJECT, 0, "unknown mutation action"
        if obj.id in robot_ids:
            return Response.STATUS_NO_PERMISSION, obj.id, \
                "objects the robot perceives cannot be changed or deleted"
        if obj.id not in self.objects:
            return Response.STATUS_INVALID_MUTATION_ID, obj.id, f"no world object {obj.id}"
        if mutation.action == Request.ACTION_DELETE:
            del self.objects[obj.id]
            return Response.STATUS_OK, obj.id, ""
        problem = self._refusal(obj)
        if problem:
            return Response.STATUS_INVALID_WORLD_OBJECT, obj.id, problem
        self.objects[obj.id] = self._stored(obj, obj.id, now_ns)
        return Response.STATUS_OK, obj.id, ""

    @staticmethod
    def _refusal(obj: world_object_pb2.WorldObject) -> str:
        if obj.HasField("nogo_region_properties"):
            return nogo_refusal(obj.nogo_region_properties)
        if obj.HasField("object_lifetime") and obj.object_lifetime.seconds < 0:
            return "object_lifetime must not be negative"
        return ""

    @staticmethod
    def _stored(obj: world_object_pb2.WorldObject, object_id: int,
                now_ns: int) -> world_object_pb2.WorldObject:
        stored = world_object_pb2.WorldObject()
        stored.CopyFrom(obj)
        stored.id = object_id
        if not stored.HasField("acquisition_time"):
            stamp = Timestamp()
            stamp.FromNanoseconds(now_ns)
            stored.acquisition_time.CopyFrom(stamp)
        if not stored.HasField("object_lifetime"):
            stored.object_lifetime.FromNanoseconds(int(DEFAULT_LIFETIME_S * 1e9))
        return stored

    def expire(self, now_ns: int) -> None:
        for object_id, obj in list(self.objects.items()):
            ends = timestamp_to_nsec(obj.acquisition_time) + obj.object_lifetime.ToNanoseconds()
            if ends < now_ns:
                del self.objects[object_id]

    def live(self, now_ns: int) -> list[world_object_pb2.WorldObject]:
        self.expire(now_ns)
        return list(self.objects.values())

    def body_regions(self, now_ns: int, odom_tform_vision: Se2) -> list[Region]:
        """The body obstacles of the live no-go regions, in odom."""
        regions = []
        for obj in self.live(now_ns):
            props = obj.nogo_region_properties
            if not obj.HasField("nogo_region_properties") or \
                    props.disable_body_obstacle_generation:
                continue
            frame, region = region_in_frame(props)
            if frame == "vision":
                region = Region(compose(odom_tform_vision, region.centre), region.half_x,
                                region.half_y, region.radius)
            regions.append(region)
        return regions
