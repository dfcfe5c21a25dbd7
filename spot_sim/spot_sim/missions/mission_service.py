"""robot-mission: load, play, pause, stop and restart behavior-tree missions; their state,
questions and answers; chunked variants of load and of the info/mission reads."""

from typing import Any

import grpc
from bosdyn.api import data_acquisition_pb2, lease_pb2, power_pb2, robot_command_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.api.graph_nav import graph_nav_pb2
from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.mission import mission_pb2, mission_service_pb2_grpc, remote_service_pb2_grpc
from bosdyn.client import data_chunk

from spot_sim.autonomy.graph_nav_service import GraphNavServicer
from spot_sim.body.power_service import PowerServicer
from spot_sim.body.robot import SimRobot
from spot_sim.body.robot_command_service import RobotCommandServicer
from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.directory import Directory
from spot_sim.core.rpc import CHUNK_BYTES, LeaseCheck, set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.core.time_sync_service import ROBOT_CLOCK
from spot_sim.data_acquisition.data_acquisition_service import DataAcquisitionServicer
from spot_sim.docking.docking_service import DockingServicer
from spot_sim.missions import spot_cam_nodes
from spot_sim.missions.runner import MissionRunner
from spot_sim.state import state_report


def _lease_refused(response, uses) -> None:
    """The SDK's mission error handlers look at the header before the lease results."""
    bad = next(use for use in uses if use.status != use.STATUS_OK)
    set_error(response, CommonError.CODE_INVALID_REQUEST,
              f"lease for {bad.attempted_lease.resource!r} is not valid: "
              f"{bad.Status.Name(bad.status)}")


_LEASES = LeaseCheck("leases", allow_super=True, refused=_lease_refused)


class RobotServices:
    """What mission nodes call on the robot: the robot's own servicers, in process, so a
    mission's commands pass exactly the checks a client's do."""

    def __init__(self, robot: SimRobot, robot_command, power, docking, graph_nav=None,
                 data_acquisition=None, directory: Directory | None = None,
                 spot_cam: dict[type, Any] | None = None) -> None:
        self._robot, self._command, self._power, self._docking = \
            robot, robot_command, power, docking
        self._graph_nav, self._daq = graph_nav, data_acquisition
        self._spot_cam = spot_cam or {}
        self._directory = directory
        self._channels: dict[str, grpc.Channel] = {}

    def remote_mission(self, service_name: str):
        """A RemoteMissionService stub for the payload service registered as
        ``service_name`` (None: no such service)."""
        target = self._directory.endpoint_of(service_name) if self._directory else None
        if target is None:
            return None
        if target not in self._channels:
            self._channels[target] = grpc.insecure_channel(target)
        return remote_service_pb2_grpc.RemoteMissionServiceStub(self._channels[target])

    def robot_command(self, request):
        return self._command.RobotCommand(request, None)

    def robot_command_feedback(self, command_id: int):
        return self._command.RobotCommandFeedback(
            robot_command_pb2.RobotCommandFeedbackRequest(robot_command_id=command_id), None)

    def robot_state(self):
        return state_report.robot_state(self._robot)

    def clear_behavior_fault(self, fault_id: int, lease) -> bool:
        request = robot_command_pb2.ClearBehaviorFaultRequest(lease=lease,
                                                              behavior_fault_id=fault_id)
        response = self._command.ClearBehaviorFault(request, None)
        return response.status == response.STATUS_CLEARED

    def stop_if_active(self, command_id: int, lease) -> None:
        """Stop the body if ``command_id`` is still the robot's mobility command."""
        if not self._robot.command_active(command_id):
            return
        request = robot_command_pb2.RobotCommandRequest(lease=lease)
        request.command.synchronized_command.mobility_command.stop_request.SetInParent()
        self.robot_command(request)

    def power(self, request, lease):
        request = power_pb2.PowerCommandRequest(request=request.request, lease=lease)
        return self._power.PowerCommand(request, None)

    def power_feedback(self, command_id: int) -> int:
        return self._power.PowerCommandFeedback(
            power_pb2.PowerCommandFeedbackRequest(power_command_id=command_id), None).status

    def docking_command(self, dock_id: int, behavior: int, end_ns: int, lease):
        request = docking_pb2.DockingCommandRequest(
            lease=lease, docking_station_id=dock_id, prep_pose_behavior=behavior,
            clock_identifier=ROBOT_CLOCK, end_time=self._robot.clock.timestamp(end_ns))
        return self._docking.DockingCommand(request, None)

    def docking_feedback(self, command_id: int, end_ns: int) -> int:
        request = docking_pb2.DockingCommandFeedbackRequest(docking_command_id=command_id)
        request.update_docking_params.end_time.CopyFrom(self._robot.clock.timestamp(end_ns))
        return self._docking.DockingCommandFeedback(request, None).status

    def cancel_docking(self, command_id: int, lease) -> None:
        """Stop a docking plan mid-way: the body stops where it is."""
        if not self._docking.docking.active(command_id):
            return
        request = robot_command_pb2.RobotCommandRequest(lease=lease)
        request.command.synchronized_command.mobility_command.stop_request.SetInParent()
        self.robot_command(request)

    def navigate(self, kind: str, request):
        """NavigateTo / NavigateRoute / NavigateToAnchor by ``kind``."""
        method = {"navigate_to": self._graph_nav.NavigateTo,
                  "navigate_route": self._graph_nav.NavigateRoute,
                  "navigate_to_anchor": self._graph_nav.NavigateToAnchor}[kind]
        return method(request, None)

    def navigation_feedback(self, command_id: int):
        return self._graph_nav.NavigationFeedback(
            graph_nav_pb2.NavigationFeedbackRequest(command_id=command_id), None)

    def cancel_navigation(self, command_id: int, lease) -> None:
        """Stop the body if navigation ``command_id`` is still under way."""
        motion_id = self._graph_nav.graph_nav.motion_of(command_id)
        if motion_id is not None:
            self.stop_if_active(motion_id, lease)

    def set_localization(self, request):
        return self._graph_nav.SetLocalization(request, None)

    def acquire_data(self, request):
        return self._daq.AcquireData(request, None)

    def acquisition_status(self, request_id: int):
        return self._daq.GetStatus(
            data_acquisition_pb2.GetStatusRequest(request_id=request_id), None)

    def cancel_acquisition(self, request_id: int) -> None:
        self._daq.CancelAcquisition(
            data_acquisition_pb2.CancelAcquisitionRequest(request_id=request_id), None)

    def spot_cam(self, kind: type):
        """The Spot CAM's servicer of class ``kind`` (None on a robot without a Spot CAM)."""
        return self._spot_cam.get(kind)

    def docking_state(self):
        return self._docking.docking.state()

    def retain_lease(self, lease: lease_pb2.Lease) -> lease_pb2.LeaseUseResult:
        return self._robot.leases.use(lease, allow_super=True)


class MissionServicer(mission_service_pb2_grpc.MissionServiceServicer):
    def __init__(self, robot: SimRobot, services: RobotServices) -> None:
        self.robot, self.clock = robot, robot.clock
        self.runner = MissionRunner(robot.clock, services, ROBOT_CLOCK)
        self.calls: dict[str, int] = {}  # RPC name -> count, for tests and diagnostics

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    @unary(mission_pb2.LoadMissionResponse, _LEASES)
    def LoadMission(self, request, response, context):
        self._count("LoadMission")
        compiled = self.runner.load(request.root, request.leases)
        response.failed_nodes.extend(compiled.failed)
        if compiled.failed:
            response.status = response.STATUS_VALIDATE_ERROR
            return
        response.status = response.STATUS_OK
        response.mission_info.CopyFrom(self.runner.info())

    def _load_from_chunks(self, request_iterator, context):
        request = mission_pb2.LoadMissionRequest()
        data_chunk.parse_from_chunks(request_iterator, request)
        return self.LoadMission(request, context)

    def LoadMissionAsChunks(self, request_iterator, context):
        self._count("LoadMissionAsChunks")
        return self._load_from_chunks(request_iterator, context)

    def LoadMissionAsChunks2(self, request_iterator, context):
        self._count("LoadMissionAsChunks2")
        yield from data_chunk.chunk_message(self._load_from_chunks(request_iterator, context),
                                            CHUNK_BYTES)

    def _play(self, request, response, restart: bool) -> None:
        settings = request.settings if request.HasField("settings") else None
        played = self.runner.play(timestamp_to_nsec(request.pause_time), request.leases,
                                  settings, restart=restart)
        response.status = response.STATUS_OK if played else response.STATUS_NO_MISSION

    @unary(mission_pb2.PlayMissionResponse, _LEASES)
    def PlayMission(self, request, response, context):
        self._count("PlayMission")
        self._play(request, response, restart=False)

    @unary(mission_pb2.RestartMissionResponse, _LEASES)
    def RestartMission(self, request, response, context):
        self._count("RestartMission")
        self._play(request, response, restart=True)

    @unary(mission_pb2.PauseMissionResponse)
    def PauseMission(self, request, response, context):
        self._count("PauseMission")
        response.status = (response.STATUS_OK if self.runner.pause()
                           else response.STATUS_NO_MISSION_PLAYING)

    @unary(mission_pb2.StopMissionResponse)
    def StopMission(self, request, response, context):
        self._count("StopMission")
        response.status = (response.STATUS_OK if self.runner.stop_mission()
                           else response.STATUS_NO_MISSION_PLAYING)

    @unary(mission_pb2.GetStateResponse)
    def GetState(self, request, response, context):
        upper = (request.history_upper_tick_bound.value
                 if request.HasField("history_upper_tick_bound") else None)
        which = request.WhichOneof("lower_bound")
        lower = request.history_lower_tick_bound if which == "history_lower_tick_bound" else None
        past = request.history_past_ticks if which == "history_past_ticks" else None
        response.state.CopyFrom(self.runner.state(upper, lower, past))

    @unary(mission_pb2.GetInfoResponse)
    def GetInfo(self, request, response, context):
        info = self.runner.info()
        if info is not None:
            response.mission_info.CopyFrom(info)

    def GetInfoAsChunks(self, request, context):
        yield from data_chunk.chunk_message(self.GetInfo(request, context), CHUNK_BYTES)

    @unary(mission_pb2.GetMissionResponse)
    def GetMission(self, request, response, context):
        runner = self.runner
        if runner.root_proto is not None:
            response.root.CopyFrom(runner.root_proto)
            response.id = runner.mission_id

    def GetMissionAsChunks(self, request, context):
        yield from data_chunk.chunk_message(self.GetMission(request, context), CHUNK_BYTES)

    @unary(mission_pb2.AnswerQuestionResponse)
    def AnswerQuestion(self, request, response, context):
        which = request.WhichOneof("answer")
        if which is None:
            response.status = response.STATUS_INCOMPATIBLE_ANSWER
            return
        response.status, error = self.runner.answer(
            request.question_id, request.code if which == "code" else None,
            request.custom_params if which == "custom_params" else None)
        if error is not None:
            response.custom_param_error.CopyFrom(error)


def spec() -> ServiceSpec:
    return ServiceSpec("robot-mission", "bosdyn.api.mission.MissionService", "api.spot.robot",
                       mission_service_pb2_grpc.add_MissionServiceServicer_to_server)


def _build(parts) -> MissionServicer:
    spot_cam = {kind: parts.servicer(kind) for kind in spot_cam_nodes.SERVICERS} \
        if parts.spot_cam else None
    return MissionServicer(parts.robot, RobotServices(
        parts.robot, parts.servicer(RobotCommandServicer), parts.servicer(PowerServicer),
        parts.servicer(DockingServicer), parts.servicer(GraphNavServicer),
        parts.servicer(DataAcquisitionServicer), parts.directory, spot_cam))


SERVICES = (Served(spec(), _build),)
