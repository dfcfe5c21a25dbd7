"""RobotState status sections straight to CDR bytes (the status half of the state cycle).

Produces what ``rclpy.serialization.serialize_message`` makes of the messages built by
``status`` (checked field by field in test_status_cdr.py), without building rclpy messages,
so the statuses can be published at the full robot-state rate.

Two steps: a state's status sections are first read into plain tuples (``Sections``), then
each message is one list of values and one ``struct`` pack, whose format is cached per shape
(string lengths and sequence counts), see ``cdr.ShapedMessage``. The read goes through a
``StatusTemplate`` of an earlier state of the same shape when there is one (its numbers
from the wire bytes, see ``wire.ShapeTemplate``), else through protobuf's objects, and that
state becomes the next template. Enum values are the proto's.
"""

import itertools
import math
import operator

from bosdyn.api import robot_state_pb2
from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from spot_driver.conversions.cdr import ENCAPSULATION, ShapedMessage, text
from spot_driver.conversions.time import NSEC, Stamp, duration_parts, local_stamp
from spot_driver.state.wire import (
    Path,
    ShapeTemplate,
    TemplateCache,
    is_time,
)

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
# A template read adds kinematic_bytes, the serialized kinematic state.
Sections = dict

# Where each value of a section element comes from while the template's shape holds (a
# path under the element): "d" a double, "t" a Timestamp made local, "t?" the same or the
# header stamp when the element has no timestamp, "r" a Duration, "l" a packed double
# list; None a value that cannot change without changing the shape.
_ELEMENT_SPECS = {
    "batteries": (("t?", ("timestamp",)), None, ("d", ("charge_percentage", "value")),
                  ("r", ("estimated_runtime",)), ("d", ("current", "value")),
                  ("d", ("voltage", "value")), ("l", ("temperatures",)), None),
    "power": (("t?", ("timestamp",)), None, None, None, None, None, None,
              ("d", ("locomotion_charge_percentage", "value")),
              ("r", ("locomotion_estimated_runtime",))),
    "estops": (("t?", ("timestamp",)), None, None, None, None),
    "wifi": (None, None),
    "feet": (*(("d", ("foot_position_rt_body", axis)) for axis in "xyz"), None,
             ("d", ("terrain", "ground_mu_est"))),
    "faults": (None, ("t", ("onset_timestamp",)), ("r", ("duration",)), None, None, None,
               None, None),
    "behavior_faults": (None, ("t", ("onset_timestamp",)), None, None),
    "manipulator": (("d", ("gripper_open_percentage",)), None,
                    *(("d", ("estimated_end_effector_force_in_hand", axis)) for axis in "xyz"),
                    None, None,
                    *(("d", (velocity, part, axis))
                      for velocity in ("velocity_of_hand_in_odom", "velocity_of_hand_in_vision")
                      for part in ("linear", "angular") for axis in "xyz")),
}
_ELEMENT_SPECS["historical_faults"] = _ELEMENT_SPECS["faults"]
# The RobotState path of each section (repeated sections: of their elements, by index).
_SECTION_PATHS = {
    "batteries": ("battery_states",), "power": ("power_state",), "estops": ("estop_states",),
    "wifi": None, "feet": ("foot_state",), "faults": ("system_fault_state", "faults"),
    "historical_faults": ("system_fault_state", "historical_faults"),
    "behavior_faults": ("behavior_fault_state", "faults"), "manipulator": ("manipulator_state",),
}
_SINGULAR = ("power", "wifi", "manipulator")


def read_sections(state: robot_state_pb2.RobotState, stamp: Stamp, skew_nsec: int) -> Sections:
    """A state's status sections through protobuf's objects (see ``Sections``)."""
    def stamp_of(message) -> Stamp:
        return local_stamp(message.timestamp, skew_nsec) if message.HasField("timestamp") \
            else stamp

    def wrapped(message, field: str) -> float:
        return getattr(message, field).value if message.HasField(field) else _NAN

    def fault(f) -> tuple:
        return (text(f.name), local_stamp(f.onset_timestamp, skew_nsec),
                duration_parts(f.duration), f.code, f.uid, text(f.error_message),
                [text(a) for a in f.attributes], f.severity)

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
        "batteries": [(stamp_of(b), text(b.identifier), wrapped(b, "charge_percentage"),
                       duration_parts(b.estimated_runtime), wrapped(b, "current"),
                       wrapped(b, "voltage"), b.temperatures[:], b.status)
                      for b in state.battery_states],
        "power": (stamp_of(power), power.motor_power_state,
                  text(power.motor_power_error_message), power.shore_power_state,
                  power.robot_power_state, power.payload_ports_power_state,
                  power.wifi_radio_power_state,
                  wrapped(power, "locomotion_charge_percentage"),
                  duration_parts(power.locomotion_estimated_runtime)),
        "estops": [(stamp_of(e), text(e.name), e.type, e.state, text(e.state_description))
                   for e in state.estop_states],
        "wifi": (mode, essid),
        "feet": [(f.foot_position_rt_body.x, f.foot_position_rt_body.y,
                  f.foot_position_rt_body.z, f.contact,
                  f.terrain.ground_mu_est if f.HasField("terrain") else _NAN)
                 for f in state.foot_state],
        "faults": [fault(f) for f in faults.faults],
        "historical_faults": [fault(f) for f in faults.historical_faults],
        "behavior_faults": [(f.behavior_fault_id, local_stamp(f.onset_timestamp, skew_nsec),
                             f.cause, f.status) for f in state.behavior_fault_state.faults],
        "manipulator": manipulator,
    }


def _present(message, path: Path) -> bool:
    """Whether the sub-message at ``path`` (names and indices) is set in ``message``."""
    for step in path[:-1]:
        message = message[step] if isinstance(step, int) else getattr(message, step)
    return message.HasField(path[-1])


class StatusTemplate:
    """Reads the status sections of states shaped like ``state`` from their wire bytes.

    Each section element becomes one ``itemgetter`` over a pool of this state's numbers
    (doubles, local stamps, durations, double lists) and the sample's constants. Stamps and
    durations are decoded once per distinct raw value (they repeat across sections and
    states). Sections the statuses do not read (the kinematic state, which has a template of
    its own, terrain, system and behavior state) are not checked, only their lengths.
    """

    def __init__(self, data: bytes, state: robot_state_pb2.RobotState,
                 sample: Sections) -> None:
        self._wire = wire = ShapeTemplate(
            data, state.DESCRIPTOR,
            opaque=lambda path, field: path[0] not in _READ or is_time(path, field))
        double_slot = {path: i for i, path in enumerate(wire.doubles)}
        blob_slot = {path: i for i, path in enumerate(wire.blobs)}
        stamps, durations, lists, constants = [], [], [], []

        def time_slots(path: Path) -> int:
            return blob_slot.get(path, len(wire.blobs))  # absent: the b"" after the blobs

        def ref(entry, value, base: Path) -> tuple[str, int]:
            kind, path = (None, ()) if entry is None else (entry[0], base + entry[1])
            if kind == "d" and path in double_slot:
                return "d", double_slot[path]
            if kind == "t?" and not _present(state, path):
                return "h", 0
            if kind in ("t", "t?"):
                stamps.append(time_slots(path))
                return "s", len(stamps) - 1
            if kind == "r":
                durations.append(time_slots(path))
                return "r", len(durations) - 1
            if kind == "l" and value:
                first = double_slot[(*path, 0)]
                lists.append((first, first + len(value)))
                return "l", len(lists) - 1
            constants.append(value)
            return "c", len(constants) - 1

        refs: dict[str, list] = {}
        for key, spec in _ELEMENT_SPECS.items():
            elements = [sample[key]] if key in _SINGULAR else sample[key]
            if elements == [None]:
                refs[key] = None
                continue
            base = _SECTION_PATHS[key] or ()
            refs[key] = [[ref(entry, value, base if key in _SINGULAR else (*base, i))
                          for entry, value in zip(spec, element, strict=True)]
                         for i, element in enumerate(elements)]
        sizes = [0, len(wire.doubles), len(stamps), len(durations), len(lists), 1]
        starts = dict(zip("dsrlhc", itertools.accumulate(sizes), strict=True))
        self._getters: dict[str, object] = {}
        for key, element_refs in refs.items():
            if element_refs is None:
                self._getters[key] = None
                continue
            getters = [operator.itemgetter(*(starts[kind] + i for kind, i in element))
                       for element in element_refs]
            self._getters[key] = getters[0] if key in _SINGULAR else getters
        self._constants = tuple(constants)
        self._stamp_blobs = operator.itemgetter(*stamps, 0, 0)  # (, 0, 0): always a tuple
        self._duration_blobs = operator.itemgetter(*durations, 0, 0)
        self._lists = lists
        self._stamps: dict[bytes, Stamp] = {}  # local stamps for self._skew
        self._skew: int | None = None
        self._durations: dict[bytes, Stamp] = {}
        self._kinematics = blob_slot.get(_KINEMATICS)

    def read(self, data: bytes, stamp: Stamp, skew_nsec: int) -> Sections | None:
        """The sections of ``data`` (a serialized RobotState), or None when it is not shaped
        like the template."""
        numbers = self._wire.read(data)
        if numbers is None:
            return None
        doubles, blobs = numbers
        if skew_nsec != self._skew or len(self._stamps) > _MAX_CACHED:
            self._stamps.clear()
            self._skew = skew_nsec
        if len(self._durations) > _MAX_CACHED:
            self._durations.clear()
        known, times = self._stamps, self._stamp_blobs(blobs)[:-2]
        stamps = [known.get(raw) or self._stamp(raw, skew_nsec) for raw in times]
        known, times = self._durations, self._duration_blobs(blobs)[:-2]
        durations = [known.get(raw) or self._duration(raw) for raw in times]
        lists = tuple(list(doubles[a:b]) for a, b in self._lists)
        pool = (*doubles, *stamps, *durations, *lists, stamp, *self._constants)
        out = {"kinematic_bytes": None if self._kinematics is None
               else blobs[self._kinematics]}
        for key, getter in self._getters.items():
            if getter is None:
                out[key] = None
            elif key in _SINGULAR:
                out[key] = getter(pool)
            else:
                out[key] = [get(pool) for get in getter]
        return out

    def _stamp(self, raw: bytes, skew_nsec: int) -> Stamp:
        local = self._stamps[raw] = local_stamp(Timestamp.FromString(raw), skew_nsec)
        return local

    def _duration(self, raw: bytes) -> Stamp:
        parts = self._durations[raw] = duration_parts(Duration.FromString(raw))
        return parts


_MAX_CACHED = 256  # decoded stamps and durations kept
_KINEMATICS = ("kinematic_state",)
_READ = {"power_state", "battery_states", "comms_states", "system_fault_state", "estop_states",
         "behavior_fault_state", "foot_state", "manipulator_state"}


class StatusSerializer:
    """CDR bytes of every status message of one RobotState, keyed like the node's topics.

    ``frame`` is the (prefixed) body frame of the status headers, ``hand_frame`` the frame
    of the end-effector force.
    """

    def __init__(self, frame: str = "body", hand_frame: str = "hand") -> None:
        self._frame = text(frame)
        self._frame_field = (len(self._frame) + 1, self._frame)  # CDR string: length, bytes
        self._hand = text(hand_frame)
        self.templates = TemplateCache()
        self.kinematic_bytes: bytes | None = None

    def serialize(self, state: robot_state_pb2.RobotState, stamp: Stamp,
                  skew_nsec: int) -> dict[str, bytes | list[bytes]]:
        """``battery_state`` is a list (one sensor_msgs/BatteryState per battery); the
        manipulator entries are present only when the state has a manipulator section.
        ``kinematic_bytes`` is then the serialized kinematic state when a template read it
        (for ``StateSerializer.serialize``), else None."""
        data = state.SerializeToString()
        found = self.templates.read(data, stamp, skew_nsec)
        self.kinematic_bytes = None
        if found is not None:
            sections = found[0]
            self.kinematic_bytes = sections["kinematic_bytes"]
        else:
            sections = read_sections(state, stamp, skew_nsec)
            if self.templates.may_learn:
                try:
                    self.templates.add(len(data), StatusTemplate(data, state, sections))
                except ValueError:
                    pass  # fields this SDK does not know: stay on the protobuf path
        return self.pack(sections, stamp)

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
