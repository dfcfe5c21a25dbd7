"""The Spot CAM's PTZ as ROS services, its head's position on a topic and as a frame."""

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import describe
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork
from spot_driver.nodes.triggers import answer, trigger_callback
from spot_driver.spot_cam import conversions as convert
from spot_driver.spot_cam.ptz import Ptz
from spot_msgs.msg import PtzState
from spot_msgs.srv import GetPtzPosition, ListPtz, SetPtzPosition

DEFAULT_HEAD = "mech"


class SpotCamNode(PeriodicWork, Node):
    """``spot_cam/list_ptz``, ``spot_cam/get_ptz_position``, ``spot_cam/set_ptz_position``,
    ``spot_cam/initialize_lens``; ``spot_cam/ptz/state`` and the ``spot_cam_ptz`` frame."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_cam", namespace=context.namespace)
        self.ptz = Ptz(context.connection)
        rate = declare(self, "spot_cam_ptz_rate", 5.0)
        self.head = declare(self, "spot_cam_ptz_name", DEFAULT_HEAD)
        self.mount = tuple(declare(self, "spot_cam_mount", [0.0, 0.0, 0.2]))
        prefix = declare(self, "frame_prefix", "")
        self.body_frame, self.ptz_frame = f"{prefix}body", f"{prefix}spot_cam_ptz"
        self._state_pub = self.create_publisher(PtzState, "spot_cam/ptz/state", qos.SENSOR)
        self._tf_pub = self.create_publisher(TFMessage, "/tf", qos.STATE)
        group = ReentrantCallbackGroup()
        for srv_type, name, callback in (
                (ListPtz, "spot_cam/list_ptz", self._list),
                (GetPtzPosition, "spot_cam/get_ptz_position", self._get_position),
                (SetPtzPosition, "spot_cam/set_ptz_position", self._set_position)):
            self.create_service(srv_type, name, callback, qos_profile=qos.SERVICES,
                                callback_group=group)
        self.create_service(Trigger, "spot_cam/initialize_lens", trigger_callback(
            self.get_logger(), "spot_cam/initialize_lens",
            lambda: (self.ptz.initialize_lens(), "PTZ autofocus reset")[1]),
            qos_profile=qos.SERVICES, callback_group=group)
        if rate > 0:
            self.every(1.0 / rate, self._publish_state)

    # ------------------------------------------------------------------ services
    def _list(self, request, response):
        def fill() -> str:
            response.heads = [convert.head_msg(h) for h in self.ptz.heads(refresh=True).values()]
            return f"{len(response.heads)} PTZ heads"
        return answer(self.get_logger(), "spot_cam/list_ptz", response, fill)

    def _get_position(self, request, response):
        def fill() -> str:
            position = self.ptz.position(request.name or DEFAULT_HEAD)
            response.position = convert.state_msg(position, self.get_clock().now().to_msg())
            return ""
        return answer(self.get_logger(), "spot_cam/get_ptz_position", response, fill)

    def _set_position(self, request, response):
        name = request.name or DEFAULT_HEAD

        def fill() -> str:
            commanded = self.ptz.move(name, request.pan, request.tilt, request.zoom)
            response.position = convert.state_msg(commanded, self.get_clock().now().to_msg())
            return f"{name} moving"
        return answer(self.get_logger(), "spot_cam/set_ptz_position", response, fill)

    # ------------------------------------------------------------------ stream
    def _publish_state(self) -> None:
        try:
            position = self.ptz.position(self.head)
        except Exception as exc:
            self.get_logger().warning(f"spot_cam ptz state: {describe(exc)}",
                                      throttle_duration_sec=60.0)
            return
        stamp = self.get_clock().now().to_msg()
        self._state_pub.publish(convert.state_msg(position, stamp))
        self._tf_pub.publish(TFMessage(transforms=[convert.head_transform(
            position.pan.value, position.tilt.value, self.mount, self.body_frame,
            self.ptz_frame, stamp)]))
