"""The simulated data acquisition through the SDK's own clients: capabilities from the
robot's cameras, state, lidar and Spot CAM; a capture's progress to COMPLETE and what it
stored; refusals of captures the robot lacks; cancelling; the store's lists and queries; and
the SDK's download program (grpc) run unmodified."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bosdyn.api import data_acquisition_pb2, data_acquisition_store_pb2
from bosdyn.client.data_acquisition import DataAcquisitionClient
from bosdyn.client.data_acquisition_store import DataAcquisitionStoreClient
from bosdyn.client.exceptions import ResponseError
from bosdyn.client.image import build_image_request
from test_sim_spot_cam import wait_for

from conftest import MISSING, PASSWORD, USERNAME, connect, running_sim

Status = data_acquisition_pb2.GetStatusResponse
Query = data_acquisition_store_pb2.QueryParameters


@pytest.fixture(scope="module")
def spot(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs"), has_spot_cam=True,
                     has_lidar=True) as sim:
        yield sim


@pytest.fixture(scope="module")
def robot(spot):
    robot = connect(spot)
    robot.time_sync.wait_for_sync()
    yield robot
    robot.time_sync.stop()


def clients(robot):
    return (robot.ensure_client(DataAcquisitionClient.default_service_name),
            robot.ensure_client(DataAcquisitionStoreClient.default_service_name))


def requests(*names: str, images=()) -> data_acquisition_pb2.AcquisitionRequestList:
    out = data_acquisition_pb2.AcquisitionRequestList()
    out.data_captures.extend(data_acquisition_pb2.DataCapture(name=n) for n in names)
    out.image_captures.extend(data_acquisition_pb2.ImageSourceCapture(
        image_service="image", image_request=build_image_request(n)) for n in images)
    return out


def finished(daq, request_id) -> Status:
    assert wait_for(lambda: daq.get_status(request_id).status not in (
        Status.STATUS_ACQUIRING, Status.STATUS_SAVING, Status.STATUS_CANCEL_IN_PROGRESS), 30)
    return daq.get_status(request_id)


def test_capabilities_come_from_the_robots_own_sources(robot):
    daq, _ = clients(robot)
    info = daq.get_service_info()
    assert {"robot-state", "velodyne-point-cloud", "spot-cam-ptz"} <= {
        s.name for s in info.data_sources}
    assert "frontleft_fisheye_image" in info.image_sources[0].image_source_names


def test_a_capture_progresses_to_complete_and_is_stored(spot, robot):
    daq, store = clients(robot)
    seen = set()
    request_id = daq.acquire_data(requests("robot-state", "spot-cam-ptz",
                                           images=["left_fisheye_image"]),
                                  "inspect", "sim-test", metadata={"valve": 7})
    while (status := daq.get_status(request_id).status) != Status.STATUS_COMPLETE:
        seen.add(status)
        assert status in (Status.STATUS_ACQUIRING, Status.STATUS_SAVING), status
        time.sleep(0.02)
    assert Status.STATUS_ACQUIRING in seen  # it took time, as a robot's does
    saved = daq.get_status(request_id).data_saved
    assert sorted(d.channel for d in saved) == ["left_fisheye_image", "metadata",
                                                 "robot-state", "spot-cam-ptz"]
    stored = store.query_stored_captures(query=Query(
        include_images=True, include_data=True, include_metadata=True,
        channels=["robot-state", "spot-cam-ptz", "metadata"])).results
    by_channel = {r.data_id.channel: r for r in stored
                  if r.data_id.action_id.group_name == "sim-test"}
    assert "kinematicState" in json.loads(by_channel["robot-state"].data.data)
    assert by_channel["spot-cam-ptz"].image.image.rows == 1080
    assert by_channel["metadata"].metadata.metadata.data["valve"] == 7
    actions = store.list_capture_actions(data_acquisition_store_pb2.DataQueryParams())
    assert ("inspect", "sim-test") in {(a.action_name, a.group_name) for a in actions}


def test_a_capture_the_robot_lacks_is_refused_whole(spot, robot):
    daq, store = clients(robot)
    before = store.query_max_capture_id()
    with pytest.raises(ResponseError) as refused:
        daq.acquire_data(requests("robot-state", "gps"), "a", "g")
    assert refused.value.response.status == \
        data_acquisition_pb2.AcquireDataResponse.STATUS_UNKNOWN_CAPTURE_TYPE
    with pytest.raises(ResponseError):
        daq.acquire_data(requests(images=["no_such_camera"]), "a", "g")
    time.sleep(0.3)
    assert store.query_max_capture_id() == before


def test_a_capture_is_cancelled_between_items(spot, robot):
    daq, store = clients(robot)
    before = store.query_max_capture_id()
    request_id = daq.acquire_data(requests("spot-cam-pano", "spot-cam-ptz", "spot-cam-ir"),
                                  "slow", "cancel")
    time.sleep(0.2)
    daq.cancel_acquisition(request_id)
    assert finished(daq, request_id).status == Status.STATUS_ACQUISITION_CANCELLED
    assert store.query_max_capture_id() < before + 3


SDK_DIR = os.environ.get("SPOT_SDK_DIR", "")


@pytest.mark.skipif(not SDK_DIR, reason=MISSING + "a spot-sdk checkout (SPOT_SDK_DIR): its "
                    "example programs are in no package CI can install")
def test_the_sdk_download_program_runs_unmodified(spot, robot, tmp_path):
    daq, _ = clients(robot)
    finished(daq, daq.acquire_data(requests("robot-state", images=["back_fisheye_image"]),
                                   "dl", "download-test"))
    program = Path(SDK_DIR) / "python/examples/data_acquisition_service/" \
        "data_acquisition_download.py"
    env = {**os.environ, "BOSDYN_CLIENT_USERNAME": USERNAME, "BOSDYN_CLIENT_PASSWORD": PASSWORD}
    result = subprocess.run(
        [sys.executable, "-m", "spot_sim.sdk_program", "--port", str(spot.port), "--ca",
         str(spot.ca_cert), str(program), "127.0.0.1", "--destination-folder",
         str(tmp_path / "out"), "--query-from-timestamp", "2000-01-01T00:00:00Z",
         "--query-to-timestamp", "2100-01-01T00:00:00Z", "grpc"],
        capture_output=True, text=True, timeout=120, env=env)
    # Its main() returns None, so the program always exits 1 (`if not main(): sys.exit(1)`):
    # success is its own last line, no traceback, and the files.
    assert result.stderr == "" and "Completed all downloads." in result.stdout, \
        (result.stdout[-2000:], result.stderr[-3000:])
    folder = tmp_path / "out" / "DATA" / "download-test"
    assert sorted(p.name for p in folder.iterdir()) == ["dl_back_fisheye_image.jpg",
                                                         "dl_robot-state.json"]


@pytest.mark.skipif(not SDK_DIR, reason=MISSING + "a spot-sdk checkout (SPOT_SDK_DIR): its "
                    "example programs are in no package CI can install")
def test_the_sdk_example_runs_unmodified_as_far_as_this_robot_has_its_sources(spot, tmp_path):
    """Its requests 1 (robot state, positions, objects, a camera) and 5 (the Spot CAM)
    complete; 2-4 ask for GPS plugins this robot lacks and are refused as a robot without
    them refuses; its closing REST download (HTTPS on port 443) is not served."""
    program = Path(SDK_DIR) / "python/examples/data_acquisition_service/" \
        "data_acquisition_example.py"
    env = {**os.environ, "BOSDYN_CLIENT_USERNAME": USERNAME, "BOSDYN_CLIENT_PASSWORD": PASSWORD}
    result = subprocess.run(
        [sys.executable, "-m", "spot_sim.sdk_program", "--port", str(spot.port), "--ca",
         str(spot.ca_cert), str(program), "127.0.0.1"], capture_output=True, text=True,
        timeout=150, env=env, cwd=tmp_path)
    assert result.stderr == "", result.stderr[-3000:]
    assert result.stdout.count("Current status is: STATUS_COMPLETE") == 2, result.stdout[-3000:]
    assert result.stdout.count("UnknownCaptureTypeError") == 3
