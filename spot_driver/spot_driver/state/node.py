"""Publishes what the robot reports: joint states, TF, odometry and status topics.

Robot state is requested on four paced threads of its own (``acquisition.Scheduler`` lanes,
not an executor timer), so up to four requests are in flight and the state rate holds while
the executor and the perception threads are busy.
"""

import math
import time

from geometry_msgs.msg import TwistWithCovarianceStamped, Vector3Stamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import BatteryState as RosBatteryState
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from spot_common import stage_stamps
from spot_driver.conversions import frames
from spot_driver.core import qos
from spot_driver.core.acquisition import DEFAULT_MAX_IN_FLIGHT, Scheduler
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import describe
from spot_driver.description import frame_names as naming
from spot_driver.nodes.parameters import declare, on_change
from spot_driver.nodes.periodic import PeriodicWork
from spot_driver.state import status
from spot_driver.state.pipeline import StatePipeline, model_frames
from spot_driver.state.stream import RobotStateStream
from spot_msgs.msg import (
    BatteryStateArray,
    BehaviorFaultState,
    EStopStateArray,
    FootStateArray,
    LeaseArray,
    ManipulatorState,
    Metrics,
    PowerState,
    SystemFaultState,
    TimeSyncState,
    WiFiState,
)

LEASE_POLL_S = 0.2
METRICS_POLL_S = 1.0  # the robot's lifetime metrics change slowly


class StateNode(PeriodicWork, Node):
    """Polls robot state at ``robot_state_rate`` and publishes it, statuses at ``status_rate``
    (by default the same: every message of a state goes out through the CDR fast path)."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_state", namespace=context.namespace)
        self._connection = connection = context.connection
        self._cache = context.cache
        self.rate = declare(self, "robot_state_rate", 50.0, read_only=False, bounds=(0.1, 500.0))
        status_rate = declare(self, "status_rate", 50.0, read_only=False, bounds=(0.1, 500.0))
        self.root = declare(self, "tf_root", "odom")
        self.prefix = declare(self, "frame_prefix", "")
        self.publish_tf = declare(self, "publish_tf", True, read_only=False)
        if self.root not in frames.ROOTS:
            raise ValueError(f"parameter tf_root must be one of {frames.ROOTS}, "
                             f"not {self.root!r}")
        if not 0 < self.rate <= 500 or not 0 < status_rate:
            raise ValueError("robot_state_rate must be in (0, 500] Hz and status_rate above 0")
        self._status_rate = status_rate
        self._status_every = self._every(self.rate, status_rate)
        self._cycle = 0
        self.published = 0  # robot states published (diagnostics derive the achieved rate)
        self._pipeline = StatePipeline(self.root, self.prefix,
                                       model_frames() if declare(self, "robot_state_publisher",
                                                                 False) else frozenset(),
                                       naming.check(declare(self, "frame_names", "spot")))

        self._joint_pub = self.create_publisher(JointState, "joint_states", qos.STATE)
        self._odom_pub = self.create_publisher(Odometry, "odometry", qos.STATE)
        self._twist_pub = self.create_publisher(TwistWithCovarianceStamped, "odometry/twist",
                                                qos.STATE)
        self._tf_pub = self.create_publisher(TFMessage, "/tf", qos.STATE)
        self._tf_static_pub = self.create_publisher(TFMessage, "/tf_static", qos.LATCHED)
        self._status_pubs = {  # keyed like StatusSerializer.serialize's entries
            "battery": self.create_publisher(BatteryStateArray, "status/battery", qos.STREAM),
            "power": self.create_publisher(PowerState, "status/power", qos.STREAM),
            "estop": self.create_publisher(EStopStateArray, "status/estop", qos.STREAM),
            "wifi": self.create_publisher(WiFiState, "status/wifi", qos.STREAM),
            "feet": self.create_publisher(FootStateArray, "status/feet", qos.STREAM),
            "system_faults": self.create_publisher(SystemFaultState, "status/system_faults",
                                                   qos.STREAM),
            "behavior_faults": self.create_publisher(BehaviorFaultState,
                                                     "status/behavior_faults", qos.STREAM),
            "manipulation": self.create_publisher(ManipulatorState, "status/manipulation",
                                                  qos.STREAM),
            "end_effector_force": self.create_publisher(Vector3Stamped,
                                                        "status/end_effector_force", qos.STREAM),
        }
        self._time_sync_pub = self.create_publisher(TimeSyncState, "status/time_sync",
                                                    qos.STREAM)
        self._battery_pub = self.create_publisher(RosBatteryState, "battery_state", qos.STREAM)
        self._lease_pub = self.create_publisher(LeaseArray, "status/leases", qos.STREAM)
        self._metrics_pub = self.create_publisher(Metrics, "status/metrics", qos.STREAM)
        self.every(METRICS_POLL_S, self._poll_metrics)

        self._leases_sent: tuple[list, float] | None = None  # (resources, monotonic time)
        self.every(LEASE_POLL_S, self._poll_leases)
        self.stream = RobotStateStream(self.rate, connection, self._on_state, self._report,
                                       int(declare(self, "max_in_flight",
                                                   DEFAULT_MAX_IN_FLIGHT, bounds=(1, 32))))
        self._scheduler = Scheduler([self.stream], describe=describe,
                                    robot_time=connection.robot_time.take)
        self._scheduler.start()
        context.streams.append(lambda: [self.stream])
        on_change(self, {
            "robot_state_rate": (None, self._set_rate),
            "status_rate": (None, self._set_status_rate),
            "publish_tf": (None, lambda value: setattr(self, "publish_tf", value)),
        })

    def _set_rate(self, rate: float) -> None:
        self.rate = rate
        self.stream.set_rate(rate)
        self._set_status_rate(self._status_rate)

    def _set_status_rate(self, rate: float) -> None:
        self._status_rate = rate
        self._status_every = self._every(self.rate, rate)

    @staticmethod
    def _every(state_rate: float, status_rate: float) -> int:
        """Statuses go out with every Nth robot state: at most the state rate."""
        return max(1, round(state_rate / status_rate))

    def _on_state(self, state) -> None:
        self._cache.update(state)
        self.publish_state(state)
        self.published += 1

    def _report(self, message: str) -> None:
        self.get_logger().warning(message, throttle_duration_sec=5.0)

    def stop_streaming(self) -> None:
        """Stop requesting and publishing robot state (before the node goes away)."""
        self._scheduler.stop()
        super().stop_streaming()

    def publish_state(self, state) -> None:
        """Every message of one robot state (statuses every Nth cycle)."""
        sync = self._connection.time_sync()
        skew = sync[1] if sync[0] else self._connection.skew_nsec
        with_statuses = self._cycle % self._status_every == 0
        self._cycle += 1
        try:
            out = self._pipeline.messages(state, skew, sync,
                                          self.get_clock().now().seconds_nanoseconds(),
                                          with_statuses)
        except KeyError as exc:
            self.get_logger().error(f"cannot publish state: {exc}", throttle_duration_sec=5.0)
            return
        self._joint_pub.publish(out.joint_states)
        self._odom_pub.publish(out.odometry)
        if stage_stamps.ENABLED:
            velocity = state.kinematic_state.velocity_of_body_in_odom.linear
            stage_stamps.stamp("odometry_published", math.hypot(velocity.x, velocity.y))
        self._twist_pub.publish(out.body_twist)
        if self.publish_tf:
            self._tf_pub.publish(out.tf)
            if out.tf_static is not None:
                self._tf_static_pub.publish(out.tf_static)
        for key, data in out.statuses.items():
            if key == "battery_state":
                for battery in data:
                    self._battery_pub.publish(battery)
            else:
                self._status_pubs[key].publish(data)
        if out.time_sync is not None:
            self._time_sync_pub.publish(out.time_sync)

    def _poll_metrics(self) -> None:
        if not self._connection.connected:
            return
        try:
            response = self._connection.state_client.get_robot_metrics(timeout=5.0)
        except Exception as exc:
            self._report(f"robot metrics: {describe(exc)}")
            return
        self._metrics_pub.publish(status.metrics(response, self._connection.skew_nsec, ""))

    def _poll_leases(self) -> None:
        """The lease list from the connection supervisor's heartbeat (no extra RPC): once a
        second, and as soon as it changes (the first heartbeat, a lease taken)."""
        if not self._connection.connected:
            return
        resources = self._connection.leases()
        now = time.monotonic()
        sent = self._leases_sent
        if sent is not None and resources == sent[0] and now - sent[1] < 1.0:
            return
        self._leases_sent = (resources, now)
        header = Header(stamp=self.get_clock().now().to_msg())
        self._lease_pub.publish(status.lease_array(resources, header))
