"""data-buffer and data: what clients log to the robot (text messages, operator comments,
events, data blobs, signal ticks) is stored in pages, one page per stream, and read back
through the data service (index, events and comments, status, pages, delete)."""

import fnmatch

from bosdyn.api import data_buffer_pb2 as buf
from bosdyn.api import data_buffer_service_pb2_grpc, data_index_pb2, data_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError

from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.data_acquisition.data_buffer import DataStore, in_range

_CLIENT_ERROR = buf.RecordTextMessagesResponse.Error.CLIENT_ERROR


class DataBufferServicer(data_buffer_service_pb2_grpc.DataBufferServiceServicer):
    def __init__(self, clock, store: DataStore) -> None:
        self.clock, self.store = clock, store

    def _record_all(self, items, response, kind, source_of, stamp_of, check=None, spec_of=None):
        for index, item in enumerate(items):
            problem = check(item) if check is not None else ""
            if problem:
                response.errors.add(type=_CLIENT_ERROR, message=problem, index=index)
                continue
            self.store.record(kind, source_of(item), item, stamp_of(item),
                              spec_of(item) if spec_of else None)

    @unary(buf.RecordTextMessagesResponse)
    def RecordTextMessages(self, request, response, context):
        self._record_all(request.text_messages, response, "text", lambda m: m.source,
                         lambda m: m.timestamp,
                         lambda m: "" if m.message else "text message is empty")

    @unary(buf.RecordOperatorCommentsResponse)
    def RecordOperatorComments(self, request, response, context):
        self._record_all(request.operator_comments, response, "comment", lambda m: "operator",
                         lambda m: m.timestamp,
                         lambda m: "" if m.message else "comment is empty")

    @unary(buf.RecordEventsResponse)
    def RecordEvents(self, request, response, context):
        self._record_all(request.events, response, "event", lambda e: e.source,
                         lambda e: e.start_time,
                         lambda e: "" if e.type else "event type is empty")

    @unary(buf.RecordDataBlobsResponse)
    def RecordDataBlobs(self, request, response, context):
        self._record_all(request.blob_data, response, "blob", lambda b: b.type_id,
                         lambda b: b.timestamp,
                         lambda b: "" if b.channel and b.type_id else
                         "blob needs a channel and a type_id",
                         lambda b: data_index_pb2.BlobSpec(message_type=b.type_id,
                                                           channel=b.channel))

    @unary(buf.RegisterSignalSchemaResponse)
    def RegisterSignalSchema(self, request, response, context):
        if not request.schema.vars:
            set_error(response, CommonError.CODE_INVALID_REQUEST, "schema has no variables")
            return
        schema_id = len(self.store.schemas) + 1
        self.store.schemas[schema_id] = request.schema
        response.schema_id = schema_id

    @unary(buf.RecordSignalTicksResponse)
    def RecordSignalTicks(self, request, response, context):
        self._record_all(request.tick_data, response, "tick", lambda t: t.source,
                         lambda t: t.timestamp,
                         lambda t: "" if t.schema_id in self.store.schemas
                         else f"unknown schema id {t.schema_id}")


class DataServicer(data_service_pb2_grpc.DataServiceServicer):
    def __init__(self, clock, store: DataStore) -> None:
        self.clock, self.store = clock, store

    @unary(data_index_pb2.GetDataIndexResponse)
    def GetDataIndex(self, request, response, context):
        query, index = request.data_query, response.data_index
        index.time_range.CopyFrom(query.time_range)
        for spec in query.blobs:
            found = index.blobs.add()
            found.time_range.CopyFrom(query.time_range)
            for page in self.store.pages("blob"):
                if fnmatch.fnmatch(page.spec.channel, spec.channel_glob or spec.channel or "*"):
                    found.pages.add(spec=page.spec, page=page.info(self.clock))
        for wanted, kind, target in ((query.text_messages, "text", index.text_messages),
                                     (query.events, "event", index.events),
                                     (query.comments, "comment", index.comments)):
            if wanted:
                target.pages.extend(p.info(self.clock) for p in self.store.pages(kind))

    @unary(data_index_pb2.GetEventsCommentsResponse)
    def GetEventsComments(self, request, response, context):
        spec, out = request.event_comment_request, response.events_comments
        out.time_range.CopyFrom(spec.time_range)
        events = [m for p in self.store.pages("event") for n, m in p.records
                  if in_range(n, spec.time_range) and self._matches(m, spec.events)]
        comments = [m for p in self.store.pages("comment") for n, m in p.records
                    if in_range(n, spec.time_range)] if spec.comments else []
        for items, limit, target, flag in ((events, spec.max_events, out.events,
                                            "events_limited"),
                                           (comments, spec.max_comments, out.operator_comments,
                                            "operator_comments_limited")):
            if limit and len(items) > limit:
                items = items[:limit]
                setattr(out, flag, True)
            target.extend(items)

    @staticmethod
    def _matches(event, specs) -> bool:
        if not specs:
            return True
        return any((not s.source or s.source == event.source) and
                   (not s.type or s.type == event.type) and
                   (not s.HasField("level") or s.level.value == event.level) for s in specs)

    @unary(data_index_pb2.GetDataBufferStatusResponse)
    def GetDataBufferStatus(self, request, response, context):
        pages = self.store.pages()
        status = response.data_buffer_status
        status.num_data_buffer_pages = len(pages)
        status.data_buffer_total_bytes = sum(p.info(self.clock).total_bytes for p in pages)
        status.num_comments = sum(len(p.records) for p in pages if p.kind == "comment")
        status.num_events = sum(len(p.records) for p in pages if p.kind == "event")
        if request.get_blob_specs:
            status.blob_specs.extend(p.spec for p in pages if p.spec is not None)

    @unary(data_index_pb2.GetDataPagesResponse)
    def GetDataPages(self, request, response, context):
        for page in self.store.pages():
            if any(in_range(n, request.time_range) for n, _ in page.records):
                response.pages.append(page.info(self.clock))

    @unary(data_index_pb2.DeleteDataPagesResponse)
    def DeleteDataPages(self, request, response, context):
        response.bytes_deleted = self.store.delete(set(request.page_ids), request.time_range)


def specs() -> list[ServiceSpec]:
    return [
        ServiceSpec("data-buffer", "bosdyn.api.DataBufferService", "api.spot.robot",
                    data_buffer_service_pb2_grpc.add_DataBufferServiceServicer_to_server),
        ServiceSpec("data", "bosdyn.api.DataService", "api.spot.robot",
                    data_service_pb2_grpc.add_DataServiceServicer_to_server),
    ]


SERVICES = (
    Served(specs()[0], lambda parts: DataBufferServicer(parts.clock, parts.data)),
    Served(specs()[1], lambda parts: DataServicer(parts.clock, parts.data)),
)
