"""log-status: retro, experiment and concurrent logs with their lifetimes (no files are
written: the robot's logs are not simulated, only the bookkeeping clients see)."""

import itertools

from bosdyn.api.log_status import log_status_pb2 as pb
from bosdyn.api.log_status import log_status_service_pb2_grpc

from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec

MAX_CONCURRENT = 2
Status = pb.LogStatus


class LogStatusServicer(log_status_service_pb2_grpc.LogStatusServiceServicer):
    def __init__(self, clock) -> None:
        self.clock = clock
        self._lock = OrderedLock("log status", LEAF)
        self._logs: dict[str, tuple[pb.LogStatus, int]] = {}  # id -> (status, end ns)
        self._ids = itertools.count(1)

    def _refresh(self) -> None:
        now = self.clock.now_nsec()
        for status, end_ns in self._logs.values():
            if status.status == Status.STATUS_IN_PROGRESS and now >= end_ns:
                status.status = Status.STATUS_DONE
                status.end_time.CopyFrom(self.clock.timestamp(end_ns))

    def _active(self, kind: int | None = None) -> list[pb.LogStatus]:
        return [s for s, _ in self._logs.values() if s.status == Status.STATUS_IN_PROGRESS
                and (kind is None or s.type == kind)]

    def _start(self, kind: int, start_ns: int, end_ns: int) -> pb.LogStatus:
        status = pb.LogStatus(id=f"log-{next(self._ids)}", status=Status.STATUS_IN_PROGRESS,
                              type=kind)
        status.start_time.CopyFrom(self.clock.timestamp(start_ns))
        self._logs[status.id] = (status, end_ns)
        return status

    def _find(self, log_id: str, response):
        """(status, end ns) of a log; None, with STATUS_ID_NOT_FOUND answered, if unknown."""
        found = self._logs.get(log_id)
        if found is None:
            response.status = response.STATUS_ID_NOT_FOUND
        return found

    @unary(pb.GetLogStatusResponse)
    def GetLogStatus(self, request, response, context):
        with self._lock:
            self._refresh()
            found = self._find(request.id, response)
            if found is None:
                return
            response.status = response.STATUS_OK
            response.log_status.CopyFrom(found[0])

    @unary(pb.GetActiveLogStatusesResponse)
    def GetActiveLogStatuses(self, request, response, context):
        with self._lock:
            self._refresh()
            response.log_statuses.extend(self._active())
        response.status = response.STATUS_OK

    @unary(pb.StartRetroLogResponse)
    def StartRetroLog(self, request, response, context):
        now = self.clock.now_nsec()
        with self._lock:
            self._refresh()
            if self._active(Status.TYPE_EXPERIMENT):
                response.status = response.STATUS_EXPERIMENT_LOG_RUNNING
                return
            if len(self._active()) >= MAX_CONCURRENT:
                response.status = response.STATUS_CONCURRENCY_LIMIT_REACHED
                return
            past = request.past_duration.ToNanoseconds()
            status = self._start(Status.TYPE_RETRO, now - past, now)
        response.status = response.STATUS_OK
        response.log_status.CopyFrom(status)
        response.end_time.CopyFrom(self.clock.timestamp(now))

    def _timed_log(self, request, response, kind: int, refusal) -> None:
        """Start a log that runs for the request's keep_alive (10 s by default) unless
        ``refusal()`` (called under the lock) returns a response status."""
        now = self.clock.now_nsec()
        keep = request.keep_alive.ToNanoseconds() or 10_000_000_000
        with self._lock:
            self._refresh()
            refused = refusal()
            if refused is not None:
                response.status = refused
                return
            status = self._start(kind, now, now + keep)
        response.status = response.STATUS_OK
        response.log_status.CopyFrom(status)
        response.end_time.CopyFrom(self.clock.timestamp(now + keep))

    @unary(pb.StartExperimentLogResponse)
    def StartExperimentLog(self, request, response, context):
        self._timed_log(request, response, Status.TYPE_EXPERIMENT,
                        lambda: response.STATUS_EXPERIMENT_LOG_RUNNING
                        if self._active(Status.TYPE_EXPERIMENT) else None)

    @unary(pb.StartConcurrentLogResponse)
    def StartConcurrentLog(self, request, response, context):
        self._timed_log(request, response, Status.TYPE_CONCURRENT,
                        lambda: response.STATUS_CONCURRENCY_LIMIT_REACHED
                        if len(self._active()) >= MAX_CONCURRENT else None)

    @unary(pb.UpdateExperimentLogResponse)
    def UpdateExperimentLog(self, request, response, context):
        now = self.clock.now_nsec()
        with self._lock:
            self._refresh()
            found = self._find(request.id, response)
            if found is None:
                return
            status, _ = found
            if status.status != Status.STATUS_IN_PROGRESS:
                response.status = response.STATUS_LOG_TERMINATED
                return
            end = now + (request.keep_alive.ToNanoseconds() or 10_000_000_000)
            self._logs[request.id] = (status, end)
        response.status = response.STATUS_OK
        response.log_status.CopyFrom(status)
        response.end_time.CopyFrom(self.clock.timestamp(end))

    @unary(pb.TerminateLogResponse)
    def TerminateLog(self, request, response, context):
        now = self.clock.now_nsec()
        with self._lock:
            found = self._find(request.id, response)
            if found is None:
                return
            status, _ = found
            if status.status == Status.STATUS_IN_PROGRESS:
                status.status = Status.STATUS_DONE
                status.end_time.CopyFrom(self.clock.timestamp(now))
            self._logs[request.id] = (status, now)
        response.status = response.STATUS_OK
        response.log_status.CopyFrom(status)


def spec() -> ServiceSpec:
    return ServiceSpec("log-status", "bosdyn.api.log_status.LogStatusService", "api.spot.robot",
                       log_status_service_pb2_grpc.add_LogStatusServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: LogStatusServicer(parts.clock)),)
