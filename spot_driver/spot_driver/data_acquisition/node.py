"""Data acquisition: the ``data_acquisition/acquire`` action, the store's captures listed and
downloaded, and each capture's images on ``data_acquisition/image/compressed``."""

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import CompressedImage

from spot_driver.conversions.time import robot_stamp_to_msg
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.data_acquisition import conversions as convert
from spot_driver.data_acquisition.acquisition import DataAcquisition
from spot_driver.data_acquisition.store import CaptureStore
from spot_driver.nodes.actions import GoalPolicy, GoalSlot, fill_result, serve
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.triggers import answer_callback
from spot_msgs.action import AcquireData
from spot_msgs.srv import DownloadCaptures, ListCaptures, ListCaptureSources

KINDS = {"image": "image", "data": "data", "large_data": "data", "metadata": "metadata"}


class DataAcquisitionNode(Node):
    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_data_acquisition", namespace=context.namespace)
        self.connection = context.connection
        self.acquisition = DataAcquisition(context.connection)
        self.store = CaptureStore(context.connection)
        self.publish_images = declare(self, "data_acquisition_publish_images", True)
        self.frame_prefix = declare(self, "frame_prefix", "")
        self._images = self.create_publisher(CompressedImage,
                                             "data_acquisition/image/compressed", qos.SENSOR)
        group = ReentrantCallbackGroup()
        for srv_type, name, fill in (
                (ListCaptureSources, "data_acquisition/list_sources", self._list_sources),
                (ListCaptures, "data_acquisition/list_captures", self._list_captures),
                (DownloadCaptures, "data_acquisition/download", self._download)):
            self.create_service(srv_type, name, answer_callback(self.get_logger(), name, fill),
                                qos_profile=qos.SERVICES, callback_group=group)
        self._server = serve(
            self, AcquireData, "data_acquisition/acquire",
            lambda goal: self.acquisition.task(goal.action_name, goal.group_name,
                                               list(goal.captures), goal.metadata_json),
            GoalSlot("data acquisition", GoalPolicy.REJECT), group, result_for=self._result)

    def _stamp(self, data_id):
        return robot_stamp_to_msg(data_id.action_id.timestamp, self.connection.skew_nsec)

    def _result(self, result, ending):
        saved = ending.values.pop("saved", [])
        fill_result(result, ending)
        result.saved = [convert.capture_msg(d, "", self._stamp(d)) for d in saved]
        if ending.ok and saved and self.publish_images:
            action = saved[0].action_id
            for stored in self.store.results(action.group_name, action.action_name):
                if stored.WhichOneof("result") == "image":
                    message = convert.compressed_image(stored.image, self._stamp(stored.data_id),
                                                       self.frame_prefix)
                    if message is not None:
                        self._images.publish(message)
        return result

    def _list_sources(self, request, response) -> str:
        data, images = self.acquisition.sources()
        response.data_sources = sorted(data)
        response.descriptions = [data[name] for name in response.data_sources]
        response.image_sources = sorted(images)
        return f"{len(data)} data sources, {len(images)} image sources"

    def _list_captures(self, request, response) -> str:
        response.captures = [
            convert.capture_msg(r.data_id, KINDS.get(r.WhichOneof("result") or "", ""),
                                self._stamp(r.data_id))
            for r in self.store.results(request.group_name)]
        return f"{len(response.captures)} captures"

    def _download(self, request, response) -> str:
        response.files = self.store.download(request.directory, request.group_name,
                                             request.action_name)
        return f"{len(response.files)} files in {request.directory}"
