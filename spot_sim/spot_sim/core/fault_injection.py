"""Fault injection for tests: RPC latency and failures, link loss, reboot, lease theft and more.

``RpcFaults`` is a gRPC server interceptor (latency with jitter on every RPC, chosen RPCs
failing with chosen status codes; under a field profile also its asymmetric latency, stalls
and random failures). ``FaultControl`` gathers every fault the issue tracker asks
the simulated robot to play; tests call it directly and ``spot_sim.core.admin`` serves it over HTTP
on 127.0.0.1.
"""

import functools
import random
import time
from dataclasses import dataclass

import grpc
from bosdyn.api import lease_pb2

from spot_sim.core.field import Draw, FieldProfile
from spot_sim.core.lock_order import LEAF, OrderedLock

_HANDLER_FACTORIES = (
    ("unary_unary", grpc.unary_unary_rpc_method_handler),
    ("unary_stream", grpc.unary_stream_rpc_method_handler),
    ("stream_unary", grpc.stream_unary_rpc_method_handler),
    ("stream_stream", grpc.stream_stream_rpc_method_handler),
)


def wrap_handler(handler: grpc.RpcMethodHandler | None, around) -> grpc.RpcMethodHandler | None:
    """A handler that runs ``around(behaviour, request, context)`` instead of ``behaviour``."""
    if handler is None:
        return None
    for kind, factory in _HANDLER_FACTORIES:
        behaviour = getattr(handler, kind)
        if behaviour is not None:
            return factory(functools.partial(around, behaviour),
                           request_deserializer=handler.request_deserializer,
                           response_serializer=handler.response_serializer)
    return handler


@dataclass
class _Failure:
    code: grpc.StatusCode
    message: str
    remaining: int  # calls left to fail; negative: until cleared


_RANDOM_FAILURES = ((grpc.StatusCode.UNAVAILABLE, "field profile: the link dropped the call"),
                    (grpc.StatusCode.DEADLINE_EXCEEDED, "field profile: the call timed out"))


class RpcFaults(grpc.ServerInterceptor):
    """Delays every RPC by ``latency`` +- ``jitter`` seconds (half before the handler, half
    after, so time-sync estimates stay unbiased) and fails chosen methods. A field profile adds
    its own request and response latency (drawn separately: asymmetric, so time-sync
    estimates are off by half the difference, as on a real link), stalls in one direction,
    and unary calls failing at random before they reach the handler."""

    def __init__(self, profile: FieldProfile | None = None, seed: int = 0) -> None:
        self._lock = OrderedLock("rpc faults", LEAF)
        self._random = random.Random(seed)
        self.profile = profile or FieldProfile()
        self._draw = Draw(self.profile, "rpc")
        self.latency = 0.0
        self.jitter = 0.0
        self._failures: dict[str, _Failure] = {}

    def set_profile(self, profile: FieldProfile) -> None:
        """Play ``profile``'s latency, stalls and failures from now on."""
        with self._lock:
            self.profile, self._draw = profile, Draw(profile, "rpc")

    def set_latency(self, latency: float, jitter: float = 0.0) -> None:
        if latency < 0 or jitter < 0 or jitter > latency:
            raise ValueError("need 0 <= jitter <= latency")
        with self._lock:
            self.latency, self.jitter = latency, jitter

    def fail(self, method: str, code: str = "UNAVAILABLE", message: str = "injected failure",
             count: int = -1) -> None:
        """Fail RPCs whose method name (``RobotCommand`` or the full path) is ``method``."""
        status = grpc.StatusCode[code.upper()]
        with self._lock:
            self._failures[method] = _Failure(status, message, count)

    def clear(self) -> None:
        with self._lock:
            self._failures.clear()
            self.latency = self.jitter = 0.0

    def _delay(self) -> float:
        with self._lock:
            if self.latency <= 0:
                return 0.0
            return max(0.0, self.latency + self._random.uniform(-self.jitter, self.jitter))

    def _field_delays(self) -> tuple[float, float]:
        """(before, after) the handler from the profile, a stall added to one of them."""
        with self._lock:
            p, draw = self.profile, self._draw
        before, after = draw.uniform(p.request_latency), draw.uniform(p.response_latency)
        if draw.chance(p.spike_probability):
            if draw.chance(0.5):
                before += draw.uniform(p.spike_latency)
            else:
                after += draw.uniform(p.spike_latency)
        return before, after

    def _random_failure(self) -> _Failure | None:
        with self._lock:
            p, draw = self.profile, self._draw
        if not draw.chance(p.rpc_failure_probability):
            return None
        code, message = _RANDOM_FAILURES[int(draw.chance(0.5))]
        return _Failure(code, message, 1)

    def _failure_for(self, method: str) -> _Failure | None:
        with self._lock:
            failure = self._failures.get(method) or self._failures.get(method.rsplit("/", 1)[-1])
            if failure is None or failure.remaining == 0:
                return None
            if failure.remaining > 0:
                failure.remaining -= 1
            return failure

    def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method

        handler = continuation(handler_call_details)
        unary = handler is not None and handler.unary_unary is not None

        def around(behaviour, request, context):
            delay = self._delay()
            before, after = self._field_delays()
            if delay / 2 + before:
                time.sleep(delay / 2 + before)
            failure = self._failure_for(method) or (self._random_failure() if unary else None)
            if failure is not None:
                context.abort(failure.code, failure.message)
            response = behaviour(request, context)
            if delay / 2 + after:
                time.sleep(delay / 2 + after)
            return response

        return wrap_handler(handler, around)


class FaultControl:
    """Every fault the simulated robot can play, in one place."""

    INTRUDER = lease_pb2.LeaseOwner(client_name="intruder-tablet", user_name="operator2")

    def __init__(self, sim) -> None:
        self._sim = sim
        self.rpc: RpcFaults = sim.rpc_faults

    # ------------------------------------------------------------------ network
    def drop_link(self) -> None:
        """The robot's listener disappears (as a Wi-Fi loss): every connection is cut."""
        self._sim.drop_link()

    def restore_link(self) -> None:
        self._sim.restore_link()

    def set_latency(self, latency: float, jitter: float = 0.0) -> None:
        self.rpc.set_latency(latency, jitter)

    def fail_rpc(self, method: str, code: str = "UNAVAILABLE", message: str = "injected failure",
                 count: int = -1) -> None:
        self.rpc.fail(method, code, message, count)

    def clear(self) -> None:
        """No latency, no failing RPCs."""
        self.rpc.clear()

    # ------------------------------------------------------------------ robot
    def reboot(self, offline_sec: float = 0.0, clock_jump_sec: float = 7.5) -> None:
        """Reboot: leases, e-stop endpoints, user tokens and time-sync state are forgotten, the
        robot clock gets a new offset and the robot comes back sitting with motors off. With
        ``offline_sec`` the listener is down that long (blocks)."""
        sim = self._sim
        if offline_sec > 0:
            sim.drop_link()
        sim.mission.runner.stop_mission()
        sim.robot.reboot()
        sim.docking.cancel("robot rebooted")
        sim.clock.jump(clock_jump_sec)
        sim.time_sync.forget_all()
        sim.tokens.rotate()
        if offline_sec > 0:
            time.sleep(offline_sec)
            sim.restore_link()

    def steal_lease(self, resource: str = "body") -> lease_pb2.Lease:
        """Another client (``INTRUDER``) takes the lease."""
        status, lease, _ = self._sim.robot.leases.acquire(resource, self.INTRUDER, take=True)
        if lease is None:
            raise ValueError(f"cannot take resource {resource!r} (status {status})")
        return lease

    def fall(self) -> int:
        """A behavior fault: the robot falls (motors stay on)."""
        return self._sim.robot.trigger_fall()

    def drain_battery(self, percent: float = 0.0) -> None:
        """Set the battery charge; at 0 % the robot cuts motor power."""
        if not 0.0 <= percent <= 100.0:
            raise ValueError("percent must be within [0, 100]")
        self._sim.robot.set_battery(percent)

    def jump_clock(self, seconds: float) -> None:
        """Step the robot clock (as an NTP step would)."""
        self._sim.clock.jump(seconds)
