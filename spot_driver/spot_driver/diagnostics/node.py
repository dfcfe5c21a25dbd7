"""Publishes the driver's and the robot's health on /diagnostics at ``diagnostics_rate``."""

import time
from collections.abc import Callable

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from std_msgs.msg import Header

from spot_common import crash_log
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.diagnostics import status as diagnostics
from spot_driver.diagnostics.stream_health import StreamMeter, stream_status
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork

STATE_STALE_AFTER = 2.0  # seconds without robot state before robot statuses go STALE


class DiagnosticsNode(PeriodicWork, Node):
    """Connection, time sync, lease, e-stop, power, battery, faults and per-stream rates."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_diagnostics", namespace=context.namespace)
        connection, supervisor, cache = context.connection, context.supervisor, context.cache
        rate = declare(self, "diagnostics_rate", 1.0)
        if not 0 < rate <= 10:
            raise ValueError("diagnostics_rate must be in (0, 10] Hz")
        self._connection, self._supervisor, self._cache = connection, supervisor, cache
        self._streams = lambda: [s for streams in context.streams for s in streams()]
        # More statuses from other nodes: fn(prefix, hardware_id) -> DiagnosticStatus.
        self.extras: list[Callable] = context.health
        self._meters: dict[str, StreamMeter] = {}
        ns = self.get_namespace().rstrip("/")
        self._prefix = f"{ns}/spot_driver: " if ns else "spot_driver: "
        self._hw = connection.config.hostname
        self._pub = self.create_publisher(DiagnosticArray, "/diagnostics", qos.STATE)
        self.every(1.0 / rate, self._publish)

    def _publish(self) -> None:
        self._pub.publish(DiagnosticArray(
            header=Header(stamp=self.get_clock().now().to_msg()), status=self.statuses()))

    def statuses(self) -> list:
        p, hw, conn = self._prefix, self._hw, self._connection
        connected, reason, down_for = conn.status()
        out = [diagnostics.connection(p, hw, diagnostics.ConnectionHealth(
            connected, reason, down_for, conn.reconnects, self._supervisor.heartbeat_rtt))]
        out.append(diagnostics.time_sync(p, hw, *conn.time_sync()))
        out.append(diagnostics.lease(p, hw, conn.lease_status()))
        state, age = self._cache.latest(), self._cache.age()
        fresh = state if age <= STATE_STALE_AFTER else None
        out.append(diagnostics.estop(p, hw, conn.estop_status(), fresh))
        for what, build in (("power", diagnostics.power), ("battery", diagnostics.battery),
                            ("faults", diagnostics.faults)):
            out.append(build(p, hw, fresh) if fresh is not None
                       else diagnostics.stale(p, hw, what, age))
        now = time.monotonic()
        for stream in self._streams():
            meter = self._meters.setdefault(stream.name, StreamMeter())
            reading = meter.read(stream, stream.enabled and stream.wanted(), now)
            out.append(stream_status(p, hw, reading))
        out.extend(extra(p, hw) for extra in self.extras)
        out.append(diagnostics.internal_errors(p, hw, *crash_log.count()))
        return out
