"""graph-nav-service: the map (upload, download, clear; graph and snapshots, plain and
streamed), localization (set and get) and navigation (to a waypoint, along a route, to a pose
in the seed frame) with its feedback. Behaviour lives in ``spot_sim.autonomy``."""

import itertools

from bosdyn.api.graph_nav import graph_nav_pb2, graph_nav_service_pb2_grpc, map_pb2
from bosdyn.api.header_pb2 import CommonError
from google.protobuf.message import DecodeError

from spot_sim.autonomy import clearance, navigation
from spot_sim.autonomy.map import (
    InvalidGraphError,
    pose_finite,
    se2_from_pose2,
    se2_from_proto,
    validate,
)
from spot_sim.autonomy.navigation import GraphNav, LocalizationError
from spot_sim.autonomy.recording import Recorder
from spot_sim.body import mobility
from spot_sim.body.mobility import Se2
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.rpc import (
    NAVIGATION_LEASES,
    OPTIONAL_LEASE,
    assemble,
    chunks,
    set_error,
    stamped,
    unary,
)
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.core.time_sync_service import TimeSyncServicer

NavTo = graph_nav_pb2.NavigateToResponse
NavRoute = graph_nav_pb2.NavigateRouteResponse
NavAnchor = graph_nav_pb2.NavigateToAnchorResponse
Localize = graph_nav_pb2.SetLocalizationRequest


class NavigationRejectedError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class GraphNavServicer(graph_nav_service_pb2_grpc.GraphNavServiceServicer):
    def __init__(self, robot: SimRobot, graph_nav: GraphNav, recorder: Recorder,
                 time_sync: TimeSyncServicer) -> None:
        self.robot, self.clock = robot, robot.clock
        self.graph_nav, self.recorder, self.time_sync = graph_nav, recorder, time_sync

    def _stamp(self, response, request_header=None):
        return stamped(self.clock, response, request_header)

    def _use_lease(self, lease, response) -> bool:
        """For the streaming RPCs, which ``unary`` does not wrap."""
        return OPTIONAL_LEASE.use_sent(self.robot, lease, response)

    # ------------------------------------------------------------------ map
    def _upload(self, request: graph_nav_pb2.UploadGraphRequest,
                response: graph_nav_pb2.UploadGraphResponse) -> None:
        if not self._use_lease(request.lease, response):
            return

        def _change() -> bool:
            if self.recorder.recording:
                set_error(response, CommonError.CODE_INVALID_REQUEST,
                          "cannot change the map while recording")
                return False
            graph_map = self.graph_nav.map
            known = set() if request.replace_graph else {w.id for w in graph_map.graph.waypoints}
            try:
                validate(request.graph, known)
            except InvalidGraphError as exc:
                # as a robot answers it: the status (InvalidGraphError in the SDK), and why
                response.status = response.STATUS_INVALID_GRAPH
                response.header.error.message = str(exc)
                return False
            if request.replace_graph:
                self.graph_nav.seed_tform_vision = None
            graph_map.merge(request.graph, request.replace_graph)
            response.replaced_graph = request.replace_graph
            graph_map.report_snapshots(request.graph, response)
            return True

        if not self.graph_nav.atomically(_change):
            return
        response.status = response.STATUS_OK

    @unary(graph_nav_pb2.UploadGraphResponse)
    def UploadGraph(self, request, response, context):
        self._upload(request, response)

    def UploadGraphStreaming(self, request_iterator, context):
        data, _ = assemble(request_iterator)
        request = graph_nav_pb2.UploadGraphRequest()
        response = graph_nav_pb2.UploadGraphResponse()
        try:
            request.ParseFromString(data)
        except DecodeError:
            set_error(response, CommonError.CODE_INVALID_REQUEST, "upload is not a graph")
            return self._stamp(response)
        self._upload(request, response)
        return self._stamp(response, request.header)

    def _upload_snapshot(self, request_iterator, snapshot_type, store: str, response):
        data, requests = assemble(request_iterator)
        header = requests[0].header if requests else None
        if not requests or not self._use_lease(requests[0].lease, response):
            return self._stamp(response, header)
        snapshot = snapshot_type()
        try:
            snapshot.ParseFromString(data)
        except DecodeError:
            set_error(response, CommonError.CODE_INVALID_REQUEST, "upload is not a snapshot")
            return self._stamp(response, header)
        if not snapshot.id:
            set_error(response, CommonError.CODE_INVALID_REQUEST, "snapshot has no id")
            return self._stamp(response, header)
        self.graph_nav.add_snapshots(**{store: [snapshot]})
        if "status" in response.DESCRIPTOR.fields_by_name:
            response.status = response.STATUS_OK
        return self._stamp(response, header)

    def UploadWaypointSnapshot(self, request_iterator, context):
        return self._upload_snapshot(request_iterator, map_pb2.WaypointSnapshot,
                                     "waypoint_snapshots",
                                     graph_nav_pb2.UploadWaypointSnapshotResponse())

    def UploadEdgeSnapshot(self, request_iterator, context):
        return self._upload_snapshot(request_iterator, map_pb2.EdgeSnapshot, "edge_snapshots",
                                     graph_nav_pb2.UploadEdgeSnapshotResponse())

    def UploadSnapshots(self, request_iterator, context):
        data, requests = assemble(request_iterator)
        response = graph_nav_pb2.UploadSnapshotsResponse()
        header = requests[0].header if requests else None
        if not requests or not self._use_lease(requests[0].lease, response):
            return self._stamp(response, header)
        snapshots = graph_nav_pb2.UploadSnapshotsRequest.Snapshots()
        try:
            snapshots.ParseFromString(data)
        except DecodeError:
            set_error(response, CommonError.CODE_INVALID_REQUEST, "upload is not snapshots")
            return self._stamp(response, header)
        self.graph_nav.add_snapshots(snapshots.waypoint_snapshots, snapshots.edge_snapshots)
        response.status = response.STATUS_OK
        return self._stamp(response, header)

    def _graph(self) -> map_pb2.Graph:
        return self.graph_nav.graph()

    @unary(graph_nav_pb2.DownloadGraphResponse)
    def DownloadGraph(self, request, response, context):
        response.graph.CopyFrom(self._graph())

    def DownloadGraphStreaming(self, request, context):
        whole = self._stamp(graph_nav_pb2.DownloadGraphResponse(graph=self._graph()),
                            request.header)
        for chunk in chunks(whole.SerializeToString()):
            yield self._stamp(graph_nav_pb2.DownloadGraphStreamingResponse(chunk=chunk),
                              request.header)

    def _download_snapshot(self, request, store: str, snapshot_id: str, response_type):
        snapshot = self.graph_nav.find_snapshot(store, snapshot_id)
        if snapshot is None:
            response = response_type(status=response_type.STATUS_SNAPSHOT_DOES_NOT_EXIST)
            yield self._stamp(response, request.header)
            return
        if store == "waypoint_snapshots" and (
                request.do_not_download_point_cloud or not request.download_images):
            copy = map_pb2.WaypointSnapshot()
            copy.CopyFrom(snapshot)
            if request.do_not_download_point_cloud:
                copy.ClearField("point_cloud")
            if not request.download_images:
                copy.ClearField("images")
            snapshot = copy
        for chunk in chunks(snapshot.SerializeToString()):
            response = response_type(status=response_type.STATUS_OK, chunk=chunk)
            setattr(response, "waypoint_snapshot_id" if store == "waypoint_snapshots"
                    else "edge_snapshot_id", snapshot_id)
            yield self._stamp(response, request.header)

    def DownloadWaypointSnapshot(self, request, context):
        yield from self._download_snapshot(request, "waypoint_snapshots",
                                           request.waypoint_snapshot_id,
                                           graph_nav_pb2.DownloadWaypointSnapshotResponse)

    def DownloadEdgeSnapshot(self, request, context):
        yield from self._download_snapshot(request, "edge_snapshots", request.edge_snapshot_id,
                                           graph_nav_pb2.DownloadEdgeSnapshotResponse)

    @unary(graph_nav_pb2.ClearGraphResponse, OPTIONAL_LEASE)
    def ClearGraph(self, request, response, context):

        def _change() -> bool:
            if self.recorder.recording:
                response.status = response.STATUS_RECORDING
                return False
            self.graph_nav.clear(self.robot)
            return True

        if not self.graph_nav.atomically(_change):
            return
        response.status = response.STATUS_OK

    # ------------------------------------------------------------------ localization
    @unary(graph_nav_pb2.SetLocalizationResponse)
    def SetLocalization(self, request, response, context):
        robot = self.robot

        def _change() -> bool:
            if robot.active_fault():
                response.status = response.STATUS_ROBOT_IMPAIRED
                return False
            try:
                if request.fiducial_init in (Localize.FIDUCIAL_INIT_UNKNOWN,
                                             Localize.FIDUCIAL_INIT_NO_FIDUCIAL):
                    guess = request.initial_guess
                    if not pose_finite(guess.waypoint_tform_body):
                        raise LocalizationError(response.STATUS_FAILED,
                                                "initial guess is not finite")
                    self.graph_nav.localize_to_guess(
                        robot, guess.waypoint_id, se2_from_proto(guess.waypoint_tform_body),
                        request.max_distance, request.max_yaw)
                else:
                    self.graph_nav.localize_to_fiducial(
                        robot, request.fiducial_init, request.use_fiducial_id,
                        request.initial_guess.waypoint_id)
            except LocalizationError as exc:
                response.status = exc.status
                set_error(response, CommonError.CODE_OK, str(exc))
                return False
            response.localization.CopyFrom(self.graph_nav.localization(robot))
            return True

        if not self.graph_nav.atomically(_change):
            return
        response.status = response.STATUS_OK

    @unary(graph_nav_pb2.GetLocalizationStateResponse)
    def GetLocalizationState(self, request, response, context):
        robot = self.robot
        response.localization.CopyFrom(self.graph_nav.localization(robot))
        snapshot = robot.transforms_snapshot()
        response.robot_kinematics.transforms_snapshot.CopyFrom(snapshot)
        response.robot_kinematics.acquisition_timestamp.CopyFrom(self.clock.timestamp())

    # ------------------------------------------------------------------ navigation
    def _end_ns(self, request, statuses) -> int:
        if not request.HasField("end_time"):
            raise NavigationRejectedError(statuses.STATUS_EXPIRED, "end_time is required")
        if not self.time_sync.known(request.clock_identifier):
            raise NavigationRejectedError(statuses.STATUS_NO_TIMESYNC,
                                          "no time sync for this clock identifier")
        end_ns = timestamp_to_nsec(request.end_time)
        if end_ns < self.clock.now_nsec():
            raise NavigationRejectedError(statuses.STATUS_EXPIRED, "end_time is in the past")
        return end_ns

    def _check_robot(self, statuses) -> Se2:
        """The robot's seed-frame pose, after the checks every navigation command makes."""
        robot = self.robot
        if self.recorder.recording:
            raise NavigationRejectedError(statuses.STATUS_RECORDING, "the robot is recording")
        refusal = robot.motion_refusal()
        if refusal is not None:
            raise NavigationRejectedError(statuses.STATUS_ROBOT_IMPAIRED, refusal)
        seed_tform_body = self.graph_nav.seed_tform_body(robot)
        if seed_tform_body is None or self.graph_nav.map.empty:
            raise NavigationRejectedError(statuses.STATUS_NOT_LOCALIZED_TO_MAP,
                                          "the robot is not localized to the map")
        return seed_tform_body

    def _navigate(self, request, response, statuses, plan) -> None:
        """Common part of the three navigation commands; ``plan(seed_tform_body)`` returns the
        route (and optional final seed goal) or raises NavigationRejectedError."""
        robot = self.robot

        def _change() -> navigation.NavTask | None:
            """The new task; None if refused or only renewed (``response`` says which)."""
            try:
                end_ns = self._end_ns(request, statuses)
                if request.command_id:  # continue a command: only the active one can be
                    if not self.graph_nav.renew(robot, request.command_id, end_ns):
                        raise NavigationRejectedError(statuses.STATUS_UNRECOGNIZED_COMMAND,
                                                      f"command {request.command_id} is not "
                                                      f"the active navigation command")
                    response.status, response.command_id = statuses.STATUS_OK, request.command_id
                    return None
                route, final_goal = plan(self._check_robot(statuses))
            except NavigationRejectedError as exc:
                response.status = exc.status
                set_error(response, CommonError.CODE_OK, str(exc))
                return None
            offset_field = "destination_waypoint_tform_body_goal"
            offset = (se2_from_pose2(getattr(request, offset_field))
                      if offset_field in request.DESCRIPTOR.fields_by_name
                      and request.HasField(offset_field) else None)
            return self.graph_nav.navigate(robot, route, end_ns, final_goal, offset)

        task = self.graph_nav.atomically(_change)
        if task is None:
            return
        response.status = statuses.STATUS_OK
        response.command_id = task.id

    def _route_from_here(self, seed_tform_body: Se2, goal: str, statuses) -> list[str]:
        """The shortest route to ``goal`` clear of user no-go regions; else STATUS_NO_PATH."""
        graph_map = self.graph_nav.map
        start, _ = graph_map.nearest(seed_tform_body)
        robot = self.robot
        regions, odom_tform_body = robot.no_go_regions(robot.clock.now_nsec())
        odom_tform_seed = mobility.compose(odom_tform_body, mobility.inverse(seed_tform_body))
        route = graph_map.route(start, goal, clearance.clear_of(regions, odom_tform_seed))
        if route is None:
            raise NavigationRejectedError(statuses.STATUS_NO_PATH, f"no path from {start!r} to "
                                          f"{goal!r}{' around no-go regions' * bool(regions)}")
        return route

    @unary(graph_nav_pb2.NavigateToResponse, NAVIGATION_LEASES)
    def NavigateTo(self, request, response, context):
        goal = request.destination_waypoint_id

        def plan(seed_tform_body):
            if self.graph_nav.map.waypoint(goal) is None:
                raise NavigationRejectedError(NavTo.STATUS_UNKNOWN_WAYPOINT,
                                              f"unknown waypoint {goal!r}")
            return self._route_from_here(seed_tform_body, goal, NavTo), None

        self._navigate(request, response, NavTo, plan)

    @unary(graph_nav_pb2.NavigateRouteResponse, NAVIGATION_LEASES)
    def NavigateRoute(self, request, response, context):
        graph_map = self.graph_nav.map
        waypoints = list(request.route.waypoint_id)

        def plan(seed_tform_body):
            unknown = [w for w in waypoints if graph_map.waypoint(w) is None]
            if not waypoints or unknown:
                response.error_waypoint_ids.extend(unknown)
                raise NavigationRejectedError(NavRoute.STATUS_UNKNOWN_ROUTE_ELEMENTS,
                                              "the route is empty or names unknown waypoints")
            pairs = list(itertools.pairwise(waypoints))
            edges = [(e.from_waypoint, e.to_waypoint) for e in request.route.edge_id]
            if edges and len(edges) != len(pairs):
                raise NavigationRejectedError(NavRoute.STATUS_INVALID_EDGE,
                                              "the route needs one edge per waypoint pair")
            for a, b in pairs:
                if not graph_map.has_edge(a, b):
                    response.error_edge_ids.add(from_waypoint=a, to_waypoint=b)
            if response.error_edge_ids:
                raise NavigationRejectedError(NavRoute.STATUS_INVALID_EDGE,
                                              "consecutive route waypoints are not joined")
            remainder, distance = graph_map.route_remainder(seed_tform_body, waypoints)
            if distance > navigation.ROUTE_START_DISTANCE:
                raise NavigationRejectedError(NavRoute.STATUS_NOT_LOCALIZED_TO_ROUTE,
                                              "the robot is not near the route")
            return remainder, None

        self._navigate(request, response, NavRoute, plan)

    @unary(graph_nav_pb2.NavigateToAnchorResponse, NAVIGATION_LEASES)
    def NavigateToAnchor(self, request, response, context):
        graph_map = self.graph_nav.map

        def plan(seed_tform_body):
            if not pose_finite(request.seed_tform_goal):
                raise NavigationRejectedError(NavAnchor.STATUS_INVALID_POSE,
                                              "seed_tform_goal is not finite")
            goal = se2_from_proto(request.seed_tform_goal)
            near, distance = graph_map.nearest(goal)
            if distance > navigation.ANCHOR_GOAL_DISTANCE:
                raise NavigationRejectedError(NavAnchor.STATUS_NO_PATH,
                                              f"the goal is {distance:.1f} m from the map")
            return self._route_from_here(seed_tform_body, near, NavAnchor), goal

        self._navigate(request, response, NavAnchor, plan)

    @unary(graph_nav_pb2.NavigationFeedbackResponse)
    def NavigationFeedback(self, request, response, context):
        self.graph_nav.feedback(request.command_id, response)


def spec() -> ServiceSpec:
    return ServiceSpec("graph-nav-service", "bosdyn.api.graph_nav.GraphNavService",
                       "api.spot.robot",
                       graph_nav_service_pb2_grpc.add_GraphNavServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: GraphNavServicer(
    parts.robot, parts.graph_nav, parts.recorder, parts.servicer(TimeSyncServicer))),)
