"""local-grid-service: the grid types the robot offers and the grids around it now (see
``spot_sim.autonomy.local_grids`` for what each holds)."""

from bosdyn.api import local_grid_pb2, local_grid_service_pb2_grpc
from bosdyn.client.frame_helpers import get_a_tform_b

from spot_sim.autonomy import local_grids
from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.perception.scene import Scene

_Response = local_grid_pb2.LocalGridResponse


class LocalGridServicer(local_grid_service_pb2_grpc.LocalGridServiceServicer):
    def __init__(self, robot: SimRobot, scene: Scene) -> None:
        self.robot, self.clock, self.scene = robot, robot.clock, scene

    @unary(local_grid_pb2.GetLocalGridTypesResponse)
    def GetLocalGridTypes(self, request, response, context):
        for name in local_grids.TYPES:
            response.local_grid_type.add(name=name)

    @unary(local_grid_pb2.GetLocalGridsResponse)
    def GetLocalGrids(self, request, response, context):
        snapshot = self.robot.transforms_snapshot()
        body = get_a_tform_b(snapshot, "odom", "body")
        stamp = self.clock.timestamp()
        for grid_request in request.local_grid_requests:
            name = grid_request.local_grid_type_name
            out = response.local_grid_responses.add(local_grid_type_name=name)
            if name not in local_grids.TYPES:
                out.status = _Response.STATUS_NO_SUCH_GRID
                response.num_local_grid_errors += 1
                continue
            out.local_grid.CopyFrom(local_grids.local_grid(self.scene, name, body.x, body.y,
                                                           snapshot, stamp))
            out.status = _Response.STATUS_OK


def spec() -> ServiceSpec:
    return ServiceSpec("local-grid-service", "bosdyn.api.LocalGridService", "api.spot.robot",
                       local_grid_service_pb2_grpc.add_LocalGridServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: LocalGridServicer(parts.robot,
                                                             parts.sensors.scene)),)
