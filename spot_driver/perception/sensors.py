"""The robot's image and point-cloud services, through the shared connection (the clients
change when the driver reconnects: ask for them at each use)."""

from bosdyn.api import image_pb2
from bosdyn.client.image import ImageClient
from bosdyn.client.point_cloud import PointCloudClient

from spot_driver.connection import RobotConnection


class RobotSensors:
    """Lists the robot's cameras and lidar sources and hands out their clients."""

    def __init__(self, connection: RobotConnection) -> None:
        self._connection = connection

    def image_client(self) -> ImageClient:
        return self._connection.client(ImageClient)

    def image_sources(self) -> dict[str, image_pb2.ImageSource]:
        return {s.name: s for s in self.image_client().list_image_sources(timeout=5.0)}

    def point_cloud_client(self, service: str) -> PointCloudClient:
        """The client of the point-cloud service ``service`` (a payload's, e.g.
        velodyne-point-cloud)."""
        return self._connection.client(PointCloudClient, service)

    def point_cloud_sources(self, service: str) -> list[str]:
        return [s.name for s in
                self.point_cloud_client(service).list_point_cloud_sources(timeout=5.0)]
