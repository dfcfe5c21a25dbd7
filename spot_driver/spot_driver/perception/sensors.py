"""The robot's image and point-cloud services, through the shared connection (the clients
change when the driver reconnects: ask for them at each use)."""

from bosdyn.api import gripper_camera_param_pb2, image_pb2
from bosdyn.client.gripper_camera_param import GripperCameraParamClient
from bosdyn.client.image import ImageClient
from bosdyn.client.point_cloud import PointCloudClient
from bosdyn.client.robot import UnregisteredServiceNameError

from spot_driver.core.connection import RobotConnection
from spot_driver.core.errors import CommandError


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

    def _gripper_camera(self) -> GripperCameraParamClient:
        try:
            return self._connection.client(GripperCameraParamClient)
        except UnregisteredServiceNameError as exc:
            raise CommandError(f"this robot has no gripper camera (its directory lists no "
                               f"{exc} service)") from exc

    def gripper_camera_params(self) -> gripper_camera_param_pb2.GripperCameraParams:
        return self._gripper_camera().get_camera_params(
            gripper_camera_param_pb2.GripperCameraGetParamRequest(), timeout=5.0).params

    def set_gripper_camera_params(self, params: gripper_camera_param_pb2.GripperCameraParams
                                  ) -> gripper_camera_param_pb2.GripperCameraParams:
        """Set ``params`` (checked by the caller); the settings after the change."""
        self._gripper_camera().set_camera_params(
            gripper_camera_param_pb2.GripperCameraParamRequest(params=params), timeout=5.0)
        return self.gripper_camera_params()
