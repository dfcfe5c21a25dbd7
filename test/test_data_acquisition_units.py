"""Data acquisition's pure parts: the driver's request building and checks, file names as
the SDK's download program writes them, messages; the simulated store's queries and paging
(no robot, no ROS graph)."""

import pytest
from bosdyn.api import data_acquisition_pb2, data_acquisition_store_pb2, image_pb2
from builtin_interfaces.msg import Time

from spot_driver.core.errors import CommandError
from spot_driver.data_acquisition import conversions
from spot_driver.data_acquisition.acquisition import build_request, parse_metadata
from spot_driver.data_acquisition.store import file_name
from spot_sim.data_acquisition.store import DATA, IMAGE, RESULTS_PER_QUERY, CaptureStore

Query = data_acquisition_store_pb2.QueryParameters


def data_id(action: str, group: str, channel: str, seconds: int = 10):
    out = data_acquisition_pb2.DataIdentifier(channel=channel)
    out.action_id.action_name, out.action_id.group_name = action, group
    out.action_id.timestamp.seconds = seconds
    return out


def test_requests_name_data_and_camera_sources_and_refuse_others():
    request = build_request({"robot-state"}, {"hand_image"}, ["robot-state", "hand_image"])
    assert [c.name for c in request.data_captures] == ["robot-state"]
    assert request.image_captures[0].image_request.image_source_name == "hand_image"
    with pytest.raises(CommandError, match="unknown capture 'gps'; this robot captures "
                                           "hand_image, robot-state"):
        build_request({"robot-state"}, {"hand_image"}, ["gps"])
    with pytest.raises(CommandError):
        build_request({"robot-state"}, set(), [])


def test_metadata_must_be_a_json_object():
    assert parse_metadata("") is None
    assert parse_metadata('{"a": 1}') == {"a": 1}
    for bad in ("[1]", "{", '"text"'):
        with pytest.raises(CommandError):
            parse_metadata(bad)


def test_file_names_follow_the_sdk_download_program():
    result = data_acquisition_store_pb2.QueryStoredCaptureResult()
    result.data_id.CopyFrom(data_id("gauge 3", "round/1", "hand_image"))
    result.image.image.format = image_pb2.Image.FORMAT_JPEG
    assert file_name(result) == ("round_1", "gauge 3_hand_image.jpg")  # no way out
    result.data_id.action_id.group_name = ".."
    assert file_name(result)[0] == "_"
    result.data.file_extension = ".json"
    assert file_name(result)[1] == "gauge 3_hand_image.json"
    result.metadata.SetInParent()
    assert file_name(result) is None


def test_capture_and_image_messages():
    message = conversions.capture_msg(data_id("a", "g", "robot-state"), "data", Time(sec=5))
    assert (message.group_name, message.action_name, message.channel, message.kind,
            message.stamp.sec) == ("g", "a", "robot-state", "data", 5)
    shot = image_pb2.ImageCapture(frame_name_image_sensor="hand_color_image_sensor")
    shot.image.format, shot.image.data = image_pb2.Image.FORMAT_JPEG, b"\xff\xd8jpeg"
    image = conversions.compressed_image(shot, Time(sec=5), "spot1/")
    assert image.header.frame_id == "spot1/hand_color_image_sensor" and image.format == "jpeg"
    shot.image.format = image_pb2.Image.FORMAT_RAW
    assert conversions.compressed_image(shot, Time(sec=5), "") is None


def test_the_simulated_store_filters_and_pages():
    store = CaptureStore()
    for index in range(RESULTS_PER_QUERY + 5):
        store.add(data_id("a", "g1" if index % 2 else "g2", f"c{index}", seconds=index), DATA,
                  (b"x", ".bin"))
    store.add(data_id("b", "g1", "cam"), IMAGE, image_pb2.ImageCapture())
    first = store.query(Query(include_data=True))
    assert len(first) == RESULTS_PER_QUERY and first[0].data_id.id == 1
    rest = store.query(Query(include_data=True, captures_from_id=first[-1].data_id.id + 1))
    assert len(rest) == 5 and store.max_id() == RESULTS_PER_QUERY + 6
    images = store.query(Query(include_images=True))
    assert [r.data_id.channel for r in images] == ["cam"]
    timed = data_acquisition_store_pb2.QueryParameters(include_data=True)
    timed.time_range.from_timestamp.seconds, timed.time_range.to_timestamp.seconds = 3, 5
    assert [r.data_id.channel for r in store.query(timed)] == ["c3", "c4", "c5"]
    # every capture has its own timestamp here, so each is its own capture action
    assert len(store.action_ids(data_acquisition_store_pb2.DataQueryParams())) == \
        RESULTS_PER_QUERY + 6
