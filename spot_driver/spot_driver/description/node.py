"""``robot_description`` (std_msgs/String, transient local): the URDF of the connected robot,
so RViz and robot_state_publisher get the model without a file of their own. With
``robot_state_publisher: true`` the detected model is also handed to the robot_state_publisher
node in the driver's namespace (its ``robot_description`` parameter, which it applies at
runtime), so a launch need not know whether the robot has an arm. ``has_arm`` (std_msgs/Bool,
transient local) and the read-only parameter ``has_arm`` say what was detected."""

from rcl_interfaces.msg import Parameter, ParameterDescriptor, ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Bool, String

from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.description import frame_names as naming
from spot_driver.description import robot_model
from spot_driver.description.hardware import robot_has_arm
from spot_driver.nodes.parameters import declare

RSP = "robot_state_publisher"
RETRY_S = 1.0
GIVE_UP_AFTER = 120  # tries: robot_state_publisher normally starts with the driver


class DescriptionNode(Node):
    """Builds the URDF once, for the robot's hardware (arm or not) and the frame prefix."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_description", namespace=context.namespace)
        connection = context.connection
        self.prefix = declare(self, "frame_prefix", "")
        publish = declare(self, "publish_robot_description", True)
        self.has_arm = robot_has_arm(connection, self.get_logger().warning)
        self.urdf = robot_model.robot_description(
            self.has_arm, self.prefix, naming.check(declare(self, "frame_names", "spot")))
        # Detected, never configured: an override from a launch or file is ignored.
        self.declare_parameter("has_arm", self.has_arm, ParameterDescriptor(
            description="whether the connected robot has an arm (detected; read-only)",
            read_only=True), ignore_override=True)
        self._has_arm_pub = self.create_publisher(Bool, "has_arm", qos.LATCHED)
        self._has_arm_pub.publish(Bool(data=self.has_arm))
        if publish:
            self._pub = self.create_publisher(String, "robot_description", qos.LATCHED)
            self._pub.publish(String(data=self.urdf))
        self.rsp_updated = False
        if declare(self, "robot_state_publisher", False):
            self._rsp = self.create_client(SetParameters, f"{RSP}/set_parameters",
                                           qos_profile=qos.SERVICES)
            self._tries = 0
            self._future = None
            self._timer = self.create_timer(RETRY_S, self._update_rsp,
                                            callback_group=MutuallyExclusiveCallbackGroup())

    def _update_rsp(self) -> None:
        """Set robot_state_publisher's model to the detected one (retried until it answers)."""
        if self._future is not None:
            if not self._future.done():
                return
            results = self._future.result().results if self._future.result() else []
            if results and results[0].successful:
                self.rsp_updated = True
                self._timer.cancel()
                self.get_logger().info(f"{RSP} now has the connected robot's model "
                                       f"({'with' if self.has_arm else 'without'} arm)")
                return
            self._future = None
        self._tries += 1
        if self._tries > GIVE_UP_AFTER:
            self._timer.cancel()
            self.get_logger().warning(f"{RSP} did not take the robot's model; it publishes "
                                      "the model it was started with")
            return
        if not self._rsp.service_is_ready():
            return
        value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=self.urdf)
        self._future = self._rsp.call_async(SetParameters.Request(
            parameters=[Parameter(name="robot_description", value=value)]))
