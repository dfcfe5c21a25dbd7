"""The robot's service directory: the robot's own services and those registered by payloads,
with liveness (a registered service that stops re-registering raises a service fault)."""

import time

from bosdyn.api import directory_pb2, service_fault_pb2

from spot_sim.core.clock import RobotClock
from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.core.service_faults import ServiceFaults

LIVENESS_FAULT = "Service liveness timeout"


def routable(authority: str) -> str:
    """An authority clients can reach through the robot: the API wants
    ``<name>.spot.robot`` (the robot's certificate covers ``*.spot.robot``); a bare name,
    as Boston Dynamics' remote mission example registers (``remote-mission``), gets that
    suffix [ours: how a robot treats one is not documented]."""
    return authority if "." in authority else f"{authority}.spot.robot"


class Directory:
    """Thread-safe. Built-in entries cannot be replaced or removed by registration."""

    def __init__(self, clock: RobotClock, faults: ServiceFaults,
                 builtin: list[directory_pb2.ServiceEntry]) -> None:
        self._clock, self._faults = clock, faults
        self._lock = OrderedLock("directory", LEAF)
        self._builtin = {e.name: e for e in builtin}
        self._registered: dict[str, tuple[directory_pb2.ServiceEntry, directory_pb2.Endpoint,
                                          int]] = {}

    def entries(self) -> list[directory_pb2.ServiceEntry]:
        self.check_liveness()
        with self._lock:
            return list(self._builtin.values()) + [e for e, _, _ in self._registered.values()]

    def get(self, name: str) -> directory_pb2.ServiceEntry | None:
        with self._lock:
            if name in self._builtin:
                return self._builtin[name]
            found = self._registered.get(name)
            return found[0] if found else None

    def endpoint_of(self, name: str) -> str | None:
        """``host:port`` of the payload service registered as ``name`` (None: none)."""
        with self._lock:
            found = self._registered.get(name)
        return f"{found[1].host_ip}:{found[1].port}" if found else None

    def endpoint_for(self, authority: str, method: str) -> str | None:
        """``host:port`` of the payload service registered at ``authority`` whose gRPC type
        serves ``method`` (``/package.Service/Method``); None when there is none."""
        service_type = method.strip("/").split("/", 1)[0]
        with self._lock:
            for entry, endpoint, _ in self._registered.values():
                if entry.authority == authority and entry.type == service_type:
                    return f"{endpoint.host_ip}:{endpoint.port}"
        return None

    def register(self, entry: directory_pb2.ServiceEntry, endpoint: directory_pb2.Endpoint,
                 replace: bool) -> bool:
        """Add (``replace`` False: only when new) or update (True: only when present) a
        payload service; False when that is not possible. Registering an existing entry again
        (DirectoryRegistrationKeepAlive does so periodically) counts as a liveness heartbeat."""
        with self._lock:
            exists = entry.name in self._registered
            if entry.name in self._builtin or exists != replace:
                alive = exists and self._registered[entry.name][1] == endpoint
                if alive:
                    stored, where, _ = self._registered[entry.name]
                    self._registered[entry.name] = (stored, where, time.monotonic_ns())
            else:
                alive = True
                stored = directory_pb2.ServiceEntry()
                stored.CopyFrom(entry)
                stored.authority = routable(entry.authority)
                stored.last_update.CopyFrom(self._clock.timestamp())
                self._registered[entry.name] = (stored, endpoint, time.monotonic_ns())
        if alive:
            self._clear_liveness_fault(entry.name)
        return alive and exists == replace

    def unregister(self, name: str) -> bool:
        with self._lock:
            removed = self._registered.pop(name, None) is not None
        if removed:
            self._clear_liveness_fault(name)
        return removed

    def check_liveness(self) -> None:
        """Raise a service fault for each registered service whose liveness timed out."""
        now = time.monotonic_ns()
        with self._lock:
            late = [entry for entry, _, refreshed in self._registered.values()
                    if entry.liveness_timeout_secs > 0
                    and now - refreshed > entry.liveness_timeout_secs * 1e9]
        for entry in late:
            fault = service_fault_pb2.ServiceFault(
                error_message=f"{entry.name} did not re-register within "
                              f"{entry.liveness_timeout_secs:g} s",
                severity=service_fault_pb2.ServiceFault.SEVERITY_CRITICAL)
            fault.fault_id.fault_name = LIVENESS_FAULT
            fault.fault_id.service_name = entry.name
            self._faults.trigger(fault)

    def _clear_liveness_fault(self, name: str) -> None:
        self._faults.clear(service_fault_pb2.ServiceFaultId(fault_name=LIVENESS_FAULT,
                                                            service_name=name))
