"""Node ``spot_aliases``: spot_ros2's names beside ours (``table.py``). Topics are
republished as they arrive; a service call is passed to ours and its answer returned; a
posture Trigger sends an ``arm/posture`` goal and answers with its result. Everything goes
through this process's own ROS interfaces, so an alias behaves exactly as the name it stands
for (checks, lease, feedback)."""

import threading

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile
from std_srvs.srv import Trigger

from spot_driver import qos
from spot_driver.action_client import ActionClient
from spot_driver.capability import DriverContext
from spot_driver.nodes.parameters import declare
from spot_driver.spot_ros2_aliases.table import (
    POSTURES,
    SERVICES,
    TOPICS,
    TopicAlias,
    camera_aliases,
)
from spot_msgs.action import ArmPosture

ANSWER_TIMEOUT_S = 60.0  # a passed-through call or a posture goal, at most


class AliasNode(Node):
    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_aliases", namespace=context.namespace)
        self._group = ReentrantCallbackGroup()  # an alias waits while ours answers
        cameras = declare(self, "spot_ros2_alias_cameras",
                          ["frontleft", "frontright", "left", "right", "back", "hand"])
        for alias in TOPICS + camera_aliases(list(cameras)):
            self._relay(alias)
        for alias in SERVICES:
            client = self.create_client(alias.srv_type, alias.ours, callback_group=self._group)
            self.create_service(alias.srv_type, alias.theirs,
                                lambda request, response, c=client: self._pass(c, request,
                                                                                response),
                                qos_profile=qos.SERVICES, callback_group=self._group)
        self._posture = ActionClient(self, ArmPosture, "arm/posture",
                                     callback_group=self._group)
        for name, posture in POSTURES.items():
            self.create_service(Trigger, name,
                                lambda request, response, p=posture: self._arm(p, response),
                                qos_profile=qos.SERVICES, callback_group=self._group)

    def _relay(self, alias: TopicAlias) -> None:
        if alias.latched:
            listen, publish = qos.LATCHED, qos.LATCHED
        else:  # best effort hears any publisher; publish as the original does
            listen = QoSProfile(depth=5, reliability=qos.STREAM.reliability)
            publish = qos.SENSOR if "image" in alias.ours or "points" in alias.ours \
                else qos.STREAM
        publisher = self.create_publisher(alias.msg_type, alias.theirs, publish)
        self.create_subscription(alias.msg_type, alias.ours, publisher.publish, listen,
                                 callback_group=self._group)

    def _pass(self, client, request, response):
        """Call our service with ``request``; its answer, or a failure that says why."""
        if not client.service_is_ready():
            return _failed(response, f"{client.srv_name} is not served (capability off?)")
        answer = _wait(client.call_async(request))
        if answer is None:
            return _failed(response, f"{client.srv_name} did not answer in {ANSWER_TIMEOUT_S} s")
        return answer

    def _arm(self, posture: int, response: Trigger.Response) -> Trigger.Response:
        if not self._posture.server_is_ready():
            return _failed(response, "arm/posture is not served (no arm, or manipulation off)")
        handle = _wait(self._posture.send_goal_async(ArmPosture.Goal(posture=posture)))
        if handle is None or not handle.accepted:
            return _failed(response, "arm/posture did not accept the goal")
        result = _wait(handle.get_result_async())
        if result is None:
            handle.cancel_goal_async()
            return _failed(response, f"arm/posture: no result in {ANSWER_TIMEOUT_S} s")
        response.success, response.message = result.result.success, result.result.message
        return response


def _wait(future):
    """The future's result once done (None after ANSWER_TIMEOUT_S)."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    return future.result() if done.wait(ANSWER_TIMEOUT_S) else None


def _failed(response, message: str):
    if hasattr(response, "success"):
        response.success = False
    if hasattr(response, "message"):
        response.message = message
    return response
