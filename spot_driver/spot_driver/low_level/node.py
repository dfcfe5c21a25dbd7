"""The ``spot_low_level`` node (its own process, ``process.py``): the 333 Hz state stream as
ROS topics, joint commands from a topic to the robot.

Published for every state-stream message, from the stream's own thread: ``low_level/joint_states``,
``imu`` (one per IMU packet), ``low_level/odometry``, ``low_level/contacts``, and
``low_level/command_latency`` (s, from a joint command's arrival on the topic to the robot's
echo of its key in the state stream). ``low_level/joint_command`` (spot_msgs/JointCommand)
streams targets to the robot, which follows them once ``low_level/activate`` (served by the
driver, which holds the lease) put it in joint mode. Refused commands are logged and never
sent.
"""

import collections
import threading
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from nav_msgs.msg import Odometry
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64, Header
from tf2_msgs.msg import TFMessage

from spot_driver.core import qos
from spot_driver.core.connection import ConnectionConfig, RobotConnection
from spot_driver.core.credentials import load_credentials
from spot_driver.low_level import conversions, joints
from spot_driver.low_level.commands import JointCommandError, JointTargets, update_request
from spot_driver.low_level.stream_cdr import StreamSerializer
from spot_driver.low_level.streams import CLIENTS, CommandStream, StateStream, StreamCalls
from spot_driver.nodes.parameters import declare
from spot_msgs.msg import FootStateArray, JointCommand

KEYS_KEPT = 4096  # sent command keys remembered for the latency
FIRST_HORIZON_S = 0.25  # s: the end time of a stream's first command, at least


class LowLevelNode(Node):
    def __init__(self, namespace: str = "") -> None:
        super().__init__("spot_low_level", namespace=namespace)
        credentials = load_credentials(declare(self, "credentials_file", ""),
                                       warn=self.get_logger().warning)
        config = ConnectionConfig(
            hostname=declare(self, "hostname", ""), port=declare(self, "port", 0),
            certificate=declare(self, "certificate", ""),
            client_name=declare(self, "client_name", "spot_ros2_driver") + "-low-level")
        if not config.hostname:
            raise ValueError("parameter 'hostname' is required (the robot's address)")
        self._connection = RobotConnection(config, credentials, CLIENTS)
        calls = StreamCalls(self._connection)
        self.prefix = declare(self, "frame_prefix", "")
        self.watchdog = declare(self, "low_level_watchdog", 0.1, bounds=(0.01, 1.0))
        self.horizon = declare(self, "low_level_command_horizon", 0.05, bounds=(0.005, 1.0))
        self.extrapolation = declare(self, "low_level_extrapolation", 0.005, bounds=(0.0, 0.1))
        sensor = qos.SENSOR
        self._joints = self.create_publisher(JointState, "low_level/joint_states", sensor)
        self._imu = self.create_publisher(Imu, "imu", sensor)
        self._odometry = self.create_publisher(Odometry, "low_level/odometry", sensor)
        self._contacts = self.create_publisher(FootStateArray, "low_level/contacts", sensor)
        self._latency = self.create_publisher(Float64, "low_level/command_latency", sensor)
        self._tf_static = self.create_publisher(TFMessage, "/tf_static", qos.LATCHED)
        self._names: list[str] | None = None
        self._cdr: StreamSerializer | None = None
        self._targets: JointTargets | None = None
        self._lock = threading.Lock()
        self._key = 0
        # key -> monotonic ns its joint command arrived (written by the intake thread, read
        # by the stream's: single-call dict operations only)
        self._sent: collections.OrderedDict[int, int] = collections.OrderedDict()
        self._last_echo = 0
        self._mounted = False
        self.publish_ms: collections.deque = collections.deque(maxlen=3000)  # arrival -> done
        group = MutuallyExclusiveCallbackGroup()
        # Joint commands (up to 333 Hz) arrive on a node of their own, spun by its own
        # executor (process.py): each wake of rclpy's executor rebuilds its wait set in
        # Python from every entity of its nodes, and this one has the subscription alone.
        self.intake = Node("spot_low_level_commands", namespace=namespace,
                           start_parameter_services=False,
                           parameter_overrides=[Parameter("start_type_description_service",
                                                          value=False)])
        self.intake.create_subscription(
            JointCommand, "low_level/joint_command", self._on_command, qos.STATE,
            event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False))
        self.commands = CommandStream(calls.send_commands, self._build, self.watchdog,
                                      on_end=self._on_stream_end)
        self.state = StateStream(calls.state_stream, self._on_state,
                                 on_broken=self._connection.mark_down)
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.STATE)
        self.create_timer(1.0, self._publish_status, callback_group=group)
        self.state.start()

    # ------------------------------------------------------------------ state stream
    def _on_state(self, message, arrival_ns: int) -> None:
        """One stream message: every topic, on the stream's thread."""
        skew = self._connection.skew_nsec
        prefix = self.prefix
        count = len(message.joint_states.position)
        if self._names is None or len(self._names) != count:
            self._names = joints.names(count, prefix)
            self._cdr = StreamSerializer(self._names, prefix)
            with self._lock:
                self._targets = JointTargets(self._names, joints.limits(count))
        if self._targets.incomplete:
            with self._lock:
                self._targets.hold(message.joint_states.position, message.joint_states.load)
        cdr = self._cdr
        self._joints.publish(cdr.joint_states(message, skew))
        for imu in cdr.imus(message, skew):
            self._imu.publish(imu)
        self._odometry.publish(cdr.odometry(message, skew))
        self._contacts.publish(cdr.contacts(message, skew))
        key, _ = conversions.echoed_key(message)
        if key and key != self._last_echo:
            self._last_echo = key
            sent = self._sent.pop(key, None)
            if sent is not None:
                self._latency.publish(Float64(data=(arrival_ns - sent) / 1e9))
        if not self._mounted and message.inertial_state.mounting_link_name:
            self._tf_static.publish(TFMessage(transforms=[
                conversions.imu_mount(message, prefix)]))
            self._mounted = True
        self.publish_ms.append((time.monotonic_ns() - arrival_ns) / 1e6)

    # ------------------------------------------------------------------ commands
    def _on_command(self, msg: JointCommand) -> None:
        log = self.get_logger()
        with self._lock:
            if self._targets is None:
                log.warning("joint command ignored: no joint state from the robot yet",
                            throttle_duration_sec=2.0)
                return
            try:
                targets = self._targets.merge(list(msg.name), msg.position, msg.velocity,
                                              msg.load, msg.k_q_p, msg.k_qd_p)
            except JointCommandError as exc:
                log.error(f"joint command refused: {exc}", throttle_duration_sec=1.0)
                return
            self._key = self._key % 2_000_000_000 + 1
            item = (targets, self._key)
        self._sent[self._key] = time.monotonic_ns()
        if len(self._sent) > KEYS_KEPT:
            self._sent.popitem(last=False)
        self.commands.put(item)

    def _on_stream_end(self, result: str) -> None:
        log = self.get_logger()
        if result.startswith("STATUS_OK"):
            log.info("joint command stream ended (commands stopped): the robot stands again")
        else:
            log.warning(f"joint command stream ended: {result}")

    def _build(self, item, first: bool):
        targets, key = item
        # The first command of a stream also opens the stream (a new HTTP/2 stream, the
        # robot's checks): on a busy computer that took 51-57 ms here, past a 50 ms horizon,
        # and the robot refused it as expired. It gets at least FIRST_HORIZON_S.
        horizon = max(self.horizon, FIRST_HORIZON_S) if first else self.horizon
        end = time.time_ns() + int(horizon * 1e9) + self._connection.skew_nsec
        return update_request(targets, key, end, self.extrapolation, gains=True)

    # ------------------------------------------------------------------ health
    def _publish_status(self) -> None:
        ns = self.get_namespace().rstrip("/")
        prefix = f"{ns}/spot_driver: " if ns else "spot_driver: "
        self._diagnostics.publish(DiagnosticArray(
            header=Header(stamp=self.get_clock().now().to_msg()),
            status=[self.status(prefix, self._connection.config.hostname)]))

    def status(self, prefix: str, hardware_id: str) -> DiagnosticStatus:
        state, commands = self.state, self.commands
        values = [KeyValue(key="state messages", value=str(state.received)),
                  KeyValue(key="state stream reopened", value=str(state.reopened)),
                  KeyValue(key="command streams", value=str(commands.streams)),
                  KeyValue(key="watchdog stops", value=str(commands.watchdog_stops)),
                  KeyValue(key="last command stream", value=commands.last_result)]
        recent = np.array(self.publish_ms)
        if recent.size:
            values += [KeyValue(key="stream to published ms p50",
                                value=f"{np.percentile(recent, 50):.3f}"),
                       KeyValue(key="stream to published ms p99",
                                value=f"{np.percentile(recent, 99):.3f}")]
        if state.problem:
            level, message = DiagnosticStatus.ERROR, state.problem
        elif "STATUS_OK" in commands.last_result or commands.streams == 0 or \
                "INACTIVE" in commands.last_result:
            level = DiagnosticStatus.OK
            message = "joint command stream open" if commands.streaming else "state streaming"
        else:
            level, message = DiagnosticStatus.WARN, f"joint commands: {commands.last_result}"
        return DiagnosticStatus(level=level, name=f"{prefix}low_level", message=message,
                                hardware_id=hardware_id, values=values)

    def destroy_node(self) -> None:
        self.commands.close()
        self.state.stop()
        self._connection.shutdown()
        self.intake.destroy_node()
        super().destroy_node()
