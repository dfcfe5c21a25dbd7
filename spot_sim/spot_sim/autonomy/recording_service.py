"""recording-service: start and stop map recording, its status, and waypoints and edges made
on request. Behaviour lives in ``spot_sim.autonomy.recording``."""

from bosdyn.api.graph_nav import recording_pb2, recording_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError

from spot_sim.autonomy.map import InvalidGraphError, validate
from spot_sim.autonomy.navigation import fiducial_poses
from spot_sim.autonomy.recording import Recorder, RecordingError
from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import OPTIONAL_LEASE, set_error, unary
from spot_sim.core.served import Served, ServiceSpec


class RecordingServicer(recording_service_pb2_grpc.GraphNavRecordingServiceServicer):
    def __init__(self, robot: SimRobot, recorder: Recorder, dock_world) -> None:
        self.robot, self.clock, self.recorder = robot, robot.clock, recorder
        self.world = dock_world

    def _missing_fiducials(self, required, response) -> bool:
        seen = fiducial_poses(self.world.seen_by(self.robot), "odom")
        missing = [tag for tag in required if tag not in seen]
        response.missing_fiducials.extend(missing)
        if missing:
            response.status = response.STATUS_MISSING_FIDUCIALS
        return bool(missing)

    @unary(recording_pb2.StartRecordingResponse, OPTIONAL_LEASE)
    def StartRecording(self, request, response, context):
        robot = self.robot

        def _change() -> bool:
            if self.recorder.recording:
                response.status = response.STATUS_OK
                return False
            if robot.active_fault():
                response.status = response.STATUS_ROBOT_IMPAIRED
                return False
            if self._missing_fiducials(request.require_fiducials, response):
                return False
            environment = (request.recording_environment
                           if request.HasField("recording_environment") else None)
            session_start = (request.session_start_time
                             if request.HasField("session_start_time") else robot.clock.timestamp())
            try:
                waypoint = self.recorder.start(robot, environment, session_start)
            except RecordingError as exc:
                response.status = exc.status
                set_error(response, CommonError.CODE_OK, str(exc))
                return False
            response.created_waypoint.CopyFrom(waypoint)
            response.session_start_time.CopyFrom(session_start)
            return True

        if not self.recorder.graph_nav.atomically(_change):
            return
        response.status = response.STATUS_OK

    @unary(recording_pb2.StopRecordingResponse, OPTIONAL_LEASE)
    def StopRecording(self, request, response, context):
        def _change() -> None:
            if self.recorder.session_start is not None:
                response.session_start_time.CopyFrom(self.recorder.session_start)
            self.recorder.stop()

        self.recorder.graph_nav.atomically(_change)
        response.status = response.STATUS_OK

    @unary(recording_pb2.GetRecordStatusResponse)
    def GetRecordStatus(self, request, response, context):
        self.recorder.graph_nav.atomically(lambda: self.recorder.status(response))

    @unary(recording_pb2.SetRecordingEnvironmentResponse, OPTIONAL_LEASE)
    def SetRecordingEnvironment(self, request, response, context):
        self.recorder.graph_nav.atomically(
            lambda: self.recorder.environment.CopyFrom(request.environment))

    @unary(recording_pb2.CreateWaypointResponse, OPTIONAL_LEASE)
    def CreateWaypoint(self, request, response, context):
        robot = self.robot

        def _change() -> bool:
            if not self.recorder.recording:
                response.status = response.STATUS_NOT_RECORDING
                return False
            if self._missing_fiducials(request.require_fiducials, response):
                return False
            waypoint, edge = self.recorder.create_waypoint(robot, request.waypoint_name)
            response.created_waypoint.CopyFrom(waypoint)
            if edge is not None:
                response.created_edge.CopyFrom(edge)
            return True

        if not self.recorder.graph_nav.atomically(_change):
            return
        response.status = response.STATUS_OK

    @unary(recording_pb2.CreateEdgeResponse, OPTIONAL_LEASE)
    def CreateEdge(self, request, response, context):
        def _change() -> bool:
            graph_map = self.recorder.graph_nav.map
            edge = request.edge
            if not self.recorder.recording:
                response.status = response.STATUS_NOT_RECORDING
                return False
            for existing in graph_map.graph.edges:
                if graph_map.edge_key(existing) == graph_map.edge_key(edge):
                    response.status = response.STATUS_EXISTS
                    response.error_existing_edge.CopyFrom(existing)
                    return False
            known = {w.id for w in graph_map.graph.waypoints}
            graph = type(graph_map.graph)()
            graph.edges.append(edge)
            try:
                validate(graph, known)
            except InvalidGraphError as exc:
                response.status = response.STATUS_UNKNOWN_WAYPOINT
                set_error(response, CommonError.CODE_OK, str(exc))
                return False
            graph_map.add_edge(edge)
            return True

        if not self.recorder.graph_nav.atomically(_change):
            return
        response.status = response.STATUS_OK


def spec() -> ServiceSpec:
    return ServiceSpec("recording-service", "bosdyn.api.graph_nav.GraphNavRecordingService",
                       "api.spot.robot",
                       recording_service_pb2_grpc.add_GraphNavRecordingServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: RecordingServicer(parts.robot, parts.recorder,
                                                             parts.world)),)
