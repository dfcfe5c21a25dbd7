"""point-cloud (standard name) and velodyne-point-cloud (the lidar payload's own name): the
lidar's scans of the scene, in the configured encoding. One servicer answers both names (one
gRPC service type per server); without a lidar it lists no source."""

from bosdyn.api import point_cloud_pb2, point_cloud_service_pb2_grpc
from bosdyn.client.frame_helpers import get_a_tform_b

from spot_sim.body.frame_tree import sensor_view
from spot_sim.body.robot import SimRobot
from spot_sim.core.field import Captures, Draw
from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.perception.render_pool import RendersStoppedError
from spot_sim.perception.sensors import Sensors
from spot_sim.perception.sources import LIDAR_FRAME, LIDAR_SOURCE

_Response = point_cloud_pb2.PointCloudResponse


class PointCloudServicer(point_cloud_service_pb2_grpc.PointCloudServiceServicer):
    def __init__(self, robot: SimRobot, sensors: Sensors, has_lidar: bool = True) -> None:
        self.robot, self.clock, self.sensors = robot, robot.clock, sensors
        self.has_lidar = has_lidar
        self._draw = Draw(robot.config.field, "point_cloud")
        self._captures = Captures()

    def _source(self) -> point_cloud_pb2.PointCloudSource:
        return point_cloud_pb2.PointCloudSource(name=LIDAR_SOURCE, frame_name_sensor=LIDAR_FRAME)

    @unary(point_cloud_pb2.ListPointCloudSourcesResponse)
    def ListPointCloudSources(self, request, response, context):
        if self.has_lidar:
            response.point_cloud_sources.append(self._source())

    @unary(point_cloud_pb2.GetPointCloudResponse)
    def GetPointCloud(self, request, response, context):
        snapshot = self.robot.transforms_snapshot()
        age = self._draw.uniform(self.robot.config.field.capture_delay)
        stamp = self.clock.timestamp(self._captures.acquired(LIDAR_SOURCE, self.clock.now_nsec(),
                                                             age))
        for cloud_request in request.point_cloud_requests:
            out = response.point_cloud_responses.add()
            if not self.has_lidar or cloud_request.point_cloud_source_name != LIDAR_SOURCE:
                out.status = _Response.STATUS_UNKNOWN_SOURCE
                continue
            try:
                cloud = self.sensors.lidar_cloud(get_a_tform_b(snapshot, "odom", LIDAR_FRAME))
            except RendersStoppedError:  # a request in flight as the robot stops
                out.status = _Response.STATUS_POINT_CLOUD_DATA_ERROR
                continue
            cloud.source.CopyFrom(self._source())
            cloud.source.acquisition_time.CopyFrom(stamp)
            cloud.source.transforms_snapshot.CopyFrom(sensor_view(snapshot, LIDAR_FRAME))
            out.point_cloud.CopyFrom(cloud)
            out.status = _Response.STATUS_OK


def spec() -> ServiceSpec:
    return ServiceSpec("point-cloud", "bosdyn.api.PointCloudService", "api.spot.robot",
                       point_cloud_service_pb2_grpc.add_PointCloudServiceServicer_to_server)


def lidar_spec() -> ServiceSpec:
    """The lidar payload's name: a directory entry for the point-cloud servicer."""
    return ServiceSpec(LIDAR_SOURCE, "bosdyn.api.PointCloudService", f"{LIDAR_SOURCE}.spot.robot",
                       lambda servicer, server: None)


SERVICES = (
    Served(spec(), lambda parts: PointCloudServicer(parts.robot, parts.sensors,
                                                    parts.config.has_lidar)),
    Served(lidar_spec(), lambda parts: parts.servicer(PointCloudServicer), hardware="lidar"),
)
