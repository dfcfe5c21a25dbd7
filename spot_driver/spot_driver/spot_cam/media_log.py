"""The Spot CAM's media log over the SDK's ``MediaLogClient``: stills stored from a named
camera (checked against the Spot CAM's own list first), listed, retrieved, tagged and
deleted; unknown logpoints are refused before anything is sent."""

from bosdyn.api.spot_cam import camera_pb2, logging_pb2
from bosdyn.client.spot_cam.media_log import MediaLogClient

from spot_driver.core.errors import CommandError
from spot_driver.spot_cam.clients import spot_cam_client

Logpoint = logging_pb2.Logpoint


class MediaLog:
    def __init__(self, connection) -> None:
        self._connection = connection

    def _client(self) -> MediaLogClient:
        return spot_cam_client(self._connection, MediaLogClient)

    def cameras(self) -> list[str]:
        return [camera.name for camera in self._client().list_cameras()]

    def store(self, camera: str, tag: str) -> Logpoint:
        cameras = self.cameras()
        if camera not in cameras:
            raise CommandError(f"unknown Spot CAM camera {camera!r}; cameras: "
                               f"{', '.join(cameras)}")
        return self._client().store(camera_pb2.Camera(name=camera), Logpoint.STILLIMAGE, tag)

    def points(self) -> list[Logpoint]:
        return list(self._client().list_logpoints())

    def _known(self, name: str) -> Logpoint:
        for point in self.points():
            if point.name == name:
                return point
        raise CommandError(f"no logpoint named {name!r} in the Spot CAM's media log")

    def retrieve(self, name: str, raw: bool) -> tuple[Logpoint, bytes]:
        """The logpoint (with the retrieved data's image format) and the data."""
        point = self._known(name)
        if point.status != Logpoint.COMPLETE:
            raise CommandError(f"logpoint {name!r} is {Logpoint.LogStatus.Name(point.status)}, "
                               "not yet COMPLETE")
        client = self._client()
        return client.retrieve_raw_data(point) if raw else client.retrieve(point)

    def tag(self, name: str, tag: str) -> None:
        point = self._known(name)
        point.tag = tag
        self._client().tag(point)

    def delete(self, name: str) -> None:
        self._client().delete(self._known(name))
