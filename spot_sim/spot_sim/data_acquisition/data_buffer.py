"""The robot's data buffer: what clients log (text messages, operator comments, events, data
blobs, signal ticks), in pages, one page per stream. Built once by the server; the data-buffer
and data services, keepalive, the BDDF download and the REST download share it."""

import itertools
from dataclasses import dataclass, field

from bosdyn.api import data_buffer_pb2 as buf
from bosdyn.api import data_index_pb2

from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.lock_order import LEAF, OrderedLock


@dataclass
class Page:
    """One stream's records: (timestamp ns, message) pairs."""

    id: str
    kind: str  # "text", "comment", "event", "blob", "tick"
    source: str
    records: list = field(default_factory=list)
    spec: data_index_pb2.BlobSpec | None = None

    def info(self, clock) -> data_index_pb2.PageInfo:
        info = data_index_pb2.PageInfo(id=self.id, source=self.source,
                                       num_ticks=len(self.records),
                                       total_bytes=sum(m.ByteSize() for _, m in self.records),
                                       is_open=True)
        if self.records:
            info.time_range.start.CopyFrom(clock.timestamp(self.records[0][0]))
            info.time_range.end.CopyFrom(clock.timestamp(self.records[-1][0]))
        return info


def in_range(nsec: int, time_range) -> bool:
    start = timestamp_to_nsec(time_range.start) if time_range.HasField("start") else None
    end = timestamp_to_nsec(time_range.end) if time_range.HasField("end") else None
    return (start is None or nsec >= start) and (end is None or nsec <= end)


class DataStore:
    """Thread-safe pages of everything recorded."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self._lock = OrderedLock("data buffer", LEAF)
        self._pages: dict[tuple, Page] = {}
        self._ids = itertools.count(1)
        self.schemas: dict[int, buf.SignalSchema] = {}

    def record(self, kind: str, source: str, message, stamp=None,
               spec: data_index_pb2.BlobSpec | None = None) -> None:
        nsec = timestamp_to_nsec(stamp) if stamp is not None and stamp.seconds else \
            self.clock.now_nsec()
        with self._lock:
            key = (kind, source, spec.channel if spec is not None else "")
            page = self._pages.get(key)
            if page is None:
                page = self._pages[key] = Page(f"{kind}-{next(self._ids)}", kind, source,
                                               spec=spec)
            page.records.append((nsec, message))

    def pages(self, kind: str | None = None) -> list[Page]:
        with self._lock:
            return [p for p in self._pages.values() if kind is None or p.kind == kind]

    def delete(self, page_ids, time_range) -> int:
        """Delete the records of the named pages (all pages when none is named) within the
        time range; returns the bytes deleted."""
        deleted = 0
        with self._lock:
            for page in self._pages.values():
                if page_ids and page.id not in page_ids:
                    continue
                kept = []
                for nsec, message in page.records:
                    if in_range(nsec, time_range):
                        deleted += message.ByteSize()
                    else:
                        kept.append((nsec, message))
                page.records = kept
        return deleted
