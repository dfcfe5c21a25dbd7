"""cmd_vel, stop and the e-stop services: what must be served at once, whatever else runs.

The driver spins this node in an executor of its own (see ``main``), so a burst of slow
service calls or long actions on the other nodes never delays a stop or a velocity command.
"""

from collections.abc import Callable

from geometry_msgs.msg import Twist, TwistStamped
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from rclpy.time import Time
from std_srvs.srv import Trigger

from spot_common.stage_stamps import stamp
from spot_driver.body.mobility import InvalidVelocityError, clamp_velocity
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import CommandError, describe
from spot_driver.core.lease_order import is_own_older_lease
from spot_driver.nodes.parameters import declare, on_change
from spot_driver.nodes.triggers import trigger_callback


class MotionNode(Node):
    """Velocity commands with a watchdog (each holds for ``cmd_duration``), stop and e-stop."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_motion", namespace=context.namespace)
        self._connection = connection = context.connection
        self.commander = commander = context.commander
        self.cmd_duration = declare(self, "cmd_duration", 0.25, read_only=False,
                                    bounds=(0.05, 2.0))
        stamped = declare(self, "cmd_vel_stamped", False)
        self.stale_after = declare(self, "cmd_vel_stale_timeout", 0.5, read_only=False,
                                   bounds=(0.01, 10.0))
        on_change(self, {
            "cmd_duration": (None, lambda value: setattr(self, "cmd_duration", value)),
            "cmd_vel_stale_timeout": (None, lambda value: setattr(self, "stale_after", value)),
        })

        safety = MutuallyExclusiveCallbackGroup()
        for name, action in (
                ("stop", commander.stop),
                ("estop/gentle", _done(connection.estop_gentle, "settle then cut")),
                ("estop/hard", _done(connection.estop_hard, "motor power cut")),
                ("estop/release", _done(connection.estop_release, "released"))):
            self.create_service(Trigger, name, trigger_callback(self.get_logger(), name, action),
                                qos_profile=qos.SERVICES, callback_group=safety)

        motion = MutuallyExclusiveCallbackGroup()
        if stamped:
            self.create_subscription(TwistStamped, "cmd_vel", self._on_cmd_vel_stamped,
                                     qos.VELOCITY_COMMAND, callback_group=motion)
        else:
            self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, qos.VELOCITY_COMMAND,
                                     callback_group=motion)

    def _on_cmd_vel_stamped(self, msg: TwistStamped) -> None:
        age = (self.get_clock().now() - Time.from_msg(msg.header.stamp)).nanoseconds / 1e9
        if age > self.stale_after or age < -self.stale_after:
            self.get_logger().warning(f"cmd_vel dropped: stamp is {age:.2f} s old",
                                      throttle_duration_sec=2.0)
            return
        self._on_cmd_vel(msg.twist)

    def _on_cmd_vel(self, twist: Twist) -> None:
        stamp("driver_callback", twist.linear.x)
        log = self.get_logger()
        if not self._connection.has_lease:
            log.warning("cmd_vel ignored: no lease (call 'claim')", throttle_duration_sec=5.0)
            return
        try:
            (vx, vy, wz), clamped = clamp_velocity(twist.linear.x, twist.linear.y,
                                                   twist.angular.z,
                                                   self.commander.mobility.max_velocity)
        except InvalidVelocityError as exc:
            log.warning(f"cmd_vel rejected ({exc}); stopping", throttle_duration_sec=2.0)
            vx = vy = wz = 0.0
            clamped = False
        if clamped:
            log.warning("cmd_vel clamped to the velocity limit", throttle_duration_sec=5.0)
        try:
            future = self.commander.velocity_async(vx, vy, wz, self.cmd_duration)
        except CommandError as exc:
            log.warning(f"cmd_vel not sent: {exc}", throttle_duration_sec=5.0)
            return
        stamp("command_sent", vx)
        future.add_done_callback(lambda done: self._check_cmd_vel_result(done, vx))

    def _check_cmd_vel_result(self, future, vx: float) -> None:
        stamp("command_answered", vx)
        exc = future.exception()
        if exc is None:
            return
        if is_own_older_lease(exc, self._connection.wallet_lease()):
            return  # superseded by the driver's own newer command: nothing went wrong
        self.get_logger().warning(f"cmd_vel refused: {describe(exc)}",
                                  throttle_duration_sec=5.0)


def _done(call: Callable[[], None], message: str) -> Callable[[], str]:
    def action() -> str:
        call()
        return message

    return action
