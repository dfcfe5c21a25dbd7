"""Service faults: raised by services (or clients through the fault service), shown in robot
state's ``service_fault_state`` until cleared."""


from bosdyn.api import service_fault_pb2

from spot_sim.core.clock import RobotClock
from spot_sim.core.lock_order import LEAF, OrderedLock

Fault = service_fault_pb2.ServiceFault


def _key(fault_id: service_fault_pb2.ServiceFaultId) -> tuple[str, str, str]:
    return fault_id.fault_name, fault_id.service_name, fault_id.payload_guid


class ServiceFaults:
    """Active and historical service faults, thread-safe."""

    def __init__(self, clock: RobotClock) -> None:
        self._clock = clock
        self._lock = OrderedLock("service faults", LEAF)
        self._active: dict[tuple, Fault] = {}
        self.historical: list[Fault] = []

    def trigger(self, fault: Fault) -> bool:
        """Raise ``fault``; False when a fault with the same id is already active."""
        with self._lock:
            key = _key(fault.fault_id)
            if key in self._active:
                return False
            stored = Fault()
            stored.CopyFrom(fault)
            if not stored.HasField("onset_timestamp"):
                stored.onset_timestamp.CopyFrom(self._clock.timestamp())
            self._active[key] = stored
            return True

    def clear(self, fault_id: service_fault_pb2.ServiceFaultId | None = None,
              all_of_service: bool = False, all_of_payload: bool = False) -> bool:
        """Clear one fault, or every fault of its service / payload; False when none was
        active."""
        with self._lock:
            if all_of_service or all_of_payload:
                keys = [k for k in self._active
                        if (all_of_service and k[1] == fault_id.service_name) or
                        (all_of_payload and k[2] == fault_id.payload_guid)]
            else:
                keys = [_key(fault_id)] if _key(fault_id) in self._active else []
            for key in keys:
                self.historical.append(self._active.pop(key))
            del self.historical[:-50]
            return bool(keys)

    def active(self) -> list[Fault]:
        with self._lock:
            return list(self._active.values())

    def is_active(self, fault_name: str, service_name: str) -> bool:
        with self._lock:
            return any(k[0] == fault_name and k[1] == service_name for k in self._active)
