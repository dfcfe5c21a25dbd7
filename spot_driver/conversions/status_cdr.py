"""RobotState status sections straight to CDR bytes (the status half of the state cycle).

Produces what ``rclpy.serialization.serialize_message`` makes of the messages built by
``status`` (checked field by field in test_status_cdr.py), without building rclpy messages,
so the statuses can be published at the full robot-state rate. Each message is one list of
values and one ``struct`` pack, whose format is cached per shape (string lengths and
sequence counts), see ``cdr.ShapedMessage``. Enum values are the proto's.
"""

import math

from bosdyn.api import robot_state_pb2

from spot_driver.conversions.cdr import ENCAPSULATION, ShapedMessage, text
from spot_driver.conversions.time import NSEC, Stamp, duration_parts, local_stamp

_HEADER = ("i", "I", "S")
_BATTERY = (*_HEADER, "S", "d", "i", "I", "d", "d", "D", "B")
_BATTERY_ARRAY = ShapedMessage((*_HEADER, _BATTERY))
_ROS_BATTERY = ShapedMessage((*_HEADER, *"fffffffBBBB", "I", "I", "S", "S"))
_POWER = ShapedMessage((*_HEADER, "B", "S", "B", "B", "B", "B", "d", "i", "I"))
_ESTOP_ARRAY = ShapedMessage((*_HEADER, (*_HEADER, "S", "B", "B", "S")))
_WIFI = ShapedMessage((*_HEADER, "B", "S"))
_FEET = ShapedMessage((*_HEADER, ("d", "d", "d", "B", "d")))
_SYSTEM_FAULT = ("S", "i", "I", "i", "I", "i", "Q", "S", ("S",), "B")
_SYSTEM_FAULTS = ShapedMessage((*_HEADER, _SYSTEM_FAULT, _SYSTEM_FAULT))
_BEHAVIOR_FAULTS = ShapedMessage((*_HEADER, ("I", "i", "I", "B", "B")))
_MANIPULATOR = ShapedMessage((*_HEADER, "d", "B", "d", "d", "d", "B", "B", *"d" * 12))
_VECTOR3_STAMPED = ShapedMessage((*_HEADER, "d", "d", "d"))
_TIME_SYNC = ShapedMessage((*_HEADER, "B", "i", "I", "i", "I"))

_NAN = math.nan
_MISSING = robot_state_pb2.BatteryState.STATUS_MISSING
# sensor_msgs/BatteryState power_supply_status of a robot_state_pb2.BatteryState status
_ROS_BATTERY_STATUS = {
    robot_state_pb2.BatteryState.STATUS_CHARGING: 1,     # POWER_SUPPLY_STATUS_CHARGING
    robot_state_pb2.BatteryState.STATUS_DISCHARGING: 2,  # POWER_SUPPLY_STATUS_DISCHARGING
}
_HEALTH_UNKNOWN, _TECHNOLOGY_LION = 0, 2


class StatusSerializer:
    """CDR bytes of every status message of one RobotState, keyed like the node's topics.

    ``frame`` is the (prefixed) body frame of the status headers, ``hand_frame`` the frame
    of the end-effector force.
    """

    def __init__(self, frame: str = "body", hand_frame: str = "hand") -> None:
        self._frame = text(frame)
        self._hand = text(hand_frame)

    def serialize(self, state: robot_state_pb2.RobotState, stamp: Stamp,
                  skew_nsec: int) -> dict[str, bytes | list[bytes]]:
        """``battery_state`` is a list (one sensor_msgs/BatteryState per battery); the
        manipulator entries are present only when the state has a manipulator section."""
        batteries = self._batteries(state.battery_states, stamp, skew_nsec)
        out = {
            "battery": self._battery_array(batteries, stamp),
            "battery_state": [self._ros_battery(b) for b in batteries],
            "power": self.power_state(state.power_state, stamp, skew_nsec),
            "estop": self.estop_states(state.estop_states, stamp, skew_nsec),
            "wifi": self.wifi_state(state.comms_states, stamp),
            "feet": self.foot_states(state.foot_state, stamp),
            "system_faults": self.system_faults(state.system_fault_state, stamp, skew_nsec),
            "behavior_faults": self.behavior_faults(state.behavior_fault_state, stamp,
                                                    skew_nsec),
        }
        if state.HasField("manipulator_state"):
            manipulator = state.manipulator_state
            out["manipulation"] = self.manipulator_state(manipulator, stamp)
            out["end_effector_force"] = self.end_effector_force(manipulator, stamp)
        return out

    def _header(self, stamp: Stamp, frame: bytes | None = None) -> list:
        frame = self._frame if frame is None else frame
        return [ENCAPSULATION, stamp[0], stamp[1], len(frame) + 1, frame]

    @staticmethod
    def _batteries(batteries, stamp: Stamp, skew_nsec: int) -> list[tuple]:
        """Each battery's (stamp, identifier, charge %, runtime, current, voltage,
        temperatures, status), read once for both battery messages."""
        out = []
        for b in batteries:
            out.append((local_stamp(b.timestamp, skew_nsec) if b.HasField("timestamp")
                        else stamp,
                        text(b.identifier),
                        b.charge_percentage.value if b.HasField("charge_percentage") else _NAN,
                        duration_parts(b.estimated_runtime),
                        b.current.value if b.HasField("current") else _NAN,
                        b.voltage.value if b.HasField("voltage") else _NAN,
                        b.temperatures[:], b.status))
        return out

    def _battery_array(self, batteries: list[tuple], stamp: Stamp) -> bytes:
        """spot_msgs/BatteryStateArray."""
        frame = self._frame
        values = self._header(stamp)
        values.append(len(batteries))
        shape = [len(frame), len(batteries)]
        for (sec, nsec), ident, charge, runtime, current, voltage, temps, status in batteries:
            values += (sec, nsec, len(frame) + 1, frame, len(ident) + 1, ident, charge,
                       *runtime, current, voltage, len(temps), *temps, status)
            shape += (len(frame), len(ident), len(temps))
        return _BATTERY_ARRAY.pack(tuple(shape), values)

    def _ros_battery(self, battery: tuple) -> bytes:
        """sensor_msgs/BatteryState: percentage 0..1, mean temperature, location = the
        battery's identifier; unknown values NaN."""
        stamp, ident, charge, _runtime, current, voltage, temps, status = battery
        values = self._header(stamp)
        values += (voltage, sum(temps) / len(temps) if temps else _NAN, current,
                   _NAN, _NAN, _NAN, charge / 100.0,
                   _ROS_BATTERY_STATUS.get(status, 0), _HEALTH_UNKNOWN, _TECHNOLOGY_LION,
                   status != _MISSING, 0, 0, len(ident) + 1, ident, 1, b"")
        return _ROS_BATTERY.pack((len(self._frame), len(ident), 0), values)

    def power_state(self, power, stamp: Stamp, skew_nsec: int) -> bytes:
        """spot_msgs/PowerState."""
        if power.HasField("timestamp"):
            stamp = local_stamp(power.timestamp, skew_nsec)
        error = text(power.motor_power_error_message)
        values = self._header(stamp)
        values += (power.motor_power_state, len(error) + 1, error, power.shore_power_state,
                   power.robot_power_state, power.payload_ports_power_state,
                   power.wifi_radio_power_state,
                   power.locomotion_charge_percentage.value
                   if power.HasField("locomotion_charge_percentage") else _NAN,
                   *duration_parts(power.locomotion_estimated_runtime))
        return _POWER.pack((len(self._frame), len(error)), values)

    def estop_states(self, estops, stamp: Stamp, skew_nsec: int) -> bytes:
        """spot_msgs/EStopStateArray."""
        frame = self._frame
        values = self._header(stamp)
        values.append(len(estops))
        shape = [len(frame), len(estops)]
        for estop in estops:
            sec, nsec = (local_stamp(estop.timestamp, skew_nsec) if estop.HasField("timestamp")
                         else stamp)
            name, description = text(estop.name), text(estop.state_description)
            values += (sec, nsec, len(frame) + 1, frame, len(name) + 1, name, estop.type,
                       estop.state, len(description) + 1, description)
            shape += (len(frame), len(name), len(description))
        return _ESTOP_ARRAY.pack(tuple(shape), values)

    def wifi_state(self, comms_states, stamp: Stamp) -> bytes:
        """spot_msgs/WiFiState of the first comms state with a Wi-Fi section."""
        mode, essid = 0, b""
        for comms in comms_states:
            if comms.HasField("wifi_state"):
                wifi = comms.wifi_state
                mode, essid = wifi.current_mode, text(wifi.essid)
                break
        values = self._header(stamp)
        values += (mode, len(essid) + 1, essid)
        return _WIFI.pack((len(self._frame), len(essid)), values)

    def foot_states(self, feet, stamp: Stamp) -> bytes:
        """spot_msgs/FootStateArray."""
        values = self._header(stamp)
        values.append(len(feet))
        for foot in feet:
            p = foot.foot_position_rt_body
            values += (p.x, p.y, p.z, foot.contact,
                       foot.terrain.ground_mu_est if foot.HasField("terrain") else _NAN)
        return _FEET.pack((len(self._frame), len(feet)), values)

    def system_faults(self, faults, stamp: Stamp, skew_nsec: int) -> bytes:
        """spot_msgs/SystemFaultState."""
        values = self._header(stamp)
        shape = [len(self._frame)]
        for group in (faults.faults, faults.historical_faults):
            values.append(len(group))
            shape.append(len(group))
            for fault in group:
                name, error = text(fault.name), text(fault.error_message)
                attributes = [text(a) for a in fault.attributes]
                values += (len(name) + 1, name, *local_stamp(fault.onset_timestamp, skew_nsec),
                           *duration_parts(fault.duration), fault.code, fault.uid,
                           len(error) + 1, error, len(attributes))
                shape += (len(name), len(error), len(attributes))
                for attribute in attributes:
                    values += (len(attribute) + 1, attribute)
                    shape.append(len(attribute))
                values.append(fault.severity)
        return _SYSTEM_FAULTS.pack(tuple(shape), values)

    def behavior_faults(self, faults, stamp: Stamp, skew_nsec: int) -> bytes:
        """spot_msgs/BehaviorFaultState."""
        values = self._header(stamp)
        values.append(len(faults.faults))
        for fault in faults.faults:
            values += (fault.behavior_fault_id, *local_stamp(fault.onset_timestamp, skew_nsec),
                       fault.cause, fault.status)
        return _BEHAVIOR_FAULTS.pack((len(self._frame), len(faults.faults)), values)

    def manipulator_state(self, m, stamp: Stamp) -> bytes:
        """spot_msgs/ManipulatorState; the force is in the hand frame."""
        force = m.estimated_end_effector_force_in_hand
        values = self._header(stamp)
        values += (m.gripper_open_percentage, m.is_gripper_holding_item, force.x, force.y,
                   force.z, m.stow_state, m.carry_state)
        for velocity in (m.velocity_of_hand_in_odom, m.velocity_of_hand_in_vision):
            linear, angular = velocity.linear, velocity.angular
            values += (linear.x, linear.y, linear.z, angular.x, angular.y, angular.z)
        return _MANIPULATOR.pack((len(self._frame),), values)

    def end_effector_force(self, m, stamp: Stamp) -> bytes:
        """geometry_msgs/Vector3Stamped in the hand frame."""
        force = m.estimated_end_effector_force_in_hand
        values = self._header(stamp, self._hand)
        values += (force.x, force.y, force.z)
        return _VECTOR3_STAMPED.pack((len(self._hand),), values)

    def time_sync(self, stamp: Stamp, synchronized: bool, skew_nsec: int,
                  round_trip_nsec: int) -> bytes:
        """spot_msgs/TimeSyncState (header without a frame, as the message path sends it)."""
        values = self._header(stamp, b"")
        values += (synchronized, *divmod(int(skew_nsec), NSEC),
                   *divmod(int(round_trip_nsec), NSEC))
        return _TIME_SYNC.pack((0,), values)
