"""GraphNav map handling at the size of a real site: a 100-waypoint map (each waypoint with a
lidar snapshot of the simulated scene, ~7 k points) read from disk as the driver reads it
(``read_map``), uploaded the way the driver uploads it (UploadGraph streamed, then the
snapshots batched into ~4 MB UploadSnapshots calls) and the SDK examples' way (one call per
snapshot), downloaded, and a 100-element Autowalk over it loaded. Floors measured in
the same run: parsing the map's bytes, and a plain copy of them. Also the round trip of
GetLocalizationState (what ``map -> odom`` costs per update) against GetRobotState.

The simulated Spot runs in this process on 127.0.0.1; the client is the unmodified SDK.
Writes benchmarks/results/graph_nav_upload.json.
"""

import statistics
import tempfile
import time
from pathlib import Path

import _results
import bosdyn.client
from bosdyn.api import point_cloud_pb2
from bosdyn.api.autowalk import walks_pb2
from bosdyn.api.graph_nav import map_pb2
from bosdyn.client.autowalk import AutowalkClient
from bosdyn.client.graph_nav import GraphNavClient
from bosdyn.client.lease import LeaseClient
from bosdyn.client.math_helpers import Quat, SE3Pose
from bosdyn.client.robot_state import RobotStateClient
from bosdyn.mission.client import MissionClient

from spot_driver.autonomy.graph_nav import send_map
from spot_driver.autonomy.map_files import MapFiles, read_map, write_map
from spot_sim import SimConfig, SimulatedSpot
from spot_sim.body.kinematics import LIDAR_IN_BODY
from spot_sim.perception.sensors import Sensors

WAYPOINTS = 100
REPEATS = 3
QUERIES = 200


def site_map() -> MapFiles:
    """100 waypoints on a serpentine 10 x 10 grid (1 m apart) inside the simulated room."""
    sensors = Sensors(False, False, render_workers=0)
    graph = map_pb2.Graph()
    files = MapFiles(graph)
    previous = None
    for index in range(WAYPOINTS):
        row, col = divmod(index, 10)
        x, y = -4.5 + (col if row % 2 == 0 else 9 - col), -4.5 + row
        odom_tform_body = SE3Pose(x, y, 0.52, Quat())
        waypoint = graph.waypoints.add(id=f"waypoint-{index:03d}",
                                       snapshot_id=f"snapshot-{index:03d}")
        waypoint.waypoint_tform_ko.CopyFrom(SE3Pose(-x, -y, 0, Quat()).to_proto())
        waypoint.annotations.name = f"waypoint_{index}"
        snapshot = map_pb2.WaypointSnapshot(id=waypoint.snapshot_id)
        points = sensors.lidar_points(odom_tform_body * LIDAR_IN_BODY)[::4]
        cloud = snapshot.point_cloud
        cloud.source.frame_name_sensor = "sensor"
        tree = cloud.source.transforms_snapshot.child_to_parent_edge_map
        tree["body"].parent_frame_name = ""
        tree["odom"].parent_frame_name = "body"
        tree["odom"].parent_tform_child.CopyFrom(odom_tform_body.inverse().to_proto())
        tree["sensor"].parent_frame_name = "body"
        tree["sensor"].parent_tform_child.CopyFrom(LIDAR_IN_BODY.to_proto())
        cloud.encoding = point_cloud_pb2.PointCloud.ENCODING_XYZ_32F
        cloud.num_points, cloud.data = len(points), points.astype("<f4").tobytes()
        files.waypoint_snapshots[snapshot.id] = snapshot
        if previous is not None:
            edge = graph.edges.add(snapshot_id=f"edge-{index:03d}")
            edge.id.from_waypoint, edge.id.to_waypoint = previous[0], waypoint.id
            edge.from_tform_to.CopyFrom(SE3Pose(x - previous[1], y - previous[2], 0, Quat())
                                        .to_proto())
            files.edge_snapshots[edge.snapshot_id] = map_pb2.EdgeSnapshot(id=edge.snapshot_id)
        previous = (waypoint.id, x, y)
    return files


def best(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def median_ms(fn, count: int = QUERIES) -> float:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> dict:
    files = site_map()
    config = SimConfig(username="bench", password="bench-password")
    with tempfile.TemporaryDirectory() as tmp, \
            SimulatedSpot(config, certs_dir=Path(tmp) / "certs") as sim:
        directory = str(Path(tmp) / "site")
        write_map(directory, files)
        blobs = [files.graph.SerializeToString()] + [
            s.SerializeToString() for s in (*files.waypoint_snapshots.values(),
                                            *files.edge_snapshots.values())]
        total_bytes = sum(len(b) for b in blobs)
        sdk = bosdyn.client.create_standard_sdk("bench", service_clients=[
            MissionClient, AutowalkClient])
        sdk.load_robot_cert(str(sim.ca_cert))
        robot = sdk.create_robot("127.0.0.1")
        robot.update_secure_channel_port(sim.port)
        robot.authenticate("bench", "bench-password")
        robot.time_sync.wait_for_sync(timeout_sec=5)
        lease = robot.ensure_client(LeaseClient.default_service_name).acquire()
        graph_nav = robot.ensure_client(GraphNavClient.default_service_name)

        def one_by_one():
            """The SDK examples' way: one streamed call per snapshot."""
            graph_nav.clear_graph()
            loaded = read_map(directory)
            response = graph_nav.upload_graph(graph=loaded.graph, generate_new_anchoring=True,
                                              replace_graph=True)
            for snapshot_id in response.unknown_waypoint_snapshot_ids:
                graph_nav.upload_waypoint_snapshot(loaded.waypoint_snapshots[snapshot_id])
            for snapshot_id in response.unknown_edge_snapshot_ids:
                graph_nav.upload_edge_snapshot(loaded.edge_snapshots[snapshot_id])

        def driver_upload():
            """What graph_nav/upload_map does: read and check, then batched snapshots."""
            graph_nav.clear_graph()
            send_map(graph_nav, read_map(directory))

        def download():
            graph = graph_nav.download_graph()
            for waypoint in graph.waypoints:
                graph_nav.download_waypoint_snapshot(waypoint.snapshot_id)

        walk = walks_pb2.Walk(mission_name="site")
        for waypoint in files.graph.waypoints:
            walk.elements.add(name=waypoint.id).target.navigate_to.destination_waypoint_id = \
                waypoint.id
        autowalk = robot.ensure_client(AutowalkClient.default_service_name)
        result = {
            "benchmark": "graph_nav_upload", "waypoints": WAYPOINTS,
            "points_per_snapshot": files.waypoint_snapshots["snapshot-000"].point_cloud
            .num_points,
            "map_bytes": total_bytes, "repeats": REPEATS,
            "copy_ms": best(lambda: [bytearray(b) for b in blobs]),
            "parse_ms": best(lambda: [map_pb2.WaypointSnapshot.FromString(b)
                                      for b in blobs[1:WAYPOINTS + 1]]),
            "read_map_ms": best(lambda: read_map(directory)),
            "upload_one_by_one_ms": best(one_by_one),
            "upload_ms": best(driver_upload),
            "download_ms": best(download),
            "autowalk_load_ms": best(lambda: autowalk.load_autowalk(walk, leases=[lease])),
            "localization_state_ms_median": median_ms(graph_nav.get_localization_state),
            "robot_state_ms_median": median_ms(
                robot.ensure_client(RobotStateClient.default_service_name).get_robot_state),
        }
        result["upload_mb_per_s"] = total_bytes / 1e6 / (result["upload_ms"] / 1e3)
        result["upload_over_parse"] = result["upload_ms"] / result["parse_ms"]
        result["localization_over_robot_state"] = (result["localization_state_ms_median"]
                                                   / result["robot_state_ms_median"])
        robot.time_sync.stop()
    _results.write("graph_nav_upload", result)
    return result


if __name__ == "__main__":
    for key, value in main().items():
        print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
