"""time-sync: NTP-style estimates of the client clock's skew from the robot clock."""

import secrets
from collections import deque

from bosdyn.api import time_sync_pb2, time_sync_service_pb2_grpc
from google.protobuf.duration_pb2 import Duration

from spot_sim.core.clock import RobotClock, timestamp_to_nsec
from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec

SAMPLES_NEEDED = 5
_KEEP = 20
ROBOT_CLOCK = "robot"  # services on the robot itself (the mission service) use robot time


class TimeSyncServicer(time_sync_service_pb2_grpc.TimeSyncServiceServicer):
    """Keeps round-trip samples per client clock and answers with the best estimate."""

    def __init__(self, clock: RobotClock) -> None:
        self.clock = clock
        self._lock = OrderedLock("time sync", LEAF)
        self._samples: dict[str, deque] = {}

    def known(self, clock_identifier: str) -> bool:
        if clock_identifier == ROBOT_CLOCK:
            return True
        with self._lock:
            return len(self._samples.get(clock_identifier, ())) >= SAMPLES_NEEDED

    def forget_all(self) -> None:
        with self._lock:
            self._samples.clear()

    @unary(time_sync_pb2.TimeSyncUpdateResponse)
    def TimeSyncUpdate(self, request, response, context):
        with self._lock:
            clock_id = request.clock_identifier
            if clock_id not in self._samples:
                clock_id = secrets.token_hex(8)
                self._samples[clock_id] = deque(maxlen=_KEEP)
            samples = self._samples[clock_id]
            if request.HasField("previous_round_trip") and request.clock_identifier == clock_id:
                samples.append(_sample(request.previous_round_trip))
            response.clock_identifier = clock_id
            state = response.state
            if len(samples) < SAMPLES_NEEDED:
                state.status = state.STATUS_MORE_SAMPLES_NEEDED
                return
            skew_ns, rtt_ns = min(samples, key=lambda s: s[1])
            state.status = state.STATUS_OK
            state.best_estimate.clock_skew.CopyFrom(_duration(skew_ns))
            state.best_estimate.round_trip_time.CopyFrom(_duration(rtt_ns))
            state.measurement_time.CopyFrom(self.clock.timestamp())
            if len(samples) >= 1:
                last_skew, last_rtt = samples[-1]
                response.previous_estimate.clock_skew.CopyFrom(_duration(last_skew))
                response.previous_estimate.round_trip_time.CopyFrom(_duration(last_rtt))


def _sample(trip: time_sync_pb2.TimeSyncRoundTrip) -> tuple[int, int]:
    """(skew, round trip) in ns; skew is robot clock minus client clock."""
    client_tx, client_rx = timestamp_to_nsec(trip.client_tx), timestamp_to_nsec(trip.client_rx)
    server_rx, server_tx = timestamp_to_nsec(trip.server_rx), timestamp_to_nsec(trip.server_tx)
    skew = ((server_rx - client_tx) + (server_tx - client_rx)) // 2
    rtt = max(0, (client_rx - client_tx) - (server_tx - server_rx))
    return skew, rtt


def _duration(nsec: int) -> Duration:
    d = Duration()
    d.FromNanoseconds(nsec)
    return d


def spec() -> ServiceSpec:
    return ServiceSpec("time-sync", "bosdyn.api.TimeSyncService", "api.spot.robot",
                       time_sync_service_pb2_grpc.add_TimeSyncServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: TimeSyncServicer(parts.clock)),)
