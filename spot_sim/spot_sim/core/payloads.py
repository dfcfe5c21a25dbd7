"""Payloads registered with the robot, with their secrets: built once by the server, used by the
payload and payload-registration services and the administrator's authorization."""


from bosdyn.api import payload_pb2

from spot_sim.core.lock_order import LEAF, OrderedLock


class PayloadRegistry:
    """Registered payloads with their secrets; thread-safe."""

    def __init__(self) -> None:
        self._lock = OrderedLock("payloads", LEAF)
        self._payloads: dict[str, tuple[payload_pb2.Payload, str]] = {}

    def register(self, payload: payload_pb2.Payload, secret: str) -> bool:
        with self._lock:
            if payload.GUID in self._payloads:
                return False
            stored = payload_pb2.Payload()
            stored.CopyFrom(payload)
            stored.is_authorized = stored.is_enabled = False  # an administrator decides
            self._payloads[payload.GUID] = (stored, secret)
            return True

    def check(self, guid: str, secret: str) -> payload_pb2.Payload | None:
        """The payload when ``secret`` is its secret."""
        with self._lock:
            entry = self._payloads.get(guid)
            return entry[0] if entry is not None and entry[1] == secret else None

    def exists(self, guid: str) -> bool:
        with self._lock:
            return guid in self._payloads

    def authorize(self, guid: str, authorized: bool = True) -> bool:
        with self._lock:
            entry = self._payloads.get(guid)
            if entry is None:
                return False
            entry[0].is_authorized = entry[0].is_enabled = authorized
            return True

    def all(self) -> list[payload_pb2.Payload]:
        with self._lock:
            return [p for p, _ in self._payloads.values()]
