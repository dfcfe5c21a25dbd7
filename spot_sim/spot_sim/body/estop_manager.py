"""The robot side of software e-stop: configuration, endpoints and challenge check-ins."""

import secrets
import time
from dataclasses import dataclass, field

from bosdyn.api import estop_pb2

from spot_sim.core.lock_order import LEAF, OrderedLock

LEVEL_NONE = estop_pb2.ESTOP_LEVEL_NONE
LEVEL_SETTLE_THEN_CUT = estop_pb2.ESTOP_LEVEL_SETTLE_THEN_CUT
LEVEL_CUT = estop_pb2.ESTOP_LEVEL_CUT
_MASK64 = 0xFFFF_FFFF_FFFF_FFFF


@dataclass
class _Registration:
    endpoint: estop_pb2.EstopEndpoint
    challenge: int = field(default_factory=lambda: secrets.randbits(64))
    level: int = LEVEL_CUT
    last_valid_ns: int = 0


class EstopManager:
    """Tracks the active configuration and each registered endpoint's stop level.

    An endpoint that has not checked in validly within its timeout counts as CUT. The system
    level is the most severe level of any configured endpoint; a configuration with no
    registered endpoints is CUT when ``require_endpoint`` is set (as on a real robot).
    Timeouts run on the monotonic clock, so a robot clock jump does not stop the robot.
    """

    def __init__(self, require_endpoint: bool = True) -> None:
        self._lock = OrderedLock("estop", LEAF)
        self.require_endpoint = require_endpoint
        self._config = estop_pb2.EstopConfig(unique_id=secrets.token_hex(4))
        self._registered: dict[str, _Registration] = {}

    def config(self) -> estop_pb2.EstopConfig:
        with self._lock:
            config = estop_pb2.EstopConfig()
            config.CopyFrom(self._config)
            return config

    def set_config(self, config: estop_pb2.EstopConfig, target_id: str):
        """SetEstopConfig: (status, active config)."""
        Response = estop_pb2.SetEstopConfigResponse
        with self._lock:
            if target_id != self._config.unique_id:
                return Response.STATUS_INVALID_ID, self._config
            new = estop_pb2.EstopConfig()
            new.CopyFrom(config)
            new.unique_id = secrets.token_hex(4)
            for endpoint in new.endpoints:
                if not endpoint.unique_id:
                    endpoint.unique_id = secrets.token_hex(6)
            self._config = new
            self._registered.clear()
            return Response.STATUS_SUCCESS, new

    def register(self, target_id: str, target: estop_pb2.EstopEndpoint,
                 new_endpoint: estop_pb2.EstopEndpoint):
        """RegisterEstopEndpoint: (status, registered endpoint)."""
        Response = estop_pb2.RegisterEstopEndpointResponse
        with self._lock:
            if target_id != self._config.unique_id:
                return Response.STATUS_CONFIG_MISMATCH, None
            for slot in self._config.endpoints:
                if (target.unique_id and slot.unique_id == target.unique_id) or (
                        not target.unique_id and slot.role == target.role):
                    slot.name = new_endpoint.name or slot.name
                    if new_endpoint.HasField("timeout"):
                        slot.timeout.CopyFrom(new_endpoint.timeout)
                    if new_endpoint.HasField("cut_power_timeout"):
                        slot.cut_power_timeout.CopyFrom(new_endpoint.cut_power_timeout)
                    registered = estop_pb2.EstopEndpoint()
                    registered.CopyFrom(slot)
                    self._registered[slot.unique_id] = _Registration(
                        registered, last_valid_ns=time.monotonic_ns())
                    return Response.STATUS_SUCCESS, registered
            return Response.STATUS_ENDPOINT_MISMATCH, None

    def deregister(self, target_id: str, endpoint: estop_pb2.EstopEndpoint) -> int:
        Response = estop_pb2.DeregisterEstopEndpointResponse
        with self._lock:
            if target_id != self._config.unique_id:
                return Response.STATUS_CONFIG_MISMATCH
            if self._registered.pop(endpoint.unique_id, None) is None:
                return Response.STATUS_ENDPOINT_MISMATCH
            return Response.STATUS_SUCCESS

    def check_in(self, endpoint: estop_pb2.EstopEndpoint, challenge: int, response: int,
                 level: int):
        """EstopCheckIn: (status, new challenge). The valid response is ~challenge."""
        Response = estop_pb2.EstopCheckInResponse
        with self._lock:
            registration = self._registered.get(endpoint.unique_id)
            if registration is None:
                return Response.STATUS_ENDPOINT_UNKNOWN, 0
            valid = challenge == registration.challenge and response == (~challenge & _MASK64)
            registration.challenge = secrets.randbits(64)
            if not valid:
                return Response.STATUS_INCORRECT_CHALLENGE_RESPONSE, registration.challenge
            registration.level = level
            registration.last_valid_ns = time.monotonic_ns()
            return Response.STATUS_OK, registration.challenge

    def _effective_level(self, registration: _Registration, now_ns: int) -> int:
        timeout = registration.endpoint.timeout
        timeout_ns = timeout.seconds * 1_000_000_000 + timeout.nanos
        if timeout_ns and now_ns - registration.last_valid_ns > timeout_ns:
            return LEVEL_CUT
        return registration.level

    def system_level(self) -> int:
        with self._lock:
            now = time.monotonic_ns()
            levels = [self._effective_level(r, now) for r in self._registered.values()]
            unregistered = len(self._config.endpoints) - len(self._registered)
            if unregistered > 0 or (not levels and self.require_endpoint):
                levels.append(LEVEL_CUT)
            return max(levels, default=LEVEL_NONE)

    def endpoint_states(self) -> list[tuple[estop_pb2.EstopEndpoint, int, int]]:
        """(endpoint, effective level, nanoseconds since the last valid check-in) for each."""
        with self._lock:
            now = time.monotonic_ns()
            return [(r.endpoint, self._effective_level(r, now), now - r.last_valid_ns)
                    for r in self._registered.values()]

    def report(self) -> str:
        """Each endpoint as (name, level, s since a valid check-in): what a power cut logs."""
        return str([(e.name, estop_pb2.EstopStopLevel.Name(level), round(since / 1e9, 2))
                    for e, level, since in self.endpoint_states()])

    def forget_all(self) -> None:
        """A reboot: a fresh, empty configuration."""
        with self._lock:
            self._config = estop_pb2.EstopConfig(unique_id=secrets.token_hex(4))
            self._registered.clear()
