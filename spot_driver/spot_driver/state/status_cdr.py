"""RobotState status sections straight to CDR bytes (the status half of the state cycle).

Produces what ``rclpy.serialization.serialize_message`` makes of the messages built by
``status`` (checked field by field in test_state_status_cdr_units.py), without building rclpy
messages, so the statuses can be published at the full robot-state rate.

Two steps: a state's status sections are first read into plain tuples (``Sections``), then
each message is one list of values and one ``struct`` pack, whose format is cached per shape
(string lengths and sequence counts), see ``cdr.ShapedMessage``. Enum values are the
proto's.
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


# Sections: a state's status sections as plain values, what the packers below take.
#   batteries   [(stamp, identifier, charge %, runtime, current, voltage, temperatures, status)]
#   power       (stamp, motor, error message, shore, robot, payload ports, wifi radio,
#                locomotion charge %, locomotion runtime)
#   estops      [(stamp, name, type, state, description)]
#   wifi        (mode, essid)
#   feet        [(x, y, z, contact, ground mu)]
#   faults, historical_faults
#               [(name, onset, duration, code, uid, error message, attributes, severity)]
#   behavior_faults [(id, onset, cause, status)]
#   manipulator (gripper %, holding, force x y z, stow, carry, hand twist in odom, in vision)
#               or None
# Unset wrappers read NaN; stamps are local (sec, nanosec); strings are bytes (``text``).
Sections = dict

def read_sections(state: robot_state_pb2.RobotState, stamp: Stamp, skew_nsec: int) -> Sections:
    """A state's status sections through protobuf's objects (see ``Sections``)."""
    power = state.power_state
    mode, essid = 0, b""
    for comms in state.comms_states:
        if comms.HasField("wifi_state"):
            mode, essid = comms.wifi_state.current_mode, text(comms.wifi_state.essid)
            break
    manipulator = None
    if state.HasField("manipulator_state"):
        m = state.manipulator_state
        force = m.estimated_end_effector_force_in_hand
        manipulator = [m.gripper_open_percentage, m.is_gripper_holding_item, force.x, force.y,
                       force.z, m.stow_state, m.carry_state]
        for velocity in (m.velocity_of_hand_in_odom, m.velocity_of_hand_in_vision):
            linear, angular = velocity.linear, velocity.angular
            manipulator += (linear.x, linear.y, linear.z, angular.x, angular.y, angular.z)
        manipulator = tuple(manipulator)
    faults = state.system_fault_state
    return {
        "batteries": [_battery(b, stamp, skew_nsec) for b in state.battery_states],
        "power": (local_stamp(power.timestamp, skew_nsec) if power.HasField("timestamp")
                  else stamp, power.motor_power_state,
                  text(power.motor_power_error_message), power.shore_power_state,
                  power.robot_power_state, power.payload_ports_power_state,
                  power.wifi_radio_power_state,
                  power.locomotion_charge_percentage.value
                  if power.HasField("locomotion_charge_percentage") else _NAN,
                  duration_parts(power.locomotion_estimated_runtime)),
        "estops": [(local_stamp(e.timestamp, skew_nsec) if e.HasField("timestamp") else stamp,
                    text(e.name), e.type, e.state, text(e.state_description))
                   for e in state.estop_states],
        "wifi": (mode, essid),
        "feet": [((p := f.foot_position_rt_body).x, p.y, p.z, f.contact,
                  f.terrain.ground_mu_est if f.HasField("terrain") else _NAN)
                 for f in state.foot_state],
        "faults": [_fault(f, skew_nsec) for f in faults.faults],
        "historical_faults": [_fault(f, skew_nsec) for f in faults.historical_faults],
        "behavior_faults": [(f.behavior_fault_id, local_stamp(f.onset_timestamp, skew_nsec),
                             f.cause, f.status) for f in state.behavior_fault_state.faults],
        "manipulator": manipulator,
    }


def _fault(f, skew_nsec: int) -> tuple:
    """One system fault's section."""
    return (text(f.name), local_stamp(f.onset_timestamp, skew_nsec), duration_parts(f.duration),
            f.code, f.uid, text(f.error_message), [text(a) for a in f.attributes], f.severity)


def _battery(b, stamp: Stamp, skew_nsec: int) -> tuple:
    """One battery's section (the hot one: four per state on a robot), its wrappers read
    inline."""
    has = b.HasField
    return (local_stamp(b.timestamp, skew_nsec) if has("timestamp") else stamp,
            text(b.identifier),
            b.charge_percentage.value if has("charge_percentage") else _NAN,
            duration_parts(b.estimated_runtime),
            b.current.value if has("current") else _NAN,
            b.voltage.value if has("voltage") else _NAN, b.temperatures[:], b.status)


class StatusSerializer:
    """CDR bytes of every status message of one RobotState, keyed like the node's topics.

    ``frame`` is the (prefixed) body frame of the status headers, ``hand_frame`` the frame
    of the end-effector force.
    """

    def __init__(self, frame: str = "body", hand_frame: str = "hand") -> None:
        self._frame = text(frame)
        self._frame_field = (len(self._frame) + 1, self._frame)  # CDR string: length, bytes
        self._hand = text(hand_frame)

    def serialize(self, state: robot_state_pb2.RobotState, stamp: Stamp,
                  skew_nsec: int) -> dict[str, bytes | list[bytes]]:
        """``battery_state`` is a list (one sensor_msgs/BatteryState per battery); the
        manipulator entries are present only when the state has a manipulator section."""
        return self.pack(read_sections(state, stamp, skew_nsec), stamp)

    def pack(self, sections: Sections, stamp: Stamp) -> dict[str, bytes | list[bytes]]:
        """Every status message of ``sections``."""
        batteries = sections["batteries"]
        out = {
            "battery": self._battery_array(batteries, stamp),
            "battery_state": [self._ros_battery(b) for b in batteries],
            "power": self._power(sections["power"]),
            "estop": self._estops(sections["estops"], stamp),
            "wifi": self._wifi(sections["wifi"], stamp),
            "feet": self._feet(sections["feet"], stamp),
            "system_faults": self._system_faults(sections["faults"],
                                                 sections["historical_faults"], stamp),
            "behavior_faults": self._behavior_faults(sections["behavior_faults"], stamp),
        }
        manipulator = sections["manipulator"]
        if manipulator is not None:
            out["manipulation"] = self._manipulator(manipulator, stamp)
            out["end_effector_force"] = self._end_effector_force(manipulator, stamp)
        return out

    def _header(self, stamp: Stamp) -> list:
        return [ENCAPSULATION, *stamp, *self._frame_field]

    def _battery_array(self, batteries: list[tuple], stamp: Stamp) -> bytes:
        """spot_msgs/BatteryStateArray."""
        frame_field, frame_length = self._frame_field, len(self._frame)
        values = self._header(stamp)
        values.append(len(batteries))
        shape = [frame_length, len(batteries)]
        for battery_stamp, ident, charge, runtime, current, voltage, temps, status in batteries:
            values += (*battery_stamp, *frame_field, len(ident) + 1, ident, charge,
                       *runtime, current, voltage, len(temps), *temps, status)
            shape += (frame_length, len(ident), len(temps))
        return _BATTERY_ARRAY.pack(tuple(shape), values)

    def _ros_battery(self, battery: tuple) -> bytes:
        """sensor_msgs/BatteryState: percentage 0..1, mean temperature, location = the
        battery's identifier; unknown values NaN."""
        stamp, ident, charge, _runtime, current, voltage, temps, status = battery
        return _ROS_BATTERY.pack((len(self._frame), len(ident), 0), (
            ENCAPSULATION, *stamp, *self._frame_field, voltage,
            sum(temps) / len(temps) if temps else _NAN, current, _NAN, _NAN, _NAN,
            charge / 100.0, _ROS_BATTERY_STATUS.get(status, 0), _HEALTH_UNKNOWN,
            _TECHNOLOGY_LION, status != _MISSING, 0, 0, len(ident) + 1, ident, 1, b""))

    def _power(self, power: tuple) -> bytes:
        """spot_msgs/PowerState."""
        stamp, motor, error, shore, robot, payload, wifi, charge, runtime = power
        return _POWER.pack((len(self._frame), len(error)), (
            ENCAPSULATION, *stamp, *self._frame_field, motor, len(error) + 1, error, shore,
            robot, payload, wifi, charge, *runtime))

    def _estops(self, estops: list[tuple], stamp: Stamp) -> bytes:
        """spot_msgs/EStopStateArray."""
        frame_field, frame_length = self._frame_field, len(self._frame)
        values = self._header(stamp)
        values.append(len(estops))
        shape = [frame_length, len(estops)]
        for estop_stamp, name, kind, state, description in estops:
            values += (*estop_stamp, *frame_field, len(name) + 1, name, kind, state,
                       len(description) + 1, description)
            shape += (frame_length, len(name), len(description))
        return _ESTOP_ARRAY.pack(tuple(shape), values)

    def _wifi(self, wifi: tuple, stamp: Stamp) -> bytes:
        """spot_msgs/WiFiState of the first comms state with a Wi-Fi section."""
        mode, essid = wifi
        return _WIFI.pack((len(self._frame), len(essid)), (
            ENCAPSULATION, *stamp, *self._frame_field, mode, len(essid) + 1, essid))

    def _feet(self, feet: list[tuple], stamp: Stamp) -> bytes:
        """spot_msgs/FootStateArray."""
        values = self._header(stamp)
        values.append(len(feet))
        for foot in feet:
            values += foot
        return _FEET.pack((len(self._frame), len(feet)), values)

    def _system_faults(self, faults: list[tuple], historical: list[tuple],
                       stamp: Stamp) -> bytes:
        """spot_msgs/SystemFaultState."""
        values = self._header(stamp)
        shape = [len(self._frame)]
        for group in (faults, historical):
            values.append(len(group))
            shape.append(len(group))
            for name, onset, duration, code, uid, error, attributes, severity in group:
                values += (len(name) + 1, name, *onset, *duration, code, uid,
                           len(error) + 1, error, len(attributes))
                shape += (len(name), len(error), len(attributes))
                for attribute in attributes:
                    values += (len(attribute) + 1, attribute)
                    shape.append(len(attribute))
                values.append(severity)
        return _SYSTEM_FAULTS.pack(tuple(shape), values)

    def _behavior_faults(self, faults: list[tuple], stamp: Stamp) -> bytes:
        """spot_msgs/BehaviorFaultState."""
        values = self._header(stamp)
        values.append(len(faults))
        for fault_id, onset, cause, status in faults:
            values += (fault_id, *onset, cause, status)
        return _BEHAVIOR_FAULTS.pack((len(self._frame), len(faults)), values)

    def _manipulator(self, manipulator: tuple, stamp: Stamp) -> bytes:
        """spot_msgs/ManipulatorState; the force is in the hand frame."""
        return _MANIPULATOR.pack((len(self._frame),), (
            ENCAPSULATION, *stamp, *self._frame_field, *manipulator))

    def _end_effector_force(self, manipulator: tuple, stamp: Stamp) -> bytes:
        """geometry_msgs/Vector3Stamped in the hand frame."""
        return _VECTOR3_STAMPED.pack((len(self._hand),), (
            ENCAPSULATION, *stamp, len(self._hand) + 1, self._hand, *manipulator[2:5]))

    def time_sync(self, stamp: Stamp, synchronized: bool, skew_nsec: int,
                  round_trip_nsec: int) -> bytes:
        """spot_msgs/TimeSyncState (header without a frame, as the message path sends it)."""
        return _TIME_SYNC.pack((0,), (
            ENCAPSULATION, *stamp, 1, b"", synchronized, *divmod(int(skew_nsec), NSEC),
            *divmod(int(round_trip_nsec), NSEC)))
