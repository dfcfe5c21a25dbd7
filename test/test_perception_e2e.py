"""Cameras and lidar end to end: simulated Spot -> gRPC -> driver process -> ROS subscriber."""

import time

import numpy as np
import pytest
import simplejpeg
from bosdyn.api import point_cloud_pb2
from diagnostic_msgs.msg import DiagnosticArray
from ros_harness import DriverProcess, RosClient, driver_world, odom_tform
from sensor_msgs.msg import CameraInfo, CompressedImage, Image, PointCloud2
from tf2_msgs.msg import TFMessage

from conftest import PASSWORD, USERNAME, running_sim
from spot_msgs.srv import GetGripperCameraParameters, SetGripperCameraParameters
from spot_sim.perception.point_cloud_encoding import DEFAULT_PARAMETERS
from spot_sim.perception.sources import DEPTH_MODEL, VISUAL_MODEL

PC = point_cloud_pb2.PointCloud
CAMERAS = ("frontleft", "back", "left")


def _topics(camera: str) -> dict:
    return {f"/camera/{camera}/image": Image,
            f"/camera/{camera}/image/compressed": CompressedImage,
            f"/camera/{camera}/camera_info": CameraInfo,
            f"/depth/{camera}/image": Image, f"/depth/{camera}/camera_info": CameraInfo,
            f"/depth_registered/{camera}/image": Image,
            f"/depth_registered/{camera}/camera_info": CameraInfo}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    best_effort = {"reliable": False}
    streams = [(topic, msg_type, best_effort) for camera in CAMERAS
               for topic, msg_type in _topics(camera).items()]
    params = {"cameras": "[frontleft,back,left,nosuch,hand]", "rates.back": "7.5",
              "publish_depth_registered": "true", "publish_depth_points": "true"}

    def streaming(_sim, _driver, ros) -> bool:
        return all(ros.latest(t) for c in CAMERAS for t in _topics(c)) and \
            ros.latest("/lidar/points") is not None

    with driver_world(tmp_path_factory, "perception_test_client", params=params,
                      subscriptions=(*streams,
                                     ("/depth/frontleft/points", PointCloud2, best_effort),
                                     ("/lidar/points", PointCloud2, best_effort),
                                     ("/tf", TFMessage),
                                     ("/tf_static", TFMessage, {"latched": True})),
                      until=streaming, timeout=20) as world:
        yield world


def _rate(ros, topic: str, seconds: float = 2.0) -> float:
    start = len(ros.received(topic))
    time.sleep(seconds)  # sleep: the window the rate is measured over
    return (len(ros.received(topic)) - start) / seconds


def _k(model) -> list[float]:
    return [model.fx, 0.0, model.cx, 0.0, model.fy, model.cy, 0.0, 0.0, 1.0]


def test_every_camera_topic_has_the_right_encoding_size_frame_and_info(world):
    _sim, _driver, ros = world
    for camera in CAMERAS:
        image = ros.latest(f"/camera/{camera}/image")
        assert (image.encoding, image.width, image.height, image.step) == ("mono8", 640, 480, 640)
        assert image.header.frame_id == f"{camera}_fisheye" and len(image.data) == 640 * 480
        compressed = ros.latest(f"/camera/{camera}/image/compressed")
        assert compressed.format == "mono8; jpeg compressed mono8"
        assert simplejpeg.decode_jpeg(bytes(compressed.data), colorspace="GRAY").shape == (
            480, 640, 1)
        info = ros.latest(f"/camera/{camera}/camera_info")
        assert (info.width, info.height, info.header.frame_id) == (640, 480, f"{camera}_fisheye")
        assert list(info.k) == pytest.approx(_k(VISUAL_MODEL))
        depth = ros.latest(f"/depth/{camera}/image")
        assert (depth.encoding, depth.width, depth.height, depth.step) == ("16UC1", 424, 240, 848)
        assert depth.header.frame_id == camera
        depth_info = ros.latest(f"/depth/{camera}/camera_info")
        assert (depth_info.width, depth_info.height) == (424, 240)
        assert depth_info.header.frame_id == camera
        assert list(depth_info.k) == pytest.approx(_k(DEPTH_MODEL))
        registered = ros.latest(f"/depth_registered/{camera}/image")
        assert (registered.encoding, registered.width, registered.height) == ("16UC1", 640, 480)
        assert registered.header.frame_id == f"{camera}_fisheye"
        assert ros.latest(f"/depth_registered/{camera}/camera_info").header.frame_id == \
            f"{camera}_fisheye"
    # safety bounds (the figures are benchmarks/wifi_rates.py's): not halved, and the back
    # camera at its own rate (rates.back 7.5 Hz), not the others' 15 Hz
    assert _rate(ros, "/camera/frontleft/image") >= 15.0 / 2
    assert 7.5 / 2 <= _rate(ros, "/camera/back/image") <= 9.0
    assert _rate(ros, "/lidar/points") >= 10.0 / 2


def test_stamps_are_acquisition_times_on_the_local_clock(world):
    _sim, _driver, ros = world
    n = len(ros.received("/camera/back/image"))
    assert ros.wait_for(lambda: len(ros.received("/camera/back/image")) > n)
    _received_at, msg = ros.messages["/camera/back/image"][-1]
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    age = time.time() - stamp  # the sim's robot clock runs 12.345 s ahead; the stamp must not
    assert -0.05 < age < 1.0


def test_depth_points_land_on_the_simulated_floor(world):
    _sim, _driver, ros = world
    cloud = ros.latest("/depth/frontleft/points")
    assert cloud.header.frame_id == "frontleft" and cloud.point_step == 12
    xyz = np.frombuffer(bytes(cloud.data), dtype=np.float32).reshape(-1, 3)
    odom_tform_camera = odom_tform(ros, cloud.header.frame_id)
    z = xyz @ odom_tform_camera.rotation.to_matrix()[2] + odom_tform_camera.z
    assert len(z) > 10000
    assert z.min() > -0.02  # nothing below the floor
    assert np.mean(np.abs(z) < 0.02) > 0.3  # and much of it on the floor


def _cloud_after(ros, since: float) -> np.ndarray:
    def fresh():
        return [m for t, m in ros.messages["/lidar/points"] if t > since + 0.3]
    assert ros.wait_for(lambda: fresh(), timeout=5)
    msg = fresh()[-1]
    assert msg.header.frame_id == "sensor" and msg.is_dense
    return np.frombuffer(bytes(msg.data), dtype=np.float32).reshape(-1, 3)


def test_lidar_4sc_and_5sc_match_the_32f_cloud_within_resolution(world):
    sim, _driver, ros = world
    sim.sensors.lidar_encoding = PC.ENCODING_XYZ_32F
    reference = _cloud_after(ros, time.monotonic())
    try:
        for encoding in (PC.ENCODING_XYZ_4SC, PC.ENCODING_XYZ_5SC):
            sim.sensors.lidar_encoding = encoding
            packed = _cloud_after(ros, time.monotonic())
            params = DEFAULT_PARAMETERS[encoding]
            resolution = np.array(params.max_xyz) / (params.remapping_constant
                                                     * params.scale_factor)
            assert packed.shape == reference.shape
            assert np.all(np.abs(packed - reference) <= resolution / 2 + 1e-4)
    finally:
        sim.sensors.lidar_encoding = PC.ENCODING_XYZ_32F


def test_bad_camera_names_are_reported_clearly(world):
    _sim, driver, _ros = world
    output = driver.output()
    assert "unknown camera 'nosuch'" in output
    assert "camera hand: the robot has no image source 'hand_image'" in output
    assert driver.process.poll() is None


def test_a_corrupt_or_slow_camera_does_not_stall_the_others(world):
    sim, driver, ros = world
    sim.sensors.faults.update({"left_fisheye_image": "corrupt", "left_depth": "truncated"})
    sim.sensors.delays["back_fisheye_image"] = 0.4
    try:
        assert ros.wait_for(lambda: "corrupt JPEG" in driver.output(), timeout=10)  # in effect
        # a slow camera delays only itself (safety bounds: not halved)
        assert _rate(ros, "/camera/frontleft/image", 3.0) >= 15.0 / 2
        assert _rate(ros, "/depth/frontleft/image", 1.0) >= 15.0 / 2
        # its own requests in flight grow to cover the 0.4 s round trip: its rate holds
        assert _rate(ros, "/camera/back/image", 2.0) >= 7.5 / 2
        assert _rate(ros, "/camera/left/image", 1.0) == 0.0
        assert ros.wait_for(lambda: "corrupt JPEG" in driver.output()
                            and "truncated" in driver.output(), timeout=10)
        assert "camera left:" in driver.output()
    finally:
        sim.sensors.faults.clear()
        sim.sensors.delays.clear()
    assert ros.wait_for(lambda: _rate(ros, "/camera/left/image", 1.0) >= 15.0 / 2, timeout=10)
    assert driver.process.poll() is None


def _decode_floor_ms(jpeg: bytes) -> float:
    """The quickest of five decodes of one camera frame here: a floor for the driver's part
    of publishing that camera's raw image, measured without the driver."""
    times = []
    for _ in range(5):
        began = time.perf_counter()
        simplejpeg.decode_jpeg(jpeg, colorspace="GRAY")
        times.append((time.perf_counter() - began) * 1e3)
    return min(times)


def test_diagnostics_report_the_drivers_added_latency_per_stream(world):
    """Response received -> published, measured by the driver for each stream it runs, in
    milliseconds: for a camera at least half the time one frame's decode takes here (the
    driver decodes the robot's JPEG for the raw image), and below the stream's period (the
    driver keeps up). A value in seconds, or timed from after the decode, fails."""
    _sim, _driver, ros = world
    ros.subscribe("/diagnostics", DiagnosticArray)

    def added(stream: str):
        for msg in reversed(ros.received("/diagnostics")):
            for status in msg.status:
                if status.name.endswith(f"stream {stream}"):
                    values = {v.key: v.value for v in status.values}
                    if "added_latency_ms_p99" in values:
                        return (float(values["added_latency_ms_p50"]),
                                float(values["added_latency_ms_p99"]))
        return None

    floor = _decode_floor_ms(bytes(ros.latest("/camera/frontleft/image/compressed").data))
    for stream, least, period in (("camera frontleft", floor / 2, 1e3 / 15.0),
                                  ("point cloud velodyne-point-cloud", 0.01, 1e3 / 10.0)):
        assert ros.wait_for(lambda stream=stream: added(stream) is not None, timeout=10), stream
        p50, p99 = added(stream)
        assert least <= p50 <= p99 and p50 < period, (stream, least, p50, p99)


def test_gripper_camera_in_colour_on_a_robot_with_an_arm(tmp_path):
    with running_sim(tmp_path / "certs", has_arm=True) as sim:
        ros = RosClient("hand_camera_client")
        # In its own namespace: the module's driver (no arm) still runs on this ROS domain.
        topics = {"/arm/camera/hand/image": Image, "/arm/camera/hand/camera_info": CameraInfo,
                  "/arm/depth/hand/image": Image}
        for topic, msg_type in topics.items():
            ros.subscribe(topic, msg_type, reliable=False)
        driver = DriverProcess(sim, tmp_path / "driver.log", USERNAME, PASSWORD,
                               {"cameras": "[hand]", "image_color": "rgb",
                                "lidar_source": '""'}, namespace="/arm")
        try:
            assert ros.wait_for(lambda: all(ros.latest(t) for t in topics), timeout=20), \
                driver.output()
            image = ros.latest("/arm/camera/hand/image")
            assert (image.encoding, image.width, image.height) == ("rgb8", 640, 480)
            assert image.header.frame_id == "hand_color_image_sensor"
            assert ros.latest("/arm/camera/hand/camera_info").header.frame_id == \
                "hand_color_image_sensor"
            depth = ros.latest("/arm/depth/hand/image")
            assert (depth.encoding, depth.header.frame_id) == ("16UC1", "hand_depth_sensor")
            _gripper_camera_settings_change_the_hand_images(ros)
        finally:
            ros.close()
            driver.stop()


def _mean(image: Image) -> float:
    return float(np.frombuffer(bytes(image.data), np.uint8).mean())


def _gripper_camera_settings_change_the_hand_images(ros: RosClient) -> None:
    """Through gripper_camera/set_parameters: a bad value changes nothing; a new mode and a
    short manual exposure change the images and camera_info that follow."""
    auto = _mean(ros.latest("/arm/camera/hand/image"))
    got = ros.call(GetGripperCameraParameters, "/arm/gripper_camera/get_parameters")
    assert got.success and got.params.camera_mode == "640x480" and got.params.exposure_auto
    bad = SetGripperCameraParameters.Request(fields=["camera_mode", "brightness"])
    bad.params.camera_mode, bad.params.brightness = "1280x720", float("nan")
    refused = ros.call(SetGripperCameraParameters, "/arm/gripper_camera/set_parameters", bad)
    assert not refused.success and "brightness nan is outside [0, 1]" in refused.message
    assert ros.call(GetGripperCameraParameters, "/arm/gripper_camera/get_parameters") \
        .params.camera_mode == "640x480"
    change = SetGripperCameraParameters.Request(
        fields=["camera_mode", "exposure_auto", "exposure_absolute"])
    change.params.camera_mode, change.params.exposure_auto = "1280x720", False
    change.params.exposure_absolute = 0.05
    done = ros.call(SetGripperCameraParameters, "/arm/gripper_camera/set_parameters", change)
    assert done.success, done.message
    assert (done.params.camera_mode, done.params.exposure_auto) == ("1280x720", False)
    assert ros.wait_for(lambda: ros.latest("/arm/camera/hand/image").width == 1280, timeout=5.0)
    image = ros.latest("/arm/camera/hand/image")
    assert (image.width, image.height) == (1280, 720)
    assert _mean(image) < 0.5 * auto
    assert ros.wait_for(lambda: ros.latest("/arm/camera/hand/camera_info").width == 1280, 5.0)
    info = ros.latest("/arm/camera/hand/camera_info")
    assert info.height == 720
    assert info.k[0] == pytest.approx(VISUAL_MODEL.fx * 2, rel=1e-6)  # the same lens
