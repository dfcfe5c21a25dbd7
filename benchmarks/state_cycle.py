"""Cost of one robot-state cycle: RobotState protobuf -> every message the state node publishes.

The full set: joint_states, /tf, odometry (pose + twist), status/feet, estop, wifi, battery
(spot_msgs and one sensor_msgs/BatteryState per battery), power, system and behavior faults,
manipulation and end-effector force. It is timed on live-like states: consecutive states of a
simulated Spot with an arm, 4 batteries and one active fault of each kind, with the field
profile's joint and velocity noise and staggered part stamps, so every joint value and every
timestamp changes from one state to the next. Each round draws fresh states and no timed call
sees a state twice, so no cache can hit on a value a live robot would not repeat.

The cycle is the driver's: ``state.pipeline.StatePipeline.messages`` (protobuf read, one
``struct`` pack per message). The wire templates that read states from their bytes were
removed in issue 28 (they saved ~30 us here, well under 1 % of the driver's CPU end to end:
see benchmarks/state_templates.py).

Floors measured in the same run, in alternating rounds (ratios are per round, then median):
copying the RobotState bytes (memcpy), parsing them (protobuf), only reading every value the
set carries through protobuf's Python API (the read floor of any Python conversion), and
publishing the cycle's serialized bytes with rclpy (a bare DDS publish, no subscriber).
Issue 19's goal was the full set to CDR <= 10x the protobuf parse (met only with the
templates; the JSON keeps the goal beside the figure).
Writes benchmarks/results/state_cycle.json.

    make bench            # or: python benchmarks/state_cycle.py
"""

import operator
import statistics
import timeit

import _results
import numpy as np
import rclpy
from geometry_msgs.msg import Vector3Stamped
from nav_msgs.msg import Odometry
from rclpy.serialization import serialize_message
from sensor_msgs.msg import BatteryState, JointState
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from spot_driver.conversions import frames
from spot_driver.conversions.time import robot_stamp_to_msg
from spot_driver.state import status
from spot_driver.state.joint_states import joint_state_msg
from spot_driver.state.odometry import odometry_msg
from spot_driver.state.pipeline import StatePipeline
from spot_driver.state.state_cdr import StateSerializer
from spot_driver.state.status_cdr import StatusSerializer
from spot_msgs.msg import (
    BatteryStateArray,
    BehaviorFaultState,
    EStopStateArray,
    FootStateArray,
    ManipulatorState,
    PowerState,
    SystemFaultState,
    WiFiState,
)
from spot_sim import SimConfig
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import RobotClock
from spot_sim.core.field import PROFILES
from spot_sim.state import state_report

SKEW = 12_345_000_000
STATES = 1000  # fresh per round; every state-reading timer makes fewer calls than this
ROUNDS = 5
GOAL_RATIO_TO_PARSE = 10.0


class LiveRobot:
    """A simulated Spot with an arm whose states change as a live robot's do: the field
    profile's joint and body-velocity noise and part stamps a few ms apart."""

    def __init__(self) -> None:
        self.clock = RobotClock(12.345)
        field = PROFILES["field"]
        noise = PROFILES["default"].with_knobs(
            joint_noise=field.joint_noise, joint_velocity_noise=field.joint_velocity_noise,
            body_velocity_noise=field.body_velocity_noise, state_age=field.state_age)
        self.robot = SimRobot(SimConfig(has_arm=True, field=noise), self.clock)

    def states(self, count: int = STATES) -> list:
        return realistic_states(self.robot, self.clock, count)


def realistic_states(robot: SimRobot, clock: RobotClock, count: int) -> list:
    """The next ``count`` RobotStates as the robot sends them at 50 Hz: 12 leg + 7 arm joints,
    the simulator's frame tree, 4 batteries, one system and one behavior fault (its onset the
    state's time)."""
    out = []
    for _ in range(count):
        clock.jump(0.02)  # 50 Hz apart, as the driver streams them
        robot.step()
        state = state_report.robot_state(robot)
        for i in range(1, 4):
            battery = state.battery_states.add()
            battery.CopyFrom(state.battery_states[0])
            battery.identifier = f"battery-{i}"
        fault = state.system_fault_state.faults.add(
            name="fan_speed", code=17, uid=42, error_message="fan 2 is slow",
            severity=2, attributes=["cooling", "body"])
        fault.onset_timestamp.CopyFrom(state.kinematic_state.acquisition_timestamp)
        behavior = state.behavior_fault_state.faults.add(behavior_fault_id=3, cause=2, status=1)
        behavior.onset_timestamp.CopyFrom(state.kinematic_state.acquisition_timestamp)
        out.append(state)
    return out


def per_call_us(fn, repeat: int) -> float:
    """Best of three timings of the mean time per call, in microseconds."""
    return min(timeit.repeat(fn, number=repeat, repeat=3)) / repeat * 1e6


class Cycler:
    """Calls ``fn`` on the next input each time (so the states keep changing); ``feed`` gives
    it a round's fresh inputs."""

    def __init__(self, fn) -> None:
        self._fn, self._inputs, self._i = fn, [], 0

    def feed(self, inputs: list) -> None:
        self._inputs, self._i = inputs, 0

    def __call__(self):
        self._i = (self._i + 1) % len(self._inputs)
        return self._fn(self._inputs[self._i])


def fast_path(pipeline: StatePipeline):
    def cycle(state) -> list[bytes]:  # as the state node does it
        out = pipeline.messages(state, SKEW, (True, SKEW, 100_000), (1, 2))
        statuses = dict(out.statuses)
        return [out.joint_states, out.odometry, out.tf, *statuses.pop("battery_state"),
                *statuses.values()]
    return cycle


_JOINT = operator.attrgetter("position.value", "velocity.value", "load.value")


def read_floor(tf_keys: list[str]):
    """Only read, through protobuf's Python API, every value the full set carries (no
    conversion, no output): the floor of any Python conversion of a parsed RobotState."""
    def read(state) -> list:
        kin = state.kinematic_state
        out = [kin.acquisition_timestamp.seconds, kin.acquisition_timestamp.nanos,
               *map(_JOINT, kin.joint_states)]
        edges = kin.transforms_snapshot.child_to_parent_edge_map
        for key in tf_keys:
            pose = edges[key].parent_tform_child
            p, r = pose.position, pose.rotation
            out += (p.x, p.y, p.z, r.x, r.y, r.z, r.w)
        for v in (kin.velocity_of_body_in_odom.linear, kin.velocity_of_body_in_odom.angular):
            out += (v.x, v.y, v.z)
        for b in state.battery_states:
            out += (b.timestamp.seconds, b.timestamp.nanos, b.identifier,
                    b.charge_percentage.value, b.estimated_runtime.seconds,
                    b.estimated_runtime.nanos, b.current.value, b.voltage.value,
                    b.temperatures[:], b.status)
        power = state.power_state
        out += (power.timestamp.seconds, power.timestamp.nanos, power.motor_power_state,
                power.motor_power_error_message, power.shore_power_state,
                power.robot_power_state, power.payload_ports_power_state,
                power.wifi_radio_power_state, power.locomotion_charge_percentage.value,
                power.locomotion_estimated_runtime.seconds,
                power.locomotion_estimated_runtime.nanos)
        for e in state.estop_states:
            out += (e.timestamp.seconds, e.timestamp.nanos, e.name, e.type, e.state,
                    e.state_description)
        for c in state.comms_states:
            out += (c.wifi_state.current_mode, c.wifi_state.essid)
        for f in state.foot_state:
            p = f.foot_position_rt_body
            out += (p.x, p.y, p.z, f.contact, f.terrain.ground_mu_est)
        for f in state.system_fault_state.faults:
            out += (f.name, f.onset_timestamp.seconds, f.onset_timestamp.nanos,
                    f.duration.seconds, f.duration.nanos, f.code, f.uid, f.error_message,
                    f.attributes[:], f.severity)
        for f in state.behavior_fault_state.faults:
            out += (f.behavior_fault_id, f.onset_timestamp.seconds, f.onset_timestamp.nanos,
                    f.cause, f.status)
        m = state.manipulator_state
        force = m.estimated_end_effector_force_in_hand
        out += (m.gripper_open_percentage, m.is_gripper_holding_item, force.x, force.y,
                force.z, m.stow_state, m.carry_state)
        for v in (m.velocity_of_hand_in_odom, m.velocity_of_hand_in_vision):
            out += (v.linear.x, v.linear.y, v.linear.z, v.angular.x, v.angular.y, v.angular.z)
        return out
    return read


def message_path(state) -> list:
    """The rclpy-message path of the same set (what the fast path replaced)."""
    kin = state.kinematic_state
    stamp = robot_stamp_to_msg(kin.acquisition_timestamp, SKEW)
    header = Header(stamp=stamp, frame_id="body")
    dynamic, _static = frames.split_transforms(kin.transforms_snapshot, "odom", stamp)
    messages = [joint_state_msg(kin, SKEW), odometry_msg(kin, "odom", SKEW),
                TFMessage(transforms=dynamic), status.battery_states(state, header, SKEW),
                *status.ros_battery_states(state, header, SKEW),
                status.power_state(state, header, SKEW), status.estop_states(state, header, SKEW),
                status.wifi_state(state, header), status.foot_states(state, header),
                status.system_faults(state, header, SKEW),
                status.behavior_faults(state, header, SKEW),
                status.manipulator_state(state, header),
                status.end_effector_force(state, Header(stamp=stamp, frame_id="hand"))]
    return [serialize_message(m) for m in messages]


def publishers(node, batteries: int) -> list:
    """One publisher per message of the fast path's list, in its order."""
    types = [JointState, Odometry, TFMessage, *[BatteryState] * batteries, BatteryStateArray,
             PowerState, EStopStateArray, WiFiState, FootStateArray, SystemFaultState,
             BehaviorFaultState, ManipulatorState, Vector3Stamped]
    return [node.create_publisher(t, f"bench/topic_{i}", 10) for i, t in enumerate(types)]


def main() -> dict:
    live = LiveRobot()
    states = live.states()
    state_type = type(states[0])
    state_serializer, status_serializer = StateSerializer("odom"), StatusSerializer()
    fast = fast_path(StatePipeline("odom"))
    for state in states[:50]:  # the fast path decodes to what the message path serializes
        assert [len(b) for b in fast(state)[:3]] == [len(b) for b in message_path(state)[:3]]
    cycle_bytes = fast(states[0])

    rclpy.init()
    node = rclpy.create_node("state_cycle_bench")
    pubs = publishers(node, len(states[0].battery_states))
    assert len(pubs) == len(cycle_bytes)

    def publish_cycle():
        for pub, data in zip(pubs, cycle_bytes, strict=True):
            pub.publish(data)

    kin0 = states[0].kinematic_state
    state_serializer.serialize(kin0, (1, 2))  # its tree layout names the read floor's edges
    # (inputs: "wire" bytes, "buffers" (their numpy copies), "states"; calls per timing)
    timers = {
        "memcpy_us": (Cycler(lambda b: b.copy()), "buffers", 20000),
        "protobuf_parse_us": (Cycler(state_type.FromString), "wire", 5000),
        "full_set_cdr_us": (Cycler(fast), "states", 300),
        "read_floor_us": (Cycler(read_floor([key for key, _ in
                                             state_serializer.tree_layout.plan])), "states", 300),
        "full_set_message_path_us": (Cycler(message_path), "states", 100),
        "publish_cycle_bytes_us": (publish_cycle, None, 500),
        "part_kinematics_us": (Cycler(lambda s: state_serializer.serialize(
            s.kinematic_state, (1, 2))), "states", 300),
        "part_statuses_us": (Cycler(lambda s: status_serializer.serialize(s, (1, 2), SKEW)),
                             "states", 300),
    }
    rounds: dict[str, list[float]] = {key: [] for key in timers}
    for _ in range(ROUNDS):  # alternate, so machine-speed drift hits every figure alike
        wire = [s.SerializeToString() for s in states]
        inputs = {"states": states, "wire": wire,
                  "buffers": [np.frombuffer(d, dtype=np.uint8) for d in wire]}
        for key, (fn, source, repeat) in timers.items():
            if source is not None:
                fn.feed(inputs[source])
            rounds[key].append(per_call_us(fn, repeat))
        states = live.states()  # the next round's, fresh
    node.destroy_node()
    rclpy.shutdown()

    def ratio(key: str, floor: str) -> float:
        return round(statistics.median(a / b for a, b in zip(rounds[key], rounds[floor],
                                                              strict=True)), 2)

    results = {key: round(statistics.median(values), 2) for key, values in rounds.items()}
    results.update({
        "states_per_round": STATES, "rounds": ROUNDS,
        "robot_state_bytes": len(wire[0]),
        "frames_in_tree": len(kin0.transforms_snapshot.child_to_parent_edge_map),
        "joints": len(kin0.joint_states),
        "messages_per_cycle": len(cycle_bytes),
        "cycle_bytes": sum(len(b) for b in cycle_bytes),
        "full_set_cdr_to_parse": ratio("full_set_cdr_us", "protobuf_parse_us"),
        "read_floor_to_parse": ratio("read_floor_us", "protobuf_parse_us"),
        "full_set_cdr_to_read_floor": ratio("full_set_cdr_us", "read_floor_us"),
        "full_set_message_path_to_parse": ratio("full_set_message_path_us",
                                                "protobuf_parse_us"),
        "publish_to_parse": ratio("publish_cycle_bytes_us", "protobuf_parse_us"),
        "goal_full_set_cdr_to_parse_max": GOAL_RATIO_TO_PARSE,
    })
    _results.write("state_cycle", results)
    return results


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key:34s} {value}")
