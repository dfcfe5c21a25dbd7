"""Health of the driver and the robot as diagnostic_msgs statuses (pure functions).

Each function turns one aspect (connection, time sync, lease, e-stop, power, battery, faults,
one data stream) into a ``DiagnosticStatus`` with a level, a sentence and key/values.
"""

from dataclasses import dataclass

from bosdyn.api import robot_state_pb2
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

from spot_driver.core.connection import LeaseStatus

OK, WARN, ERROR, STALE = 0, 1, 2, 3  # DiagnosticStatus levels (bytes in the message)
LOW_BATTERY_PERCENT = 20.0
CRITICAL_BATTERY_PERCENT = 10.0
MAX_SKEW_RTT_NSEC = 250_000_000  # round trips above this make commands late: warn


def diagnostic(name: str, level: int, message: str, hardware_id: str,
               **values) -> DiagnosticStatus:
    """A status with ``values`` as key/value strings (every health status is built by it:
    the diagnostics modules' and other capabilities' health)."""
    return DiagnosticStatus(
        level=bytes([level]), name=name, message=message, hardware_id=hardware_id,
        values=[KeyValue(key=k, value=str(v)) for k, v in values.items()])


@dataclass(frozen=True)
class ConnectionHealth:
    connected: bool
    reason: str  # why it is down
    down_for: float  # seconds since it went down
    reconnects: int
    heartbeat_rtt: float  # seconds


def internal_errors(prefix: str, hw: str, count: int, last: str) -> DiagnosticStatus:
    """The driver's own defects met so far (``crash_log``): any is an error."""
    name = f"{prefix}internal errors"
    if not count:
        return diagnostic(name, OK, "none", hw, count=0)
    return diagnostic(name, ERROR, f"{count} internal error(s); last: {last}", hw, count=count)


def connection(prefix: str, hw: str, health: ConnectionHealth) -> DiagnosticStatus:
    name = f"{prefix}connection"
    if health.connected:
        return diagnostic(name, OK, "connected", hw, reconnects=health.reconnects,
                       heartbeat_rtt_ms=f"{health.heartbeat_rtt * 1e3:.1f}")
    return diagnostic(name, ERROR, f"robot not connected for {health.down_for:.1f} s: "
                   f"{health.reason}; reconnecting", hw, reconnects=health.reconnects)


def time_sync(prefix: str, hw: str, synced: bool, skew_ns: int, rtt_ns: int) -> DiagnosticStatus:
    name = f"{prefix}time sync"
    values = dict(clock_skew_s=f"{skew_ns / 1e9:.6f}", round_trip_ms=f"{rtt_ns / 1e6:.2f}")
    if not synced:
        return diagnostic(name, ERROR, "time sync not established", hw, **values)
    if rtt_ns > MAX_SKEW_RTT_NSEC:
        return diagnostic(name, WARN, f"round trip {rtt_ns / 1e6:.0f} ms: commands arrive late",
                       hw, **values)
    return diagnostic(name, OK, "synchronized", hw, **values)


def lease(prefix: str, hw: str, status: LeaseStatus) -> DiagnosticStatus:
    name = f"{prefix}lease"
    values = dict(held=status.held, owner=status.owner or "none")
    if status.held:
        return diagnostic(name, OK, "driver holds the body lease", hw, **values)
    if status.lost_to:
        return diagnostic(name, WARN, f"lease held by {status.lost_to}; commands refused until "
                       f"'claim_lease' with take", hw, **values)
    owner = f"; held by {status.owner}" if status.owner else ""
    return diagnostic(name, OK, f"driver holds no lease{owner}", hw, **values)


def estop(prefix: str, hw: str, endpoint: str, state: robot_state_pb2.RobotState | None
          ) -> DiagnosticStatus:
    name = f"{prefix}e-stop"
    values = {"driver_endpoint": endpoint}
    if state is not None:
        stopped = [s.name for s in state.estop_states
                   if s.state == robot_state_pb2.EStopState.STATE_ESTOPPED]
        values["stopped_by"] = ", ".join(stopped) or "none"
        if stopped:
            return diagnostic(name, WARN, f"robot e-stopped by {', '.join(stopped)}", hw, **values)
    if endpoint not in ("ok", "none"):
        return diagnostic(name, ERROR, f"driver e-stop endpoint: {endpoint}", hw, **values)
    return diagnostic(name, OK, "not e-stopped", hw, **values)


def power(prefix: str, hw: str, state: robot_state_pb2.RobotState) -> DiagnosticStatus:
    power_state = state.power_state
    motor = robot_state_pb2.PowerState.MotorPowerState.Name(power_state.motor_power_state)
    shore = robot_state_pb2.PowerState.ShorePowerState.Name(power_state.shore_power_state)
    return diagnostic(f"{prefix}power", OK, motor.removeprefix("MOTOR_POWER_STATE_").lower()
                   .replace("_", " "), hw, motor_power=motor, shore_power=shore)


def battery(prefix: str, hw: str, state: robot_state_pb2.RobotState) -> DiagnosticStatus:
    name = f"{prefix}battery"
    if not state.battery_states:
        return diagnostic(name, WARN, "no battery reported", hw)
    b = state.battery_states[0]
    percent = b.charge_percentage.value
    values = dict(charge_percent=f"{percent:.1f}",
                  runtime_s=f"{b.estimated_runtime.seconds}",
                  status=robot_state_pb2.BatteryState.Status.Name(b.status))
    if percent <= CRITICAL_BATTERY_PERCENT:
        return diagnostic(name, ERROR, f"battery critical: {percent:.0f} %", hw, **values)
    if percent <= LOW_BATTERY_PERCENT:
        return diagnostic(name, WARN, f"battery low: {percent:.0f} %", hw, **values)
    return diagnostic(name, OK, f"{percent:.0f} %", hw, **values)


def faults(prefix: str, hw: str, state: robot_state_pb2.RobotState) -> DiagnosticStatus:
    behavior = [robot_state_pb2.BehaviorFault.Cause.Name(f.cause)
                for f in state.behavior_fault_state.faults]
    system = [f.name for f in state.system_fault_state.faults]
    values = dict(behavior_faults=", ".join(behavior) or "none",
                  system_faults=", ".join(system) or "none")
    if behavior or system:
        return diagnostic(f"{prefix}faults", ERROR,
                       f"faults: {', '.join(behavior + system)}", hw, **values)
    return diagnostic(f"{prefix}faults", OK, "no faults", hw, **values)


def stale(prefix: str, hw: str, what: str, age: float) -> DiagnosticStatus:
    message = "no robot state yet" if age == float("inf") else \
        f"no robot state for {age:.1f} s"
    return diagnostic(f"{prefix}{what}", STALE, message, hw)


def localization(prefix: str, hw: str, waypoint_id: str, map_waypoints: int,
                 age: float) -> DiagnosticStatus:
    """GraphNav localization: OK when localized to a waypoint, WARN when a map is loaded but
    the robot is not localized on it, OK (nothing to do) without a map."""
    name = f"{prefix}graph_nav localization"
    if age == float("inf"):
        return diagnostic(name, STALE, "no localization answer yet", hw)
    if waypoint_id:
        return diagnostic(name, OK, f"localized at waypoint {waypoint_id}", hw,
                       waypoint=waypoint_id, map_waypoints=map_waypoints, age_s=f"{age:.1f}")
    if map_waypoints:
        return diagnostic(name, WARN, "a map is loaded but the robot is not localized on it", hw,
                       map_waypoints=map_waypoints)
    return diagnostic(name, OK, "no map loaded", hw, map_waypoints=0)
