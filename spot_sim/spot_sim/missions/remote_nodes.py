"""RemoteGrpc: a mission node run by a payload's RemoteMissionService, reached through the
robot's directory (the service registered under ``service_name``).

Each run establishes a session (with the leases of ``lease_resources`` and the node's
inputs), ticks it until it answers SUCCESS or FAILURE, stops it when the node is halted and
tears it down when the run ends. A service that is not registered, does not answer within
``timeout`` (10 s when unset [ours]) or answers with another status makes the node ERROR.
"""

from bosdyn.api.mission import nodes_pb2, remote_pb2

from spot_sim.missions.nodes import FAILURE, RUNNING, SUCCESS, MissionNodeError, Node

DEFAULT_TIMEOUT_S = 10.0
_RESULTS = {remote_pb2.TickResponse.STATUS_SUCCESS: SUCCESS,
            remote_pb2.TickResponse.STATUS_FAILURE: FAILURE,
            remote_pb2.TickResponse.STATUS_RUNNING: RUNNING}


class RemoteGrpc(Node):
    def __init__(self, node_id, name, parameters, spec: nodes_pb2.RemoteGrpc) -> None:
        super().__init__(node_id, name, parameters)
        self.spec = spec
        self.session: tuple | None = None  # (stub, session id) of the run under way

    @property
    def _timeout(self) -> float:
        return self.spec.timeout or DEFAULT_TIMEOUT_S

    def _leases(self, ctx) -> list:
        return [ctx.lease(resource) for resource in self.spec.lease_resources]

    def _call(self, method, request, what: str):
        try:
            return method(request, timeout=self._timeout)
        except Exception as exc:  # a gRPC error from the payload or on the way
            raise MissionNodeError(f"remote mission service {self.spec.service_name!r}: "
                                   f"{what} failed: {exc}") from None

    def start(self, ctx) -> None:
        stub = ctx.robot.remote_mission(self.spec.service_name)
        if stub is None:
            raise MissionNodeError(f"no remote mission service {self.spec.service_name!r} is "
                                   f"registered in the directory")
        answer = self._call(stub.EstablishSession, remote_pb2.EstablishSessionRequest(
            leases=self._leases(ctx), inputs=self.spec.inputs), "EstablishSession")
        Established = remote_pb2.EstablishSessionResponse
        if answer.status != Established.STATUS_OK:
            raise MissionNodeError(f"EstablishSession: {Established.Status.Name(answer.status)}")
        self.session = (stub, answer.session_id)

    def update(self, ctx) -> int:
        stub, session_id = self.session
        answer = self._call(stub.Tick, remote_pb2.TickRequest(
            session_id=session_id, leases=self._leases(ctx), inputs=self.spec.inputs,
            params=self.spec.params, group_name=self.spec.group_name_format), "Tick")
        if answer.status not in _RESULTS:
            raise MissionNodeError(f"Tick: {remote_pb2.TickResponse.Status.Name(answer.status)}"
                                   f"{': ' + answer.error_message if answer.error_message else ''}")
        return _RESULTS[answer.status]

    def halt(self, ctx) -> None:
        if self.running and self.session is not None:
            stub, session_id = self.session
            self._quietly(stub.Stop, remote_pb2.StopRequest(session_id=session_id))
        super().halt(ctx)

    def finish(self, ctx) -> None:
        if self.session is not None:
            stub, session_id = self.session
            self.session = None
            self._quietly(stub.TeardownSession,
                          remote_pb2.TeardownSessionRequest(session_id=session_id))

    def _quietly(self, method, request) -> None:
        try:
            method(request, timeout=self._timeout)
        except Exception:  # the run is over either way; a payload gone is not our error
            pass
