"""A bare publisher: the same serialized messages as the driver, at the same rates.

Run by perception_e2e.py as its own process (``python benchmarks/_replay.py FILE``): FILE is
a JSON list of {name, type, hz, qos, data (hex)}. One thread publishes the bytes of all topics
of one rate together (as the driver does: a camera's topics, a state cycle's messages), with
a fresh header stamp; nothing is requested, converted or spun, so its
CPU is the floor of publishing what the driver publishes, with rclpy, on this machine.
Stops on SIGINT.
"""

import heapq
import json
import struct
import sys
import time
from pathlib import Path

import rclpy
from rosidl_runtime_py.utilities import get_message

from spot_driver.core import qos

PROFILES = {"state": qos.STATE, "stream": qos.STREAM, **qos.SENSOR_PROFILES}


def main(path: str) -> None:
    topics = json.loads(Path(path).read_text())
    rclpy.init()
    node = rclpy.create_node("bench_replay")
    groups: dict[float, list] = {}  # topics of one rate go out together, as the driver's do
    for topic in topics:
        publisher = node.create_publisher(get_message(topic["type"]), topic["name"],
                                          PROFILES[topic["qos"]])
        groups.setdefault(topic["hz"], []).append(
            (publisher, bytearray.fromhex(topic["data"]), 8 if topic["name"] == "/tf" else 4))
    now = time.monotonic()
    schedule = [(now + i * 1e-3, hz) for i, hz in enumerate(groups)]  # (next time, rate)
    heapq.heapify(schedule)
    try:
        while True:
            due, hz = heapq.heappop(schedule)
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            stamp = time.time_ns()
            for publisher, data, offset in groups[hz]:
                struct.pack_into("<iI", data, offset, stamp // 10**9, stamp % 10**9)
                publisher.publish(bytes(data))
            heapq.heappush(schedule, (due + 1.0 / hz, hz))
    except KeyboardInterrupt:
        pass
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
