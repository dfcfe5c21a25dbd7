"""The data-acquisition store: every captured image, data blob and metadata, with the
capture id the robot gives it (increasing from 1), found by time range, capture action,
channel and id as ``QueryStoredCaptures`` and the ``List*`` RPCs ask.
"""

from dataclasses import dataclass

from bosdyn.api import data_acquisition_pb2, data_acquisition_store_pb2

from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.lock_order import LEAF, OrderedLock

DataIdentifier = data_acquisition_pb2.DataIdentifier
Result = data_acquisition_store_pb2.QueryStoredCaptureResult
RESULTS_PER_QUERY = 50  # ours: a query answers this many; the client asks from the next id
IMAGE, DATA, METADATA = "image", "data", "metadata"


@dataclass
class Entry:
    data_id: DataIdentifier
    kind: str  # IMAGE, DATA or METADATA
    payload: object  # ImageCapture, (bytes, file extension) or AssociatedMetadata


def _same_action(a, b) -> bool:
    """Whether action ``a`` is one query id ``b`` asks for: a field ``b`` leaves empty matches
    any (the SDK's helpers ask for a whole group by its group name alone)."""
    return (not b.action_name or a.action_name == b.action_name) and (
        not b.group_name or a.group_name == b.group_name) and (
        not b.HasField("timestamp") or a.timestamp == b.timestamp)


def _matches(entry: Entry, time_range, action_ids, channels=()) -> bool:
    action = entry.data_id.action_id
    if time_range is not None and time_range.ByteSize():
        at = timestamp_to_nsec(action.timestamp)
        if time_range.HasField("from_timestamp") and \
                at < timestamp_to_nsec(time_range.from_timestamp):
            return False
        if time_range.HasField("to_timestamp") and at > timestamp_to_nsec(time_range.to_timestamp):
            return False
    if action_ids and not any(_same_action(action, wanted) for wanted in action_ids):
        return False
    return not channels or entry.data_id.channel in channels


class CaptureStore:
    """The stored captures, in the order they were stored."""

    def __init__(self) -> None:
        self._lock = OrderedLock("data store", LEAF)
        self._entries: list[Entry] = []

    def add(self, data_id: DataIdentifier, kind: str, payload) -> int:
        """Store one capture; returns its id."""
        with self._lock:
            stored = DataIdentifier()
            stored.CopyFrom(data_id)
            stored.id = len(self._entries) + 1
            self._entries.append(Entry(stored, kind, payload))
            return stored.id

    def max_id(self) -> int:
        with self._lock:
            return len(self._entries)

    def identifiers(self, kind: str, query) -> list[DataIdentifier]:
        """The ids of ``kind`` a ``DataQueryParams`` selects."""
        with self._lock:
            entries = list(self._entries)
        return [e.data_id for e in entries if e.kind == kind
                and _matches(e, query.time_range, query.action_ids.action_ids)]

    def action_ids(self, query) -> list:
        """Each capture action the query selects, once."""
        seen, out = set(), []
        with self._lock:
            entries = list(self._entries)
        for entry in entries:
            action = entry.data_id.action_id
            key = (action.action_name, action.group_name, action.timestamp.SerializeToString())
            if key not in seen and _matches(entry, query.time_range, query.action_ids.action_ids):
                seen.add(key)
                out.append(action)
        return out

    def query(self, params) -> list[Result]:
        """At most RESULTS_PER_QUERY results of ``QueryParameters``, from its captures_from_id."""
        kinds = {IMAGE} if params.include_images else set()
        kinds |= {DATA} if params.include_data or params.include_large else set()
        kinds |= {METADATA} if params.include_metadata else set()
        with self._lock:
            entries = list(self._entries)
        if params.order_descending:
            entries.reverse()
        out = []
        for entry in entries:
            if entry.data_id.id < params.captures_from_id or entry.kind not in kinds or \
                    not _matches(entry, params.time_range, params.action_ids, params.channels):
                continue
            out.append(self._result(entry, params.only_include_identifiers))
            if len(out) == RESULTS_PER_QUERY:
                break
        return out

    @staticmethod
    def _result(entry: Entry, identifiers_only: bool) -> Result:
        result = Result()
        result.data_id.CopyFrom(entry.data_id)
        if identifiers_only:
            return result
        if entry.kind == IMAGE:
            result.image.CopyFrom(entry.payload)
        elif entry.kind == METADATA:
            result.metadata.CopyFrom(entry.payload)
        else:
            data, extension = entry.payload
            result.data.data, result.data.file_extension = data, extension
        return result
