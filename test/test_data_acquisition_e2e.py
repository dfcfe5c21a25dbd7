"""End to end: data acquisition through ROS -> driver -> gRPC -> a simulated Spot with a
Spot CAM: the sources the robot lists, a capture followed to the end with feedback, its
images on a topic, the store's captures listed and downloaded as the SDK's program lays
them out, refusals that send nothing, and a capture cancelled part way."""

import json

import pytest
import simplejpeg
from action_msgs.msg import GoalStatus
from bosdyn.api import data_acquisition_store_pb2
from ros_harness import driver_world
from sensor_msgs.msg import CompressedImage

from spot_msgs.action import AcquireData
from spot_msgs.srv import DownloadCaptures, ListCaptures, ListCaptureSources

EVERYTHING = data_acquisition_store_pb2.QueryParameters(include_images=True, include_data=True)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with driver_world(tmp_path_factory, "data_acquisition_test_client",
                      sim={"has_spot_cam": True},
                      subscriptions=(("/data_acquisition/image/compressed",
                                      CompressedImage),)) as (sim, _driver, ros):
        yield sim, ros


def store_of(sim):
    return sim.captures


def acquire(ros, feedback=None, cancel_after_first_feedback=False, **goal):
    client = ros.action_client(AcquireData, "/data_acquisition/acquire")
    feedback = [] if feedback is None else feedback
    handle = ros.wait_future(client.send_goal_async(
        AcquireData.Goal(**goal), feedback_callback=lambda m: feedback.append(m.feedback)))
    assert handle.accepted
    if cancel_after_first_feedback:
        assert ros.wait_for(lambda: feedback, timeout=30)
        ros.wait_future(handle.cancel_goal_async())
    outcome = ros.wait_future(handle.get_result_async(), timeout=90)
    return outcome.status, outcome.result


def test_the_robots_sources_are_listed(world):
    _, ros = world
    response = ros.call(ListCaptureSources, "/data_acquisition/list_sources")
    assert response.success, response.message
    assert {"robot-state", "spot-cam-ptz", "spot-cam-ir"} <= set(response.data_sources)
    assert len(response.descriptions) == len(response.data_sources)
    assert "frontleft_fisheye_image" in response.image_sources


def test_a_capture_is_listed_and_downloaded(world, tmp_path):
    sim, ros = world
    feedback = []
    status, result = acquire(ros, feedback, action_name="gauge 3", group_name="round 1",
                             captures=["robot-state", "frontleft_fisheye_image", "spot-cam-ir"],
                             metadata_json='{"operator": "ada"}')
    assert status == GoalStatus.STATUS_SUCCEEDED and result.success, result.message
    assert result.status == "STATUS_COMPLETE" and feedback
    assert sorted(c.channel for c in result.saved) == [
        "frontleft_fisheye_image", "metadata", "robot-state", "spot-cam-ir"]
    assert all(c.group_name == "round 1" and c.id > 0 for c in result.saved)
    assert ros.wait_for(lambda: len(ros.received("/data_acquisition/image/compressed")) >= 2,
                        timeout=10)
    image = ros.latest("/data_acquisition/image/compressed")
    assert simplejpeg.decode_jpeg(bytes(image.data)).ndim == 3 and image.format == "jpeg"
    listed = ros.call(ListCaptures, "/data_acquisition/list_captures",
                      ListCaptures.Request(group_name="round 1"))
    assert listed.success and {(c.channel, c.kind) for c in listed.captures} == {
        ("robot-state", "data"), ("frontleft_fisheye_image", "image"),
        ("spot-cam-ir", "image"), ("metadata", "metadata")}
    got = ros.call(DownloadCaptures, "/data_acquisition/download",
                   DownloadCaptures.Request(directory=str(tmp_path / "out"),
                                            group_name="round 1"))
    assert got.success, got.message
    folder = tmp_path / "out" / "DATA" / "round 1"  # the SDK's clean_filename keeps spaces
    assert sorted(p.name for p in folder.iterdir()) == [
        "gauge 3_frontleft_fisheye_image.jpg", "gauge 3_robot-state.json",
        "gauge 3_spot-cam-ir.jpg"]
    state = json.loads((folder / "gauge 3_robot-state.json").read_text())
    assert "kinematicState" in state
    stored = {r.data_id.channel: r for r in store_of(sim).query(EVERYTHING)}
    assert (folder / "gauge 3_spot-cam-ir.jpg").read_bytes() == \
        stored["spot-cam-ir"].image.image.data


@pytest.mark.parametrize("goal, sentence", [
    (dict(captures=["robot-state", "thermal-drone"]), "unknown capture 'thermal-drone'"),
    (dict(captures=["robot-state"], metadata_json="[1, 2]"), "metadata_json must be a JSON "
     "object"),
    (dict(captures=[]), "name at least one capture"),
    (dict(captures=["robot-state"], group_name=""), "a capture needs an action_name and a "
     "group_name"),
])
def test_bad_captures_are_refused_and_nothing_is_captured(world, goal, sentence):
    sim, ros = world
    before = store_of(sim).max_id()
    status, result = acquire(ros, **{"action_name": "a", "group_name": "g", **goal})
    assert status == GoalStatus.STATUS_ABORTED and sentence in result.message, result.message
    assert store_of(sim).max_id() == before


def test_a_capture_is_cancelled_part_way(world):
    sim, ros = world
    before = store_of(sim).max_id()
    status, result = acquire(ros, cancel_after_first_feedback=True, action_name="slow",
                             group_name="cancel", captures=["spot-cam-pano", "spot-cam-ptz",
                                                            "spot-cam-ir"])
    assert status == GoalStatus.STATUS_CANCELED and not result.success
    assert store_of(sim).max_id() < before + 3  # not every item was captured
