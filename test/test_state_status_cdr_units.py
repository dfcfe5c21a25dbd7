"""The status CDR path produces what rclpy serializes from the message path.

Each status message is compared field by field after deserializing (its repr, so NaN equals
NaN) and by length; rclpy leaves CDR padding undefined, so raw bytes cannot be compared whole.
"""

import math

from bosdyn.api import robot_state_pb2
from geometry_msgs.msg import Vector3Stamped
from hypothesis import given, settings
from hypothesis import strategies as st
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import BatteryState as RosBatteryState
from std_msgs.msg import Header

from spot_driver.conversions.time import duration_msg_from_nsec, local_stamp, local_time_msg
from spot_driver.state import status
from spot_driver.state.status_cdr import StatusSerializer
from spot_msgs.msg import (
    BatteryStateArray,
    BehaviorFaultState,
    EStopStateArray,
    FootStateArray,
    ManipulatorState,
    PowerState,
    SystemFaultState,
    TimeSyncState,
    WiFiState,
)
from spot_sim import SimConfig
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import RobotClock
from spot_sim.state import state_report

SKEW = 12_345_678_901
text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
value = st.floats(-1e6, 1e6)
stamp_ns = st.integers(0, 2 * 10**18)


@st.composite
def robot_states(draw) -> robot_state_pb2.RobotState:
    state = robot_state_pb2.RobotState()
    for i in range(draw(st.integers(0, 4))):
        battery = state.battery_states.add(identifier=draw(text), status=draw(st.integers(0, 4)))
        if draw(st.booleans()):
            battery.timestamp.FromNanoseconds(draw(stamp_ns))
        for field in ("charge_percentage", "current", "voltage"):
            if draw(st.booleans()):
                getattr(battery, field).value = draw(value)
        battery.estimated_runtime.seconds = draw(st.integers(-1000, 10**6))
        battery.estimated_runtime.nanos = draw(st.integers(-999_999_999, 999_999_999))
        battery.temperatures.extend(draw(st.lists(value, max_size=i + 1)))
    power = state.power_state
    if draw(st.booleans()):
        power.timestamp.FromNanoseconds(draw(stamp_ns))
    power.motor_power_state = draw(st.integers(0, 5))
    power.motor_power_error_message = draw(text)
    power.shore_power_state = draw(st.integers(0, 2))
    if draw(st.booleans()):
        power.locomotion_charge_percentage.value = draw(value)
    power.locomotion_estimated_runtime.seconds = draw(st.integers(0, 10**6))
    for _ in range(draw(st.integers(0, 3))):
        estop = state.estop_states.add(name=draw(text), type=draw(st.integers(0, 2)),
                                       state=draw(st.integers(0, 2)),
                                       state_description=draw(text))
        if draw(st.booleans()):
            estop.timestamp.FromNanoseconds(draw(stamp_ns))
    for _ in range(draw(st.integers(0, 2))):
        comms = state.comms_states.add()
        if draw(st.booleans()):
            comms.wifi_state.current_mode = draw(st.integers(0, 2))
            comms.wifi_state.essid = draw(text)
    for _ in range(draw(st.integers(0, 4))):
        foot = state.foot_state.add(contact=draw(st.integers(0, 2)))
        foot.foot_position_rt_body.x, foot.foot_position_rt_body.y = draw(value), draw(value)
        if draw(st.booleans()):
            foot.terrain.ground_mu_est = draw(value)
    for group in (state.system_fault_state.faults, state.system_fault_state.historical_faults):
        for _ in range(draw(st.integers(0, 2))):
            fault = group.add(name=draw(text), code=draw(st.integers(-2**31, 2**31 - 1)),
                              uid=draw(st.integers(0, 2**64 - 1)), error_message=draw(text),
                              severity=draw(st.integers(0, 3)))
            fault.onset_timestamp.FromNanoseconds(draw(stamp_ns))
            fault.duration.FromNanoseconds(draw(st.integers(-10**12, 10**12)))
            fault.attributes.extend(draw(st.lists(text, max_size=3)))
    for _ in range(draw(st.integers(0, 2))):
        fault = state.behavior_fault_state.faults.add(
            behavior_fault_id=draw(st.integers(0, 2**32 - 1)), cause=draw(st.integers(0, 4)),
            status=draw(st.integers(0, 2)))
        fault.onset_timestamp.FromNanoseconds(draw(stamp_ns))
    if draw(st.booleans()):
        m = state.manipulator_state
        m.gripper_open_percentage = draw(value)
        m.is_gripper_holding_item = draw(st.booleans())
        m.estimated_end_effector_force_in_hand.z = draw(value)
        m.stow_state, m.carry_state = draw(st.integers(0, 2)), draw(st.integers(0, 3))
        m.velocity_of_hand_in_odom.linear.x = draw(value)
        m.velocity_of_hand_in_vision.angular.z = draw(value)
    return state


def _same(fast: bytes, slow_msg) -> None:
    slow = serialize_message(slow_msg)
    # rclpy's buffer is its size estimate: each empty float64[] counts alignment it never
    # writes, so the message path can end in unused bytes.
    assert len(fast) <= len(slow)
    kind = type(slow_msg)
    assert repr(deserialize_message(fast, kind)) == repr(deserialize_message(slow, kind))


@settings(max_examples=150, deadline=None)
@given(robot_states(), stamp_ns, st.sampled_from(["", "spot1/"]))
def test_status_cdr_equals_message_path(state, cycle_ns, prefix):
    _assert_like_message_path(StatusSerializer(prefix + "body", prefix + "hand"), state,
                              cycle_ns, prefix)


def _renumber(message, factor: float) -> None:
    """Every double times ``factor`` and every Timestamp/Duration 1 ms later: the shape of
    the message mostly stays (a 0 stays 0), its numbers do not."""
    if message.DESCRIPTOR.full_name in ("google.protobuf.Timestamp",
                                        "google.protobuf.Duration"):
        message.FromNanoseconds(message.ToNanoseconds() + 1_000_003)
        return
    for field, value in message.ListFields():
        if field.type == field.TYPE_MESSAGE:
            for sub in (value if field.is_repeated else [value]):
                _renumber(sub, factor)
        elif field.type == field.TYPE_DOUBLE:
            if field.is_repeated:
                value[:] = [v * factor for v in value]
            else:
                setattr(message, field.name, value * factor)


@settings(max_examples=80, deadline=None)
@given(robot_states(), stamp_ns, st.lists(st.floats(0.5, 2.0), min_size=1, max_size=4))
def test_state_after_state_equals_message_path(state, cycle_ns, factors):
    """One serializer over states whose numbers change: each equal to the message path."""
    serializer = StatusSerializer()
    _renumber(state, 1.0)  # Durations normalised (sign of nanos)
    _assert_like_message_path(serializer, state, cycle_ns, "")
    for factor in factors:
        _renumber(state, factor)
        cycle_ns += 20_000_000
        _assert_like_message_path(serializer, state, cycle_ns, "")


def test_states_of_a_simulated_robot_equal_the_message_path():
    robot = SimRobot(SimConfig(has_arm=True), RobotClock(12.345))
    serializer = StatusSerializer()
    for i in range(30):
        robot.step()
        state = state_report.robot_state(robot)
        state.battery_states.add().CopyFrom(state.battery_states[0])
        fault = state.system_fault_state.faults.add(name="fan", code=17, severity=2,
                                                    attributes=["cooling"])
        fault.onset_timestamp.FromNanoseconds(10**18)
        fault.duration.FromNanoseconds(10**9 + i * 10**7)
        _assert_like_message_path(serializer, state, 10**18 + i * 10**7, "")


def _assert_like_message_path(serializer, state, cycle_ns, prefix):
    sec, nanosec = divmod(cycle_ns, 10**9)
    header = Header(frame_id=prefix + "body")
    header.stamp.sec, header.stamp.nanosec = sec, nanosec
    hand = Header(stamp=header.stamp, frame_id=prefix + "hand")
    out = serializer.serialize(state, (sec, nanosec), SKEW)
    _same(out["battery"], status.battery_states(state, header, SKEW))
    ros = status.ros_battery_states(state, header, SKEW)
    assert len(out["battery_state"]) == len(ros)
    for fast, slow in zip(out["battery_state"], ros, strict=True):
        _same(fast, slow)
    _same(out["power"], status.power_state(state, header, SKEW))
    _same(out["estop"], status.estop_states(state, header, SKEW))
    _same(out["wifi"], status.wifi_state(state, header))
    _same(out["feet"], status.foot_states(state, header))
    _same(out["system_faults"], status.system_faults(state, header, SKEW))
    _same(out["behavior_faults"], status.behavior_faults(state, header, SKEW))
    if state.HasField("manipulator_state"):
        _same(out["manipulation"], status.manipulator_state(state, header))
        _same(out["end_effector_force"], status.end_effector_force(state, hand))
    else:
        assert "manipulation" not in out and "end_effector_force" not in out


def test_types_of_each_entry():
    """Every entry decodes as the type the state node publishes it with."""
    state = robot_state_pb2.RobotState()
    state.manipulator_state.gripper_open_percentage = 12.5
    out = StatusSerializer().serialize(state, (5, 6), SKEW)
    types = {"battery": BatteryStateArray, "power": PowerState, "estop": EStopStateArray,
             "wifi": WiFiState, "feet": FootStateArray, "system_faults": SystemFaultState,
             "behavior_faults": BehaviorFaultState, "manipulation": ManipulatorState,
             "end_effector_force": Vector3Stamped}
    assert set(out) == set(types) | {"battery_state"}
    for key, kind in types.items():
        assert deserialize_message(out[key], kind).header.stamp.sec == 5
    assert deserialize_message(out["manipulation"], ManipulatorState) \
        .gripper_open_percentage == 12.5
    assert out["battery_state"] == []
    assert math.isnan(deserialize_message(out["power"], PowerState)
                      .locomotion_charge_percentage)
    assert RosBatteryState  # the list entries are sensor_msgs/BatteryState (checked above)


@given(stamp_ns, st.booleans(), st.integers(-10**12, 10**12), st.integers(0, 10**10))
def test_time_sync(cycle_ns, synced, skew, rtt):
    stamp = divmod(cycle_ns, 10**9)
    fast = StatusSerializer().time_sync(stamp, synced, skew, rtt)
    slow = TimeSyncState(synchronized=synced, clock_skew=duration_msg_from_nsec(skew),
                         round_trip_time=duration_msg_from_nsec(rtt))
    slow.header.stamp.sec, slow.header.stamp.nanosec = stamp
    _same(fast, slow)


@given(stamp_ns, st.integers(-10**18, 10**18))
def test_local_stamp_matches_message_path(robot_ns, skew):
    stamp = robot_state_pb2.RobotState().power_state.timestamp
    stamp.FromNanoseconds(robot_ns)
    msg = local_time_msg(robot_ns - skew)
    assert local_stamp(stamp, skew) == (msg.sec, msg.nanosec)
