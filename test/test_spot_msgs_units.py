"""The generated spot_msgs (and tf2_msgs) types import, serialize and round-trip."""

import importlib
from array import array
from pathlib import Path

import pytest
from bosdyn.api import basic_command_pb2, robot_state_pb2
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2
from rclpy.serialization import deserialize_message, serialize_message

MSG_DIR = Path(__file__).resolve().parent.parent / "spot_msgs" / "msg"
MSG_NAMES = sorted(p.stem for p in MSG_DIR.glob("*.msg"))


def _sample_value(type_name: str, depth: int):
    """A non-default value of a ROS field type, built from the type string."""
    scalars = {
        "boolean": True, "float": 1.5, "double": -2.25, "string": "spot",
        "int8": -3, "uint8": 7, "int16": -300, "uint16": 300, "int32": -70000,
        "uint32": 70000, "int64": -(2**40), "uint64": 2**40, "octet": b"\x05",
    }
    if type_name.startswith("sequence<"):
        inner = type_name[len("sequence<"):-1]
        return [_sample_value(inner, depth), _sample_value(inner, depth)]
    if type_name in scalars:
        return scalars[type_name]
    package, name = type_name.split("/")
    cls = getattr(importlib.import_module(f"{package}.msg"), name)
    return _filled(cls(), depth + 1)


_ARRAY_TYPECODES = {"sequence<double>": "d", "sequence<float>": "f", "sequence<uint32>": "I",
                    "sequence<uint8>": "B"}


def _filled(msg, depth: int = 0):
    if depth > 4:
        return msg
    for field, type_name in msg.get_fields_and_field_types().items():
        value = _sample_value(type_name, depth)
        typecode = _ARRAY_TYPECODES.get(type_name)
        setattr(msg, field, array(typecode, value) if typecode else value)
    return msg


@pytest.mark.parametrize("name", MSG_NAMES)
def test_message_round_trips(name):
    cls = getattr(importlib.import_module("spot_msgs.msg"), name)
    original = _filled(cls())
    data = serialize_message(original)
    copy = deserialize_message(data, cls)
    assert copy == original
    assert copy != cls() or not cls.get_fields_and_field_types()


def test_tf2_msgs_is_available():
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    message = TFMessage(transforms=[TransformStamped(child_frame_id="body")])
    assert deserialize_message(serialize_message(message), TFMessage) == message


@pytest.mark.parametrize("msg_name, prefix, enum", [
    ("BatteryState", "STATUS_", robot_state_pb2.BatteryState.Status),
    ("PowerState", "MOTOR_POWER_STATE_", robot_state_pb2.PowerState.MotorPowerState),
    ("PowerState", "SHORE_POWER_STATE_", robot_state_pb2.PowerState.ShorePowerState),
    ("PowerState", "ROBOT_POWER_STATE_", robot_state_pb2.PowerState.RobotPowerState),
    ("PowerState", "PAYLOAD_PORTS_POWER_STATE_",
     robot_state_pb2.PowerState.PayloadPortsPowerState),
    ("PowerState", "WIFI_RADIO_POWER_STATE_", robot_state_pb2.PowerState.WifiRadioPowerState),
    ("EStopState", "TYPE_", robot_state_pb2.EStopState.Type),
    ("EStopState", "STATE_", robot_state_pb2.EStopState.State),
    ("WiFiState", "MODE_", robot_state_pb2.WiFiState.Mode),
    ("FootState", "CONTACT_", robot_state_pb2.FootState.Contact),
    ("SystemFault", "SEVERITY_", robot_state_pb2.SystemFault.Severity),
    ("BehaviorFault", "CAUSE_", robot_state_pb2.BehaviorFault.Cause),
    ("BehaviorFault", "STATUS_", robot_state_pb2.BehaviorFault.Status),
    ("CommandFeedback", "STATUS_", basic_command_pb2.RobotCommandFeedbackStatus.Status),
    ("MobilityParams", "HINT_", spot_command_pb2.LocomotionHint),
    ("MobilityParams", "STAIRS_MODE_", spot_command_pb2.MobilityParams.StairsMode),
])
def test_enum_constants_equal_the_proto_values(msg_name, prefix, enum):
    cls = getattr(importlib.import_module("spot_msgs.msg"), msg_name)
    constants = {k: v for k, v in vars(cls).items() if k.startswith(prefix) and k.isupper()}
    proto_values = dict(enum.items())
    assert constants, f"{msg_name} has no {prefix}* constants"
    for name, value in constants.items():
        assert proto_values.get(name) == value, f"{msg_name}.{name}={value}"
    assert set(proto_values.values()) == set(constants.values())
