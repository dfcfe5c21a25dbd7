"""map-processing-service, a documented subset of the robot's:

* ProcessTopology closes loops: by fiducials (two waypoints whose snapshots saw the same tag
  get an edge computed from the two sightings) and by odometry (waypoints within
  ``ODOMETRY_CLOSURE_DISTANCE`` in the seed frame that are not yet joined). New edges come back
  as ``new_subgraph`` and, with ``modify_map_on_server``, join the map.
* ProcessAnchoring anchors every waypoint by chaining edges from the seed (no optimisation of
  inconsistent loops) and every fiducial from its nearest sighting; with
  ``modify_anchoring_on_server`` the map keeps the result.

Both answer in one streamed message.
"""

import itertools
import math

from bosdyn.api.graph_nav import (
    map_pb2,
    map_processing_pb2,
    map_processing_service_pb2_grpc,
)

from spot_sim.autonomy.map import se3_proto
from spot_sim.autonomy.navigation import GraphNav, waypoint_fiducials
from spot_sim.body import mobility
from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import stamped
from spot_sim.core.served import Served, ServiceSpec

ODOMETRY_CLOSURE_DISTANCE = 1.0  # m


class MapProcessingServicer(map_processing_service_pb2_grpc.MapProcessingServiceServicer):
    def __init__(self, robot: SimRobot, graph_nav: GraphNav) -> None:
        self.robot, self.clock, self.graph_nav = robot, robot.clock, graph_nav

    def _stamp(self, response, request):
        return stamped(self.clock, response, request.header)

    def _missing_snapshots(self, response) -> bool:
        graph_map = self.graph_nav.map
        missing = [w for w in graph_map.graph.waypoints
                   if w.snapshot_id not in graph_map.waypoint_snapshots]
        response.missing_snapshot_ids.extend(w.snapshot_id for w in missing)
        response.missing_waypoint_ids.extend(w.id for w in missing)
        if missing:
            response.status = response.STATUS_MISSING_WAYPOINT_SNAPSHOTS
        return bool(missing)

    def ProcessTopology(self, request, context):
        response = map_processing_pb2.ProcessTopologyResponse()
        params = request.params
        fiducials = not params.HasField("do_fiducial_loop_closure") or \
            params.do_fiducial_loop_closure.value
        odometry = not params.HasField("do_odometry_loop_closure") or \
            params.do_odometry_loop_closure.value

        def _change() -> None:
            graph_map = self.graph_nav.map
            if not self._missing_snapshots(response):
                new_edges = self._closures(fiducials, odometry)
                response.new_subgraph.edges.extend(new_edges)
                if request.modify_map_on_server:
                    for edge in new_edges:
                        graph_map.add_edge(edge)
                    response.map_on_server_was_modified = bool(new_edges)
                response.status = response.STATUS_OK

        self.graph_nav.atomically(_change)
        yield self._stamp(response, request)

    def _closures(self, fiducials: bool, odometry: bool) -> list[map_pb2.Edge]:
        graph_map = self.graph_nav.map
        joined = {frozenset(graph_map.edge_key(e)) for e in graph_map.graph.edges}
        out = []

        def add(a: str, b: str, a_tform_b, source: int) -> None:
            if a == b or frozenset((a, b)) in joined:
                return
            joined.add(frozenset((a, b)))
            edge = map_pb2.Edge(from_tform_to=se3_proto(a_tform_b))
            edge.id.from_waypoint, edge.id.to_waypoint = a, b
            edge.annotations.edge_source = source
            out.append(edge)

        if fiducials:
            for sightings in waypoint_fiducials(graph_map).values():
                for (a, a_tag), (b, b_tag) in itertools.combinations(sightings, 2):
                    add(a, b, mobility.compose(a_tag, mobility.inverse(b_tag)),
                        map_pb2.Edge.EDGE_SOURCE_FIDUCIAL_LOOP_CLOSURE)
        if odometry:
            poses = graph_map.seed_poses()
            for a, b in itertools.combinations(poses, 2):
                if math.hypot(poses[a].x - poses[b].x,
                              poses[a].y - poses[b].y) <= ODOMETRY_CLOSURE_DISTANCE:
                    add(a, b, mobility.compose(mobility.inverse(poses[a]), poses[b]),
                        map_pb2.Edge.EDGE_SOURCE_SMALL_LOOP_CLOSURE)
        return out

    def ProcessAnchoring(self, request, context):
        response = map_processing_pb2.ProcessAnchoringResponse()

        def _change() -> None:
            graph_map = self.graph_nav.map
            if not self._missing_snapshots(response):
                anchoring = graph_map.anchoring()
                poses = graph_map.seed_poses()
                for tag_id, sightings in sorted(waypoint_fiducials(graph_map).items()):
                    seen = [(w, pose) for w, pose in sightings if w in poses]
                    if not seen:
                        continue
                    waypoint_id, waypoint_tform_tag = min(
                        seen, key=lambda s: math.hypot(s[1].x, s[1].y))
                    anchoring.objects.add(id=str(tag_id), seed_tform_object=se3_proto(
                        mobility.compose(poses[waypoint_id], waypoint_tform_tag)))
                response.waypoint_results.extend(anchoring.anchors)
                response.world_object_results.extend(anchoring.objects)
                if request.modify_anchoring_on_server:
                    graph_map.graph.anchoring.CopyFrom(anchoring)
                    response.anchoring_on_server_was_modified = True
                response.iteration, response.final_iteration = 1, True
                response.status = response.STATUS_OK

        self.graph_nav.atomically(_change)
        yield self._stamp(response, request)


def spec() -> ServiceSpec:
    return ServiceSpec("map-processing-service", "bosdyn.api.graph_nav.MapProcessingService",
                       "api.spot.robot",
                       map_processing_service_pb2_grpc.add_MapProcessingServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: MapProcessingServicer(parts.robot,
                                                                     parts.graph_nav)),)
