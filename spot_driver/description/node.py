"""``robot_description`` (std_msgs/String, transient local): the URDF of the connected robot,
so RViz and robot_state_publisher get the model without a file of their own."""

from rclpy.node import Node
from std_msgs.msg import String

from spot_driver import qos
from spot_driver.capability import DriverContext
from spot_driver.description import robot_model
from spot_driver.description.hardware import robot_has_arm
from spot_driver.nodes.parameters import declare


class DescriptionNode(Node):
    """Builds the URDF once, for the robot's hardware (arm or not) and the frame prefix."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_description", namespace=context.namespace)
        connection = context.connection
        self.prefix = declare(self, "frame_prefix", "")
        publish = declare(self, "publish_robot_description", True)
        self.has_arm = robot_has_arm(connection, self.get_logger().warning)
        self.urdf = robot_model.robot_description(self.has_arm, self.prefix)
        if publish:
            self._pub = self.create_publisher(String, "robot_description", qos.LATCHED)
            self._pub.publish(String(data=self.urdf))
