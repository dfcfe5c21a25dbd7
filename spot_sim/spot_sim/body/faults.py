"""Behaviour faults (a fall, a joint over its speed limit) and system faults."""

from bosdyn.api import robot_state_pb2
from google.protobuf.timestamp_pb2 import Timestamp

BehaviorFault = robot_state_pb2.BehaviorFault


class Faults:
    def __init__(self) -> None:
        self.behavior: dict[int, BehaviorFault] = {}
        self.system: list[robot_state_pb2.SystemFault] = []

    def add(self, fault_id: int, cause: int, onset: Timestamp) -> None:
        """A clearable behaviour fault."""
        self.behavior[fault_id] = BehaviorFault(
            behavior_fault_id=fault_id, onset_timestamp=onset, cause=cause,
            status=BehaviorFault.STATUS_CLEARABLE)

    def clear(self, fault_id: int) -> bool:
        fault = self.behavior.get(fault_id)
        if fault is None or fault.status != fault.STATUS_CLEARABLE:
            return False
        del self.behavior[fault_id]
        return True

    @property
    def active(self) -> bool:
        return bool(self.behavior)

    @property
    def unclearable(self) -> bool:
        return any(f.status == f.STATUS_UNCLEARABLE for f in self.behavior.values())
