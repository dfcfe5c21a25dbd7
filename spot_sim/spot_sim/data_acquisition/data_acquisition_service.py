"""data-acquisition and data-acquisition-store: capture requests over the robot's own
sources (``spot_sim.data_acquisition``) — its cameras, robot state, positions, the lidar
and the Spot CAM when fitted — stored and queried as the SDK's ``DataAcquisitionClient``,
``DataAcquisitionStoreClient`` and the mission's DataAcquisition node use them."""

import numpy as np
import simplejpeg
from bosdyn.api import (
    data_acquisition_pb2,
    data_acquisition_service_pb2_grpc,
    data_acquisition_store_pb2,
    data_acquisition_store_service_pb2_grpc,
    image_pb2,
    world_object_pb2,
)
from bosdyn.api.header_pb2 import CommonError
from bosdyn.client import data_chunk
from bosdyn.client.frame_helpers import get_a_tform_b
from google.protobuf import json_format

from spot_sim.core.rpc import CHUNK_BYTES, set_error, stamped, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.data_acquisition.acquisitions import Acquisitions, Source, UnknownCaptureError
from spot_sim.data_acquisition.plugins import Plugins
from spot_sim.data_acquisition.store import DATA, IMAGE, METADATA, CaptureStore
from spot_sim.perception.image_service import ImageServicer
from spot_sim.perception.sources import LIDAR_FRAME, LIDAR_SOURCE
from spot_sim.spot_cam.media_log_service import MediaLogServicer
from spot_sim.state import state_report

Image = image_pb2.Image
SPOT_CAM_S = 1.0


def _json(message) -> tuple[str, tuple[bytes, str]]:
    return DATA, (json_format.MessageToJson(message).encode(), ".json")


def _sources(parts) -> dict[str, Source]:
    robot = parts.robot
    sources = [
        Source("robot-state", "the robot's state (JSON)", Acquisitions.DATA_S,
               lambda: _json(state_report.robot_state(robot))),
        Source("detailed-position-data", "the body's kinematic state: joints, frames, "
               "velocities (JSON)", Acquisitions.DATA_S,
               lambda: _json(state_report.robot_state(robot).kinematic_state)),
        Source("basic-position-data", "the frame tree: odom, vision and body (JSON)",
               Acquisitions.DATA_S, lambda: _json(robot.transforms_snapshot())),
        Source("detected-objects", "the world objects the robot sees: docks, fiducials (JSON)",
               Acquisitions.DATA_S, lambda: _json(world_object_pb2.ListWorldObjectResponse(
                   world_objects=parts.world.seen_by(robot)))),
    ]
    if parts.config.has_lidar:
        def cloud():
            pose = get_a_tform_b(robot.transforms_snapshot(), "odom", LIDAR_FRAME)
            return DATA, (parts.sensors.lidar_cloud(pose).SerializeToString(), ".pb")
        sources.append(Source(LIDAR_SOURCE, "a lidar scan (bosdyn.api.PointCloud)",
                              Acquisitions.DATA_S, cloud))
    if parts.config.has_spot_cam:
        media = parts.servicer(MediaLogServicer)
        for camera in ("pano", "ptz", "ir"):
            sources.append(Source(f"spot-cam-{camera}", f"a Spot CAM {camera} still (JPEG)",
                                  SPOT_CAM_S, lambda camera=camera: _spot_cam(media, camera)))
    return {source.name: source for source in sources}


def _spot_cam(media, camera_name: str):
    """A Spot CAM still as an ImageCapture, JPEG as the robot stores them."""
    camera, still = media.still_now(camera_name)
    data = still.data
    if data[:2] != b"\xff\xd8":
        rgb = np.frombuffer(data, np.uint8).reshape(camera.rows, camera.cols, 3)
        data = simplejpeg.encode_jpeg(np.ascontiguousarray(rgb), 90)
    shot = image_pb2.ImageCapture(frame_name_image_sensor="body")
    shot.image.CopyFrom(Image(cols=camera.cols, rows=camera.rows, format=Image.FORMAT_JPEG,
                              pixel_format=Image.PIXEL_FORMAT_RGB_U8, data=data))
    return IMAGE, shot


class DataAcquisitionServicer(data_acquisition_service_pb2_grpc.DataAcquisitionServiceServicer):
    def __init__(self, parts) -> None:
        self.clock, self.robot = parts.clock, parts.robot
        self.images = parts.servicer(ImageServicer)
        self.store = parts.captures
        self.plugins = Plugins(parts.directory)
        self.acquisitions = Acquisitions(self.store, _sources(parts), self._image, self.plugins)

    def _image(self, capture) -> tuple[str, image_pb2.ImageCapture]:
        if capture.image_service != "image":
            raise UnknownCaptureError(f"no image service {capture.image_service!r}; this "
                                      "robot's cameras are on 'image'")
        request = image_pb2.ImageRequest()
        if capture.HasField("image_request"):
            request.CopyFrom(capture.image_request)
        else:
            request.image_source_name = capture.image_source
            request.pixel_format = capture.pixel_format
        answer = self.images.GetImage(image_pb2.GetImageRequest(image_requests=[request]), None)
        response = answer.image_responses[0]
        if response.status != image_pb2.ImageResponse.STATUS_OK:
            raise UnknownCaptureError(f"image source {request.image_source_name!r}: "
                                      f"{image_pb2.ImageResponse.Status.Name(response.status)}")
        return request.image_source_name, response.shot

    @unary(data_acquisition_pb2.GetServiceInfoResponse)
    def GetServiceInfo(self, request, response, context):
        capabilities = response.capabilities
        for source in self.acquisitions.sources.values():
            capabilities.data_sources.add(name=source.name, description=source.description,
                                          channel_name=source.name,
                                          service_name="data-acquisition")
        for name, offered in self.plugins.capabilities():
            for source in offered.data_sources:
                capabilities.data_sources.add().CopyFrom(source)
                capabilities.data_sources[-1].service_name = name
        cameras = capabilities.image_sources.add(service_name="image")
        sources = self.images.ListImageSources(image_pb2.ListImageSourcesRequest(), None)
        cameras.image_sources.extend(sources.image_sources)
        cameras.image_source_names.extend(s.name for s in sources.image_sources)

    @unary(data_acquisition_pb2.AcquireDataResponse)
    def AcquireData(self, request, response, context):
        action_id = data_acquisition_pb2.CaptureActionId()
        action_id.CopyFrom(request.action_id)
        if not action_id.action_name or not action_id.group_name:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "a capture action needs an action name and a group name")
            return
        if not action_id.HasField("timestamp"):
            action_id.timestamp.CopyFrom(self.clock.timestamp())
        try:
            response.request_id = self.acquisitions.start(
                action_id, request.acquisition_requests, request.metadata)
            response.status = response.STATUS_OK
        except UnknownCaptureError as refused:
            response.status = response.STATUS_UNKNOWN_CAPTURE_TYPE
            response.header.error.message = str(refused)

    @unary(data_acquisition_pb2.GetStatusResponse)
    def GetStatus(self, request, response, context):
        self.acquisitions.status(request.request_id, response)

    @unary(data_acquisition_pb2.CancelAcquisitionResponse)
    def CancelAcquisition(self, request, response, context):
        response.status = self.acquisitions.cancel(request.request_id)

    @unary(data_acquisition_pb2.LiveDataResponse)
    def GetLiveData(self, request, response, context):
        if request.data_captures:  # asking for nothing gets nothing, as from a robot
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "no data source of this robot has live data (payload plugins' live "
                      "data is not forwarded)")


class DataAcquisitionStoreServicer(
        data_acquisition_store_service_pb2_grpc.DataAcquisitionStoreServiceServicer):
    def __init__(self, clock, store: CaptureStore) -> None:
        self.clock, self.store = clock, store

    @unary(data_acquisition_store_pb2.ListCaptureActionsResponse)
    def ListCaptureActions(self, request, response, context):
        response.action_ids.extend(self.store.action_ids(request.query))

    @unary(data_acquisition_store_pb2.ListStoredImagesResponse)
    def ListStoredImages(self, request, response, context):
        response.data_ids.extend(self.store.identifiers(IMAGE, request.query))

    @unary(data_acquisition_store_pb2.ListStoredDataResponse)
    def ListStoredData(self, request, response, context):
        response.data_ids.extend(self.store.identifiers(DATA, request.query))

    @unary(data_acquisition_store_pb2.ListStoredMetadataResponse)
    def ListStoredMetadata(self, request, response, context):
        response.data_ids.extend(self.store.identifiers(METADATA, request.query))

    @unary(data_acquisition_store_pb2.ListStoredAlertDataResponse)
    def ListStoredAlertData(self, request, response, context):
        """No alert data is stored by this robot."""

    def _stored(self, response, data_id, kind, payload) -> None:
        if not data_id.action_id.action_name or not data_id.action_id.group_name:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "stored data needs a capture action (action name and group name)")
            return
        self.store.add(data_id, kind, payload)

    @unary(data_acquisition_store_pb2.StoreImageResponse)
    def StoreImage(self, request, response, context):
        self._stored(response, request.data_id, IMAGE, request.image)

    @unary(data_acquisition_store_pb2.StoreDataResponse)
    def StoreData(self, request, response, context):
        self._stored(response, request.data_id, DATA, (request.data, request.file_extension))

    @unary(data_acquisition_store_pb2.StoreMetadataResponse)
    def StoreMetadata(self, request, response, context):
        self._stored(response, request.data_id, METADATA, request.metadata)

    @unary(data_acquisition_store_pb2.StoreAlertDataResponse)
    def StoreAlertData(self, request, response, context):
        set_error(response, CommonError.CODE_INVALID_REQUEST, "alert data is not stored here")

    def StoreDataStream(self, request_iterator, context):
        requests = list(request_iterator)
        first = requests[0] if requests else data_acquisition_store_pb2.StoreStreamRequest()
        response = stamped(self.clock, data_acquisition_store_pb2.StoreStreamResponse(),
                           first.header)
        data = b"".join(r.chunk.data for r in requests)
        self._stored(response, first.data_id, DATA, (data, first.file_extension))
        return response

    @unary(data_acquisition_store_pb2.QueryMaxCaptureIdResponse)
    def QueryMaxCaptureId(self, request, response, context):
        response.max_capture_id = self.store.max_id()

    def QueryStoredCaptures(self, request, context):
        response = data_acquisition_store_pb2.QueryStoredCapturesResponse(
            max_capture_id=self.store.max_id())
        response.results.extend(self.store.query(request.query))
        yield from data_chunk.chunk_message(stamped(self.clock, response, request.header),
                                            CHUNK_BYTES)


def _spec(name: str, service: str, add) -> ServiceSpec:
    return ServiceSpec(name, f"bosdyn.api.{service}", "api.spot.robot", add)


SERVICES = (
    Served(_spec("data-acquisition", "DataAcquisitionService",
                 data_acquisition_service_pb2_grpc.add_DataAcquisitionServiceServicer_to_server),
           DataAcquisitionServicer),
    Served(_spec("data-acquisition-store", "DataAcquisitionStoreService",
                 data_acquisition_store_service_pb2_grpc
                 .add_DataAcquisitionStoreServiceServicer_to_server),
           lambda parts: DataAcquisitionStoreServicer(
               parts.clock, parts.captures)),
)
