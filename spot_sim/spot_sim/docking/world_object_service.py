"""world-objects: the docks and fiducials the robot currently sees, and the objects API
clients add, change and delete (user no-go regions among them: ``spot_sim/body/nogo.py``)."""

from bosdyn.api import world_object_pb2, world_object_service_pb2_grpc

from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.docking import world


class WorldObjectServicer(world_object_service_pb2_grpc.WorldObjectServiceServicer):
    def __init__(self, robot: SimRobot, dock_world: world.DockWorld) -> None:
        self.robot, self.clock, self.world = robot, robot.clock, dock_world

    @unary(world_object_pb2.ListWorldObjectResponse)
    def ListWorldObjects(self, request, response, context):
        now = self.clock.now_nsec()
        users = self.robot.user_objects(now)
        objects = self.world.seen_by(self.robot) + users
        kinds = set(request.object_type)
        newer_than = (timestamp_to_nsec(request.timestamp_filter)
                      if request.HasField("timestamp_filter") else None)
        for obj in objects:
            if kinds and world.object_kind(obj) not in kinds:
                continue
            if newer_than is not None and timestamp_to_nsec(obj.acquisition_time) < newer_than:
                continue
            response.world_objects.append(obj)

    @unary(world_object_pb2.MutateWorldObjectResponse)
    def MutateWorldObjects(self, request, response, context):
        perceived = {obj.id for obj in self.world.seen_by(self.robot)}
        now = self.clock.now_nsec()
        status, object_id, message = self.robot.mutate_user_objects(request.mutation, now,
                                                                   perceived)
        response.status, response.mutated_object_id = status, object_id
        if message:
            response.header.error.message = message


def spec() -> ServiceSpec:
    return ServiceSpec("world-objects", "bosdyn.api.WorldObjectService", "api.spot.robot",
                       world_object_service_pb2_grpc.add_WorldObjectServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: WorldObjectServicer(parts.robot, parts.world)),)
