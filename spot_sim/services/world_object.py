"""world-objects: the docks and fiducials the robot currently sees."""

from bosdyn.api import world_object_pb2, world_object_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError

from spot_sim import world
from spot_sim.clock import timestamp_to_nsec
from spot_sim.robot import SimRobot
from spot_sim.rpc import set_error, unary
from spot_sim.services import Served, ServiceSpec


class WorldObjectServicer(world_object_service_pb2_grpc.WorldObjectServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot, self.clock = robot, robot.clock

    @unary(world_object_pb2.ListWorldObjectResponse)
    def ListWorldObjects(self, request, response, context):
        objects = self.robot.world_objects()
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
        set_error(response, CommonError.CODE_INVALID_REQUEST,
                  "the simulated robot's world objects cannot be changed")


def spec() -> ServiceSpec:
    return ServiceSpec("world-objects", "bosdyn.api.WorldObjectService", "api.spot.robot",
                       world_object_service_pb2_grpc.add_WorldObjectServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: WorldObjectServicer(parts.robot)),)
