"""The simulated robot's data buffer through the SDK's own clients: what is logged is stored
and the data service reads it back."""

import time

import pytest
from bosdyn.api import (
    data_buffer_pb2,
    data_index_pb2,
    time_range_pb2,
)
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.data_buffer import DataBufferClient
from bosdyn.client.data_service import DataServiceClient

from conftest import client


def test_data_buffer_stores_and_the_data_service_reads_back(sim, robot):
    buffer = client(robot, DataBufferClient)
    data = client(robot, DataServiceClient)
    buffer.add_operator_comment("the robot looked at the gauge")
    buffer.add_text_messages([data_buffer_pb2.TextMessage(message="hello", source="test")])
    event = data_buffer_pb2.Event(type="inspection", description="gauge read", source="test",
                                  level=data_buffer_pb2.Event.LEVEL_MEDIUM)
    robot.time_sync.wait_for_sync(timeout_sec=5)
    event.start_time.CopyFrom(robot.time_sync.robot_timestamp_from_local_secs(time.time()))
    event.end_time.CopyFrom(event.start_time)
    buffer.add_events([event])
    buffer.add_blob(b"\x01\x02\x03", "my.BlobType", channel="blobs")
    schema_id = buffer.register_signal_schema(
        [data_buffer_pb2.SignalSchema.Variable(name="x", type=data_buffer_pb2.SignalSchema
                                               .Variable.TYPE_FLOAT64)], "signals")
    assert schema_id > 0
    comments = data.get_events_comments(data_index_pb2.EventsCommentsSpec(
        comments=True, events=[{}])).events_comments
    assert [c.message for c in comments.operator_comments] == ["the robot looked at the gauge"]
    assert [e.type for e in comments.events] == ["inspection"]
    status = data.get_data_buffer_status(get_blob_specs=True).data_buffer_status
    assert status.num_comments == 1 and status.num_events == 1
    assert [s.channel for s in status.blob_specs] == ["blobs"]
    index = data.get_data_index(data_index_pb2.DataQuery(
        text_messages=True, blobs=[data_index_pb2.BlobSpec(channel="blobs")])).data_index
    assert index.text_messages.pages[0].num_ticks == 1
    assert index.blobs[0].pages[0].page.num_ticks == 1
    pages = data.get_data_pages(time_range_pb2.TimeRange()).pages
    deleted = data.delete_data_pages(time_range_pb2.TimeRange(), [p.id for p in pages])
    assert deleted.bytes_deleted > 0
    assert data.get_data_buffer_status().data_buffer_status.num_comments == 0
    with pytest.raises(sdk_errors.InvalidRequestError):
        buffer.register_signal_schema([], "empty")
