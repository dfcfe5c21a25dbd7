"""Node ``spot_aliases``: spot_ros2's names beside ours (``table.py``). Topics are
republished as they arrive; a service call is passed to ours and its answer returned; a
posture Trigger sends an ``arm/posture`` goal and answers with its result. Everything goes
through this process's own ROS interfaces, so an alias behaves exactly as the name it stands
for (checks, lease, feedback). The callbacks are coroutines: a call waiting for ours holds no
executor thread, so a burst of callers cannot take every thread and starve the answers they
wait for (blocking callbacks answered 12 of 100 here)."""

from functools import partial

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import QoSProfile
from std_srvs.srv import Trigger

from spot_driver.core import qos
from spot_driver.core.action_client import ActionClient
from spot_driver.core.capability import DriverContext
from spot_driver.nodes.parameters import declare
from spot_driver.spot_ros2_aliases.table import (
    POSTURES,
    SERVICES,
    TOPICS,
    TopicAlias,
    camera_aliases,
)
from spot_msgs.action import ArmPosture


class AliasNode(Node):
    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_aliases", namespace=context.namespace)
        self._group = ReentrantCallbackGroup()  # an alias waits while ours answers
        cameras = declare(self, "spot_ros2_alias_cameras",
                          ["frontleft", "frontright", "left", "right", "back", "hand"])
        for alias in TOPICS + camera_aliases(list(cameras)):
            self._relay(alias)
        for alias in SERVICES:
            client = self.create_client(alias.srv_type, alias.ours, qos_profile=qos.SERVICES,
                                        callback_group=self._group)
            self.create_service(alias.srv_type, alias.theirs, partial(self._pass, client),
                                qos_profile=qos.SERVICES, callback_group=self._group)
        self._posture = ActionClient(self, ArmPosture, "arm/posture", **qos.ACTION_QUEUES,
                                     callback_group=self._group)
        for name, posture in POSTURES.items():
            self.create_service(Trigger, name, partial(self._arm, posture),
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

    async def _pass(self, client, request, response):
        """Call our service with ``request``; its answer, or a failure that says why."""
        if not client.service_is_ready():
            return _failed(response, f"{client.srv_name} is not served (capability off?)")
        return await client.call_async(request)

    async def _arm(self, posture: int, _request, response: Trigger.Response):
        if not self._posture.server_is_ready():
            return _failed(response, "arm/posture is not served (no arm, or manipulation off)")
        handle = await self._posture.send_goal_async(ArmPosture.Goal(posture=posture))
        if not handle.accepted:
            return _failed(response, "arm/posture did not accept the goal")
        result = (await handle.get_result_async()).result
        response.success, response.message = result.success, result.message
        return response


def _failed(response, message: str):
    if hasattr(response, "success"):
        response.success = False
    if hasattr(response, "message"):
        response.message = message
    return response
