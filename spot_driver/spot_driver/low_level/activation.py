"""``low_level/activate`` (SetBool), in the driver process that holds the lease: true puts
the robot in joint mode (a RobotCommand ``joint_request``); false gives control back to the
stand controller (a stand command). The streams run in their own process (``process.py``)."""

from rclpy.node import Node
from std_srvs.srv import SetBool

from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.nodes.triggers import answer


class JointModeNode(Node):
    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_joint_mode", namespace=context.namespace)
        self._commander = context.commander
        self.create_service(SetBool, "low_level/activate", self._on_activate,
                            qos_profile=qos.SERVICES)

    def _on_activate(self, request: SetBool.Request, response: SetBool.Response):
        def fill() -> str:
            if not request.data:
                return self._commander.stand()
            self._commander.joint_mode()
            return ("joint mode: the robot follows low_level/joint_command; it stands again "
                    "when the commands stop")
        return answer(self.get_logger(), "low_level/activate", response, fill)
