"""The floor of benchmarks/low_level.py: the bare SDK state stream read by a process that
does nothing else (no ROS). With ``--command`` it also takes the lease, stands the robot,
enters joint mode and streams 333 Hz commands that hold the pose, timing each key from send
to its echo in the state stream (the SDK examples' pattern). Prints one JSON line.

    python benchmarks/_bare_state_stream.py PORT CA_CERT SECONDS [--command]
"""

import json
import os
import sys
import threading
import time

import numpy as np
import psutil
from bosdyn.api import robot_command_pb2
from bosdyn.client import create_standard_sdk
from bosdyn.client.lease import LeaseClient, LeaseKeepAlive
from bosdyn.client.robot_command import (
    RobotCommandBuilder,
    RobotCommandClient,
    RobotCommandStreamingClient,
    blocking_stand,
)
from bosdyn.client.robot_state import RobotStateStreamingClient
from bosdyn.util import seconds_to_duration

K_Q_P, K_QD_P = [624.0, 936.0, 286.0] * 4, [5.20, 5.20, 2.04] * 4


def main() -> None:
    port, ca, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    command = "--command" in sys.argv
    sdk = create_standard_sdk("bare-state-stream",
                              service_clients=[RobotStateStreamingClient,
                                               RobotCommandStreamingClient])
    sdk.load_robot_cert(ca)
    robot = sdk.create_robot("127.0.0.1")
    robot.update_secure_channel_port(port)
    robot.authenticate(os.environ["BOSDYN_CLIENT_USERNAME"],
                       os.environ["BOSDYN_CLIENT_PASSWORD"])
    robot.time_sync.wait_for_sync()
    lease = None
    if command:
        lease = LeaseKeepAlive(robot.ensure_client(LeaseClient.default_service_name),
                               must_acquire=True, return_at_exit=True)
        robot.power_on(timeout_sec=20)
        blocking_stand(robot.ensure_client(RobotCommandClient.default_service_name))
    arrivals, sent, round_trips, latest = [], {}, [], []
    stop = threading.Event()

    def read() -> None:
        last = 0
        for state in robot.ensure_client(
                RobotStateStreamingClient.default_service_name).get_robot_state_stream():
            now = time.monotonic()
            arrivals.append(now)
            latest[:] = [state]
            key = state.last_command.user_command_key
            if key and key != last:
                last = key
                if key in sent:
                    round_trips.append((now - sent.pop(key)) * 1e3)
            if stop.is_set():
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while not latest:
        time.sleep(0.01)

    def commands():
        pose, load = list(latest[0].joint_states.position), list(latest[0].joint_states.load)
        key = 0
        while not stop.is_set():
            key += 1
            request = robot_command_pb2.JointControlStreamRequest()
            update = request.joint_command
            if key == 1:
                update.gains.k_q_p.extend(K_Q_P)
                update.gains.k_qd_p.extend(K_QD_P)
            update.position.extend(pose)
            update.velocity.extend([0.0] * 12)
            update.load.extend(load)
            update.end_time.CopyFrom(robot.time_sync.robot_timestamp_from_local_secs(
                time.time() + 0.05))
            update.extrapolation_duration.CopyFrom(seconds_to_duration(0.005))
            update.user_command_key = key
            sent[key] = time.monotonic()
            yield request
            time.sleep(0.003)

    streamer = None
    if command:
        client = robot.ensure_client(RobotCommandStreamingClient.default_service_name)
        streamer = threading.Thread(target=client.send_joint_control_commands,
                                    args=(commands(),), daemon=True)
        streamer.start()
        time.sleep(0.05)
        robot.ensure_client(RobotCommandClient.default_service_name).robot_command(
            RobotCommandBuilder.joint_command())
    time.sleep(2.0)  # settled
    process = psutil.Process()
    cpu0 = sum(process.cpu_times()[:2])
    first = len(arrivals)
    time.sleep(seconds)
    cpu = sum(process.cpu_times()[:2]) - cpu0
    window = np.array(arrivals[first:])
    stop.set()
    if streamer is not None:
        streamer.join(timeout=2)
    trips = np.array(round_trips[len(round_trips) // 10:]) if round_trips else np.array([0.0])
    print(json.dumps({
        "state_hz": round((len(window) - 1) / (window[-1] - window[0]), 1),
        "state_max_gap_ms": round(float(np.diff(window).max() * 1e3), 2),
        "cpu_percent_of_one_core": round(100 * cpu / seconds, 1),
        "round_trip_ms_p50": round(float(np.percentile(trips, 50)), 2) if command else None,
        "round_trip_ms_p99": round(float(np.percentile(trips, 99)), 2) if command else None,
    }), flush=True)
    if lease is not None:
        robot.power_off(cut_immediately=False, timeout_sec=20)
        lease.shutdown()
    robot.time_sync.stop()
    os._exit(0)


if __name__ == "__main__":
    main()
