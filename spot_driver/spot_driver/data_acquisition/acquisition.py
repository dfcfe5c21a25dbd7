"""Capture requests over the SDK's ``DataAcquisitionClient``: names are checked against the
robot's own capabilities before anything is sent, metadata must be a JSON object, and a
request is followed (``CaptureTask``) until the robot says it is complete."""

import json

from bosdyn.api import data_acquisition_pb2
from bosdyn.client.data_acquisition import DataAcquisitionClient
from bosdyn.client.image import build_image_request

from spot_driver.core.errors import CommandError
from spot_driver.core.follower import Progress, RobotTask

Status = data_acquisition_pb2.GetStatusResponse
DONE = {Status.STATUS_COMPLETE, Status.STATUS_DATA_ERROR, Status.STATUS_TIMEDOUT,
        Status.STATUS_INTERNAL_ERROR, Status.STATUS_ACQUISITION_CANCELLED,
        Status.STATUS_REQUEST_ID_DOES_NOT_EXIST}
IMAGE_SERVICE = "image"


def build_request(data_sources: set[str], image_sources: set[str],
                  names: list[str]) -> data_acquisition_pb2.AcquisitionRequestList:
    """The request for ``names`` (data sources, then camera sources); CommandError for a
    name the robot has neither of, or for no names."""
    if not names:
        raise CommandError("name at least one capture (data_acquisition/list_sources)")
    request = data_acquisition_pb2.AcquisitionRequestList()
    for name in names:
        if name in data_sources:
            request.data_captures.add(name=name)
        elif name in image_sources:
            request.image_captures.add(image_service=IMAGE_SERVICE,
                                       image_request=build_image_request(name))
        else:
            raise CommandError(f"unknown capture {name!r}; this robot captures "
                               f"{', '.join(sorted(data_sources | image_sources))}")
    return request


def parse_metadata(text: str) -> dict | None:
    """``metadata_json`` as a dict (None when empty); CommandError unless a JSON object."""
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"metadata_json is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CommandError("metadata_json must be a JSON object")
    return value


class DataAcquisition:
    def __init__(self, connection) -> None:
        self._connection = connection

    def client(self) -> DataAcquisitionClient:
        return self._connection.client(DataAcquisitionClient)

    def sources(self) -> tuple[dict[str, str], set[str]]:
        """Data sources (name -> description) and camera image sources."""
        capabilities = self.client().get_service_info()
        images = {name for group in capabilities.image_sources
                  if group.service_name == IMAGE_SERVICE for name in group.image_source_names}
        return {s.name: s.description for s in capabilities.data_sources}, images

    def task(self, action_name: str, group_name: str, names: list[str],
             metadata_json: str) -> "CaptureTask":
        if not action_name or not group_name:
            raise CommandError("a capture needs an action_name and a group_name")
        metadata = parse_metadata(metadata_json)
        data, images = self.sources()
        request = build_request(set(data), images, list(names))
        return CaptureTask(self.client(), request, action_name, group_name, metadata)


class CaptureTask(RobotTask):
    """One AcquireData request, followed until the robot reports it complete (or failed)."""

    name = "capture"
    timeout = 120.0
    canceled_message = "canceled: the robot cancelled the capture"

    def __init__(self, client, request, action_name, group_name, metadata) -> None:
        self._client, self._request = client, request
        self._action, self._group, self._metadata = action_name, group_name, metadata
        self.request_id: int | None = None

    def start(self) -> None:
        self.request_id = self._client.acquire_data(self._request, self._action, self._group,
                                                    metadata=self._metadata)

    def poll(self) -> Progress:
        response = self._client.get_status(self.request_id)
        status = Status.Status.Name(response.status)
        progress = Progress(status=status, feedback={"status": status,
                                                     "saved": len(response.data_saved)})
        if response.status in DONE:
            progress.done = True
            progress.ok = response.status == Status.STATUS_COMPLETE
            errors = "; ".join(e.error_message for e in response.data_errors)
            progress.message = (f"{len(response.data_saved)} items saved" if progress.ok
                                else f"the capture ended {status}" + (f": {errors}" if errors
                                                                      else ""))
            progress.values = {"saved": list(response.data_saved)}
        return progress

    def stop(self) -> None:
        if self.request_id is not None:
            self._client.cancel_acquisition(self.request_id)
