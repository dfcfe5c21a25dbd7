"""Cost of one robot-state cycle: RobotState protobuf -> every message the state node publishes.

Compares, in the same run, against physical limits: copying the RobotState bytes (memcpy) and
parsing them (protobuf). Writes benchmarks/results/state_cycle.json.

    make bench            # or: python benchmarks/state_cycle.py
"""

import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from rclpy.serialization import serialize_message
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

from spot_driver.conversions import frames, status
from spot_driver.conversions.joint_states import joint_state_msg
from spot_driver.conversions.odometry import odometry_msg
from spot_driver.conversions.state_cdr import StateSerializer
from spot_driver.conversions.time import robot_stamp_to_msg
from spot_sim import SimConfig
from spot_sim.clock import RobotClock
from spot_sim.robot import SimRobot
from spot_sim.state_report import robot_state

RESULTS = Path(__file__).resolve().parent / "results" / "state_cycle.json"


def realistic_state():
    """A RobotState as the robot sends it: 12 leg + 7 arm joints, 20+ frames, 4 batteries."""
    robot = SimRobot(SimConfig(has_arm=True), RobotClock(12.345))
    robot.step()
    state = robot_state(robot)
    for i in range(1, 4):
        battery = state.battery_states.add()
        battery.CopyFrom(state.battery_states[0])
        battery.identifier = f"battery-{i}"
    return state


def per_call_us(fn, repeat: int = 2000, rounds: int = 5) -> float:
    """Median over rounds of the mean time per call, in microseconds."""
    fn()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        samples.append((time.perf_counter() - start) / repeat * 1e6)
    return statistics.median(samples)


def main() -> dict:
    state = realistic_state()
    data = state.SerializeToString()
    buffer = np.frombuffer(data, dtype=np.uint8)
    skew = 12_345_000_000
    snapshot = state.kinematic_state.transforms_snapshot
    header = Header(frame_id="body")

    def build_state_messages():
        kin = state.kinematic_state
        stamp = robot_stamp_to_msg(kin.acquisition_timestamp, skew)
        joints = joint_state_msg(kin, skew)
        odom = odometry_msg(kin, "odom", skew)
        dynamic, _static = frames.split_transforms(snapshot, "odom", stamp)
        return joints, odom, TFMessage(transforms=dynamic)

    def build_status_messages():
        return (status.battery_states(state, header, skew), status.power_state(state, header, skew),
                status.estop_states(state, header, skew), status.wifi_state(state, header),
                status.foot_states(state, header), status.system_faults(state, header, skew),
                status.behavior_faults(state, header, skew))

    messages = build_state_messages()
    status_messages = build_status_messages()

    def serialize_state_messages():
        for message in messages:
            serialize_message(message)

    serializer = StateSerializer("odom")
    fast = serializer.serialize(state.kinematic_state, skew)
    slow = [serialize_message(m) for m in messages]
    assert [len(b) for b in fast] == [len(b) for b in slow], "fast path differs in size"

    results = {
        "robot_state_bytes": len(data),
        "frames_in_tree": len(snapshot.child_to_parent_edge_map),
        "joints": len(state.kinematic_state.joint_states),
        "memcpy_us": per_call_us(lambda: buffer.copy(), 20000),
        "protobuf_parse_us": per_call_us(lambda: type(state).FromString(data), 5000),
        "state_messages_build_us": per_call_us(build_state_messages, 500),
        "state_messages_serialize_us": per_call_us(serialize_state_messages, 500),
        "state_cycle_cdr_fast_path_us": per_call_us(
            lambda: serializer.serialize(state.kinematic_state, skew), 2000),
        "status_messages_build_us": per_call_us(build_status_messages, 500),
        "status_messages_serialize_us": per_call_us(
            lambda: [serialize_message(m) for m in status_messages], 500),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
    }
    results["state_cycle_message_path_us"] = (results["state_messages_build_us"]
                                              + results["state_messages_serialize_us"])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key:32s} {value:.2f}" if isinstance(value, float) else f"{key:32s} {value}")
