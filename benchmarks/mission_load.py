"""Time to load large missions through LoadMissionAsChunks2 (the RPC the driver uses above
``mission_chunk_bytes``), against the limits in the same run: serializing and parsing the
mission, and a plain copy of its bytes.

The simulated Spot runs in this process on 127.0.0.1; the client is the unmodified SDK.
Writes benchmarks/results/mission_load.json.
"""

import statistics
import tempfile
import time

import _results
import bosdyn.client
from bosdyn.api.mission import nodes_pb2
from bosdyn.client.lease import LeaseClient
from bosdyn.mission.client import MissionClient

from spot_sim import SimConfig, SimulatedSpot

SIZES_MB = (1, 4, 16)
REPEATS = 5


def mission(size_mb: int) -> nodes_pb2.Node:
    """A mission of many small nodes plus user data, about ``size_mb`` MB serialized."""
    root = nodes_pb2.Node(name="root")
    for i in range(2000):
        root.sequence.children.add(name=f"wait {i}").sleep.seconds = 0.0
    root.user_data.bytestring = b"\x5a" * max(size_mb * 1_000_000 - root.ByteSize(), 0)
    return root


def best_ms(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def main() -> dict:
    config = SimConfig(username="bench", password="bench-password")
    with tempfile.TemporaryDirectory() as certs, SimulatedSpot(config, certs_dir=certs) as sim:
        sdk = bosdyn.client.create_standard_sdk("bench", service_clients=[MissionClient])
        sdk.load_robot_cert(str(sim.ca_cert))
        robot = sdk.create_robot("127.0.0.1")
        robot.update_secure_channel_port(sim.port)
        robot.authenticate("bench", "bench-password")
        robot.time_sync.wait_for_sync(timeout_sec=5)
        lease_client = robot.ensure_client(LeaseClient.default_service_name)
        lease = lease_client.acquire()
        client = robot.ensure_client(MissionClient.default_service_name)
        rows = []
        for size in SIZES_MB:
            root = mission(size)
            data = root.SerializeToString()
            load = [best_ms(lambda root=root: client.load_mission_as_chunks2(
                root, leases=[lease]), repeats=1) for _ in range(REPEATS)]
            rows.append({
                "size_bytes": len(data),
                "nodes": len(root.sequence.children) + 1,
                "copy_ms": best_ms(lambda data=data: bytearray(data)),
                "serialize_ms": best_ms(root.SerializeToString),
                "parse_ms": best_ms(lambda data=data: nodes_pb2.Node.FromString(data)),
                "load_chunks2_ms_best": min(load),
                "load_chunks2_ms_median": statistics.median(load),
            })
        robot.time_sync.stop()
    result = {"benchmark": "mission_load", "repeats": REPEATS, "rows": rows}
    _results.write("mission_load", result)
    return result


if __name__ == "__main__":
    for row in main()["rows"]:
        print(f"{row['size_bytes'] / 1e6:6.1f} MB: load {row['load_chunks2_ms_best']:7.1f} ms "
              f"(median {row['load_chunks2_ms_median']:.1f}); serialize "
              f"{row['serialize_ms']:.2f} ms, parse {row['parse_ms']:.2f} ms, copy "
              f"{row['copy_ms']:.2f} ms")
