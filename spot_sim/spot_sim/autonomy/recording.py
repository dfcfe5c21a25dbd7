"""Map recording: waypoints where the robot walks, each with a snapshot of what it sees.

While recording, the physics loop adds a waypoint every ``AUTO_WAYPOINT_SPACING`` metres of
travel (whoever commands the robot), and clients may add more with CreateWaypoint. Each new
waypoint is joined to the previous one by an edge holding the odometry transform between them.
A waypoint's frame is the body's ground projection when it was made (gravity aligned, on the
floor), and its snapshot holds the point cloud seen from there (in the lidar's ``sensor``
frame, with the frame tree to ``odom``), the fiducials in view and the robot state.

Recording onto a map that already has waypoints needs the robot localized to it: the first
new waypoint is joined to the waypoint it is localized at. An empty map's first waypoint becomes
its seed, and the robot is localized to the new map from then on.
"""

import itertools
import math
import secrets

from bosdyn.api import point_cloud_pb2
from bosdyn.api.graph_nav import map_pb2, recording_pb2

from spot_sim.autonomy.map import se2_from_proto, se3_proto
from spot_sim.autonomy.navigation import GraphNav
from spot_sim.body import kinematics, mobility
from spot_sim.body.mobility import Se2
from spot_sim.body.robot import SimRobot
from spot_sim.state import state_report

AUTO_WAYPOINT_SPACING = 2.0  # m
CLOUD_STRIDE = 4  # keep every 4th lidar return in a snapshot
Start = recording_pb2.StartRecordingResponse
Create = recording_pb2.CreateWaypointResponse
Stop = recording_pb2.StopRecordingResponse


class RecordingError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


class Recorder:
    """Recording state of one robot, a part of its graph-nav state: call inside
    ``GraphNav.atomically`` (``step`` takes care of that itself)."""

    def __init__(self, graph_nav: GraphNav, sensors, dock_world) -> None:
        self.graph_nav, self.sensors, self.world = graph_nav, sensors, dock_world
        self.recording = False
        self.environment = recording_pb2.RecordingEnvironment()
        self.session_start = None
        self.last_waypoint: map_pb2.Waypoint | None = None
        self._names = itertools.count()
        self._join_by_localization = False

    # ------------------------------------------------------------------ commands
    def start(self, robot: SimRobot, environment: recording_pb2.RecordingEnvironment | None,
              session_start) -> map_pb2.Waypoint:
        graph_map = self.graph_nav.map
        localized_at = ""
        if not graph_map.empty:
            localized_at = self.graph_nav.localization(robot).waypoint_id
            if not localized_at:
                raise RecordingError(Start.STATUS_NOT_LOCALIZED_TO_EXISTING_MAP,
                                     "the map is not empty and the robot is not localized to it")
        if self.graph_nav.active is not None:
            raise RecordingError(Start.STATUS_FOLLOWING_ROUTE, "the robot is navigating")
        self.environment = (recording_pb2.RecordingEnvironment() if environment is None
                            else environment)
        self.session_start = session_start
        self.recording = True
        self.last_waypoint = graph_map.waypoint(localized_at) if localized_at else None
        self._join_by_localization = bool(localized_at)
        try:
            return self.create_waypoint(robot, "")[0]
        finally:
            self._join_by_localization = False

    def stop(self) -> None:
        self.recording = False
        self.last_waypoint = None

    def create_waypoint(self, robot: SimRobot, name: str
                        ) -> tuple[map_pb2.Waypoint, map_pb2.Edge | None]:
        if not self.recording:
            raise RecordingError(Create.STATUS_NOT_RECORDING, "not recording")
        graph_nav, graph_map = self.graph_nav, self.graph_nav.map
        body = robot.odom_body()
        odom_tform_waypoint = Se2(body.x, body.y, body.yaw)
        waypoint = map_pb2.Waypoint(id=_new_id("waypoint"),
                                    waypoint_tform_ko=se3_proto(
                                        mobility.inverse(odom_tform_waypoint)))
        waypoint.annotations.name = name or f"waypoint_{next(self._names)}"
        waypoint.annotations.creation_time.CopyFrom(robot.clock.timestamp())
        waypoint.annotations.client_metadata.CopyFrom(self.environment.waypoint_environment
                                                      .client_metadata)
        snapshot = self._snapshot(robot)
        waypoint.snapshot_id = snapshot.id
        graph_map.waypoint_snapshots[snapshot.id] = snapshot
        first = graph_map.empty
        graph_map.add_waypoint(waypoint)
        edge = None
        if self.last_waypoint is not None:
            edge = self._edge(robot, self.last_waypoint, odom_tform_waypoint, waypoint.id)
            graph_map.add_edge(edge)
        if first:
            graph_nav.seed_tform_vision = None
            graph_nav.fix_localization(robot, mobility.compose(
                mobility.inverse(odom_tform_waypoint), robot.odom_body()))
        self.last_waypoint = waypoint
        return waypoint, edge

    def _edge(self, robot: SimRobot, previous: map_pb2.Waypoint, odom_tform_new: Se2,
              new_id: str) -> map_pb2.Edge:
        """An edge from ``previous`` to the new waypoint; its transform comes from odometry
        (for a waypoint of an earlier session, from the robot's localization)."""
        if self._join_by_localization:
            poses = self.graph_nav.map.seed_poses()
            seed_tform_body = self.graph_nav.seed_tform_body(robot)
            from_tform_to = mobility.compose(mobility.inverse(poses[previous.id]),
                                             seed_tform_body)
        else:
            from_tform_to = mobility.compose(se2_from_proto(previous.waypoint_tform_ko),
                                             odom_tform_new)
        snapshot = map_pb2.EdgeSnapshot(id=_new_id("edge_snapshot"))
        stance = snapshot.stances.add(timestamp=robot.clock.timestamp())
        ko_tform_body, vision_tform_body = robot.body_poses()
        stance.ko_tform_body.CopyFrom(ko_tform_body.to_proto())
        stance.vision_tform_body.CopyFrom(vision_tform_body.to_proto())
        self.graph_nav.map.edge_snapshots[snapshot.id] = snapshot
        edge = map_pb2.Edge(snapshot_id=snapshot.id, from_tform_to=se3_proto(from_tform_to))
        edge.id.from_waypoint, edge.id.to_waypoint = previous.id, new_id
        edge.annotations.edge_source = map_pb2.Edge.EDGE_SOURCE_ODOMETRY
        return edge

    def _snapshot(self, robot: SimRobot) -> map_pb2.WaypointSnapshot:
        snapshot = map_pb2.WaypointSnapshot(id=_new_id("snapshot"), is_point_cloud_processed=True)
        odom_tform_body, _ = robot.body_poses()
        odom_tform_sensor = odom_tform_body * kinematics.LIDAR_IN_BODY
        points = self.sensors.lidar_points(odom_tform_sensor)[::CLOUD_STRIDE]
        cloud = snapshot.point_cloud
        cloud.source.name = "graph_nav_snapshot"
        cloud.source.frame_name_sensor = "sensor"
        cloud.source.acquisition_time.CopyFrom(robot.clock.timestamp())
        tree = cloud.source.transforms_snapshot
        for child, parent, pose in (("body", "", None),
                                    ("odom", "body", odom_tform_body.inverse()),
                                    ("sensor", "body", kinematics.LIDAR_IN_BODY)):
            edge = tree.child_to_parent_edge_map[child]
            edge.parent_frame_name = parent
            if pose is not None:
                edge.parent_tform_child.CopyFrom(pose.to_proto())
        cloud.encoding = point_cloud_pb2.PointCloud.ENCODING_XYZ_32F
        cloud.num_points = len(points)
        cloud.data = points.astype("<f4").tobytes()
        snapshot.objects.extend(self.world.seen_by(robot))
        snapshot.robot_state.CopyFrom(state_report.robot_state(robot))
        return snapshot

    # ------------------------------------------------------------------ physics
    def step(self, robot: SimRobot, now_ns: int) -> None:
        """Add a waypoint once the robot has walked far enough from the last one (the
        physics loop's hook)."""
        self.graph_nav.atomically(lambda: self._step(robot))

    def _step(self, robot: SimRobot) -> None:
        if not self.recording or self.last_waypoint is None:
            return
        last = mobility.inverse(se2_from_proto(self.last_waypoint.waypoint_tform_ko))
        body = robot.odom_body()
        if math.hypot(body.x - last.x, body.y - last.y) >= AUTO_WAYPOINT_SPACING:
            self.create_waypoint(robot, "")

    def status(self, response: recording_pb2.GetRecordStatusResponse) -> None:
        response.is_recording = self.recording
        response.recording_environment.CopyFrom(self.environment)
        response.status = response.STATUS_OK
        if self.session_start is not None:
            response.session_start_time.CopyFrom(self.session_start)
        graph = self.graph_nav.map.graph
        response.map_stats.waypoints.count = len(graph.waypoints)
        response.map_stats.edges.count = len(graph.edges)

