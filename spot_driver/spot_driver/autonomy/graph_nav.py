"""GraphNav through the robot's graph-nav and recording services: the map (upload, download,
clear), localization, navigation and recording, with the checks that keep a bad request from
reaching the robot (unknown waypoints, an empty or broken route, not localized, non-finite
poses, a missing or corrupt map directory).

Navigation commands are short-lived: each is sent with ``command_window`` seconds to run and
renewed (same command id) while its goal is active, so a driver that dies leaves the robot
standing within that window.
"""

import itertools
import math
from collections.abc import Callable

from bosdyn.api.graph_nav import graph_nav_pb2, map_pb2, nav_pb2
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.graph_nav import GraphNavClient
from bosdyn.client.math_helpers import SE3Pose
from bosdyn.client.recording import GraphNavRecordingServiceClient
from bosdyn.client.robot_command import RobotCommandBuilder

from spot_driver.autonomy.map_files import MapFiles, read_map, write_map
from spot_driver.core.connection import RobotConnection
from spot_driver.core.errors import CommandError
from spot_driver.core.follower import Progress, RobotTask
from spot_driver.core.state_cache import RobotStateCache

Feedback = graph_nav_pb2.NavigationFeedbackResponse
FOLLOWING = Feedback.STATUS_FOLLOWING_ROUTE
Localize = graph_nav_pb2.SetLocalizationRequest
SNAPSHOT_BATCH_BYTES = 4_000_000


def _finite(pose: SE3Pose) -> bool:
    values = (pose.x, pose.y, pose.z, pose.rot.w, pose.rot.x, pose.rot.y, pose.rot.z)
    return all(math.isfinite(v) for v in values) and \
        abs(math.sqrt(sum(v * v for v in values[3:])) - 1.0) < 1e-3


def _refusal(exc: sdk_errors.ResponseError) -> CommandError:
    """A GraphNav refusal as a sentence: the status name and the robot's message."""
    response = exc.response
    status = getattr(response, "status", None)
    name = ""
    if status is not None:
        field = response.DESCRIPTOR.fields_by_name["status"]
        name = field.enum_type.values_by_number[status].name if \
            status in field.enum_type.values_by_number else str(status)
    detail = response.header.error.message
    return CommandError(f"robot refused: {name or type(exc).__name__}"
                        + (f" ({detail})" if detail else ""))


def send_map(client: GraphNavClient, files: MapFiles, batch_bytes: int = SNAPSHOT_BATCH_BYTES
             ) -> None:
    """Replace the robot's map: the graph, then the snapshots it does not have yet, several
    per UploadSnapshots call (up to ``batch_bytes``); robots without that RPC get them one
    per call."""
    response = client.upload_graph(graph=files.graph,
                                   generate_new_anchoring=not files.graph.anchoring.anchors,
                                   replace_graph=True)
    waypoints = [files.waypoint_snapshots[i] for i in response.unknown_waypoint_snapshot_ids]
    edges = [files.edge_snapshots[i] for i in response.unknown_edge_snapshot_ids]
    try:
        batch, size = graph_nav_pb2.UploadSnapshotsRequest.Snapshots(), 0
        for snapshot in (*waypoints, *edges):
            if size and size + snapshot.ByteSize() > batch_bytes:
                client.upload_snapshots(batch)
                batch, size = graph_nav_pb2.UploadSnapshotsRequest.Snapshots(), 0
            store = (batch.waypoint_snapshots if isinstance(snapshot, map_pb2.WaypointSnapshot)
                     else batch.edge_snapshots)
            store.append(snapshot)
            size += snapshot.ByteSize()
        if size:
            client.upload_snapshots(batch)
    except sdk_errors.UnimplementedError:
        for snapshot in waypoints:
            client.upload_waypoint_snapshot(snapshot)
        for snapshot in edges:
            client.upload_edge_snapshot(snapshot)


class GraphNavigator:
    """The driver's use of GraphNav: map, localization, navigation and recording."""

    def __init__(self, connection: RobotConnection, cache: RobotStateCache,
                 command_window: float = 3.0) -> None:
        self._connection, self._cache = connection, cache
        self.command_window = command_window
        self._last_route: tuple[tuple[str, ...], nav_pb2.Route | None] = ((), None)

    @property
    def client(self) -> GraphNavClient:
        return self._connection.client(GraphNavClient)

    @property
    def recording(self) -> GraphNavRecordingServiceClient:
        return self._connection.client(GraphNavRecordingServiceClient)

    # ------------------------------------------------------------------ map
    def graph(self) -> map_pb2.Graph:
        return self.client.download_graph()

    def upload(self, directory: str) -> map_pb2.Graph:
        """Replace the robot's map with the one in ``directory`` (checked first)."""
        files = read_map(directory)
        self._connection.require_lease()
        try:
            send_map(self.client, files)
        except sdk_errors.LeaseUseError:
            raise
        except sdk_errors.ResponseError as exc:
            raise _refusal(exc) from None
        return files.graph

    def download(self, directory: str) -> MapFiles:
        """Write the robot's map (graph and snapshots) to ``directory``."""
        if not directory:
            raise CommandError("no map directory given")
        graph = self.graph()
        if not graph.waypoints:
            raise CommandError("the robot has no map to download")
        files = MapFiles(graph)
        for waypoint in graph.waypoints:
            if waypoint.snapshot_id:
                files.waypoint_snapshots[waypoint.snapshot_id] = \
                    self.client.download_waypoint_snapshot(waypoint.snapshot_id)
        for edge in graph.edges:
            if edge.snapshot_id:
                files.edge_snapshots[edge.snapshot_id] = \
                    self.client.download_edge_snapshot(edge.snapshot_id)
        try:
            write_map(directory, files)
        except OSError as exc:
            raise CommandError(f"cannot write the map to directory {directory!r}: "
                               f"{exc.strerror}") from None
        return files

    def waypoint_snapshots(self, graph: map_pb2.Graph) -> dict[str, map_pb2.WaypointSnapshot]:
        return {w.snapshot_id: self.client.download_waypoint_snapshot(w.snapshot_id)
                for w in graph.waypoints if w.snapshot_id}

    def clear(self) -> None:
        self._connection.require_lease()
        try:
            self.client.clear_graph()
        except sdk_errors.LeaseUseError:
            raise
        except sdk_errors.ResponseError as exc:
            raise _refusal(exc) from None

    # ------------------------------------------------------------------ localization
    def state(self) -> graph_nav_pb2.GetLocalizationStateResponse:
        return self.client.get_localization_state()

    def localize_fiducial(self, fiducial_id: int = 0) -> nav_pb2.Localization:
        """Localize to the nearest fiducial in view (or to ``fiducial_id``)."""
        if fiducial_id < 0:
            raise CommandError(f"fiducial id must not be negative, not {fiducial_id}")
        mode = Localize.FIDUCIAL_INIT_SPECIFIC if fiducial_id else Localize.FIDUCIAL_INIT_NEAREST
        return self._localize(nav_pb2.Localization(), fiducial_init=mode,
                              use_fiducial_id=fiducial_id or None)

    def localize_waypoint(self, waypoint_id: str, waypoint_tform_body: SE3Pose
                          ) -> nav_pb2.Localization:
        """Localize from a guess of the body's pose relative to a waypoint."""
        if not _finite(waypoint_tform_body):
            raise CommandError("waypoint_tform_body must be finite with a unit quaternion")
        self._known_waypoints([waypoint_id])
        guess = nav_pb2.Localization(waypoint_id=waypoint_id)
        guess.waypoint_tform_body.CopyFrom(waypoint_tform_body.to_proto())
        return self._localize(guess, fiducial_init=Localize.FIDUCIAL_INIT_NO_FIDUCIAL)

    def _localize(self, guess: nav_pb2.Localization, **kwargs) -> nav_pb2.Localization:
        try:
            return self.client.set_localization(initial_guess_localization=guess, **kwargs)
        except sdk_errors.ResponseError as exc:
            raise _refusal(exc) from None

    # ------------------------------------------------------------------ navigation
    def _known_waypoints(self, waypoint_ids: list[str]) -> map_pb2.Graph:
        graph = self.graph()
        known = {w.id for w in graph.waypoints}
        if not known:
            raise CommandError("the robot has no map; upload or record one first")
        unknown = [w for w in waypoint_ids if w not in known]
        if unknown:
            raise CommandError(f"unknown waypoint {unknown[0]!r}: not in the robot's map")
        return graph

    def _ready_to_navigate(self) -> None:
        self._connection.require_lease()
        self._cache.require_ready()
        if not self.state().localization.waypoint_id:
            raise CommandError("the robot is not localized to the map; call "
                               "'graph_nav/set_localization' first")

    def navigate_to(self, waypoint_id: str, command_id: int | None = None) -> int:
        """Start (or, with ``command_id``, renew) navigation to a waypoint."""
        if command_id is None:
            if not waypoint_id:
                raise CommandError("no destination waypoint given")
            self._known_waypoints([waypoint_id])
            self._ready_to_navigate()
        return self._send(self.client.navigate_to, waypoint_id, self.command_window,
                          command_id=command_id)

    def navigate_to_pose(self, seed_tform_goal: SE3Pose, command_id: int | None = None) -> int:
        """Start (or renew) navigation to a pose in the map (seed) frame."""
        if command_id is None:
            if not _finite(seed_tform_goal):
                raise CommandError("the goal pose must be finite with a unit quaternion")
            self._known_waypoints([])
            self._ready_to_navigate()
        return self._send(self.client.navigate_to_anchor, seed_tform_goal.to_proto(),
                          self.command_window, command_id=command_id)

    def route(self, waypoint_ids: list[str]) -> nav_pb2.Route:
        """A route through ``waypoint_ids``, each consecutive pair joined by a map edge."""
        if not waypoint_ids:
            raise CommandError("the route is empty")
        graph = self._known_waypoints(waypoint_ids)
        edges = {(e.id.from_waypoint, e.id.to_waypoint) for e in graph.edges}
        route_edges = []
        for a, b in itertools.pairwise(waypoint_ids):
            if (a, b) in edges:
                route_edges.append(map_pb2.Edge.Id(from_waypoint=a, to_waypoint=b))
            elif (b, a) in edges:
                route_edges.append(map_pb2.Edge.Id(from_waypoint=b, to_waypoint=a))
            else:
                raise CommandError(f"no edge joins waypoints {a!r} and {b!r}")
        return GraphNavClient.build_route(waypoint_ids, route_edges)

    def navigate_route(self, waypoint_ids: list[str], command_id: int | None = None) -> int:
        """Start (or renew) navigation along a route of waypoints. A renewal resends the
        route checked when the command started (no map download each time)."""
        key = tuple(waypoint_ids)
        if command_id is None or self._last_route[0] != key:
            route = self.route(waypoint_ids)
            if command_id is None:
                self._ready_to_navigate()
            self._last_route = (key, route)
        return self._send(self.client.navigate_route, self._last_route[1],
                          self.command_window, command_id=command_id)

    def _send(self, method, target, duration: float, command_id: int | None) -> int:
        try:
            return method(target, cmd_duration=duration, command_id=command_id)
        except sdk_errors.LeaseUseError:
            raise
        except sdk_errors.ResponseError as exc:
            raise _refusal(exc) from None

    def feedback(self, command_id: int) -> graph_nav_pb2.NavigationFeedbackResponse:
        return self.client.navigation_feedback(command_id)

    def stop(self) -> None:
        """Stop the body where it is: ends navigation."""
        self._connection.command_client.robot_command(RobotCommandBuilder.stop_command())

    # ------------------------------------------------------------------ recording
    def _lease(self):
        self._connection.require_lease()
        return self._connection.robot.lease_wallet.get_lease().lease_proto

    def start_recording(self) -> str:
        """Start recording; the id of the waypoint made where the robot stands."""
        try:
            response = self.recording.start_recording_full(lease=self._lease())
        except sdk_errors.ResponseError as exc:
            raise _refusal(exc) from None
        return response.created_waypoint.id

    def stop_recording(self) -> None:
        try:
            self.recording.stop_recording(lease=self._lease())
        except sdk_errors.ResponseError as exc:
            raise _refusal(exc) from None

    def create_waypoint(self, name: str) -> str:
        try:
            response = self.recording.create_waypoint(lease=self._lease(),
                                                      waypoint_name=name or None)
        except sdk_errors.ResponseError as exc:
            raise _refusal(exc) from None
        return response.created_waypoint.id

    def is_recording(self) -> bool:
        return self.recording.get_record_status().is_recording


def feedback_name(status: int) -> str:
    return Feedback.Status.Name(status) if status in Feedback.Status.values() else str(status)


class NavigationTask(RobotTask):
    """One navigation goal: ``send(None)`` starts the command and ``send(command_id)`` renews
    it (every third of the command window) until the robot leaves STATUS_FOLLOWING_ROUTE;
    it succeeds on STATUS_REACHED_GOAL."""

    name = "navigation"

    def __init__(self, nav: GraphNavigator, send: Callable[[int | None], int],
                 timeout: float) -> None:
        if not 0 < timeout < 24 * 3600:
            raise CommandError(f"timeout must be in (0, 86400) s, not {timeout}")
        self._nav, self._send, self.timeout = nav, send, timeout
        self.renew_s = nav.command_window / 3.0
        self._command_id = 0

    def start(self) -> None:
        self._command_id = self._send(None)

    def poll(self) -> Progress:
        feedback = self._nav.feedback(self._command_id)
        status = feedback_name(feedback.status)
        progress = Progress(status=status, feedback={
            "status": status, "remaining_route_length": feedback.remaining_route_length,
            "remaining_waypoints": list(feedback.remaining_route.waypoint_id)})
        if feedback.status != FOLLOWING:
            progress.done = True
            progress.ok = feedback.status == Feedback.STATUS_REACHED_GOAL
            progress.message = "reached the goal" if progress.ok else \
                f"navigation ended: {status}"
            progress.values = {"completed_waypoints":
                               list(feedback.completed_route.waypoint_ids)}
        return progress

    def renew(self) -> None:
        """Move the command's end time forward; a command that just ended is not an error."""
        try:
            self._send(self._command_id)
        except CommandError:
            if self._nav.feedback(self._command_id).status == FOLLOWING:
                raise

    def stop(self) -> None:
        self._nav.stop()
