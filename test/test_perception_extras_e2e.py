"""The perception extras end to end (simulated Spot -> gRPC -> driver -> ROS), with a driver of
their own so their work does not slow the camera rates test_perception_e2e checks: XYZRGB
clouds from registered depth, and the front cameras stitched into a virtual camera."""

import numpy as np
import pytest
from ros_harness import driver_world
from sensor_msgs.msg import CameraInfo, Image, PointCloud2
from tf2_msgs.msg import TFMessage

from spot_sim.perception.sources import VISUAL_MODEL


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    best_effort = {"reliable": False}
    params = {"cameras": "[frontleft]", "camera_rate": "5.0", "publish_depth": "false",
              "publish_depth_registered_points": "true",
              "publish_stitched_front": "true", "stitched_front_rate": "2.0"}
    with driver_world(tmp_path_factory, "perception_extras_test_client", params=params,
                      subscriptions=(("/camera/frontleft/image", Image, best_effort),
                                     ("/depth_registered/frontleft/points", PointCloud2,
                                      best_effort),
                                     ("/camera/frontmiddle_virtual/image", Image, best_effort),
                                     ("/camera/frontmiddle_virtual/camera_info", CameraInfo,
                                      best_effort),
                                     ("/tf_static", TFMessage, {"latched": True})),
                      first="/camera/frontleft/image") as world:
        yield world


def test_xyzrgb_points_take_the_colour_of_the_image_pixel_they_project_to(world):
    """depth_registered/<camera>/points: each point, projected back through the camera's
    intrinsics, lands on the pixel of the image of the same instant whose colour it has."""
    _sim, _driver, ros = world
    topic = "/depth_registered/frontleft/points"
    assert ros.wait_for(lambda: ros.latest(topic) is not None, timeout=10)

    def stamp(msg) -> float:
        return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9

    def matched():
        """A cloud and the image of its request (the robot stamps each shot when it is taken:
        the two differ by the time one takes, well under a frame period)."""
        images = [m for _, m in ros.messages["/camera/frontleft/image"][-30:]]
        for _, cloud in reversed(ros.messages[topic][-10:]):
            near = min(images, key=lambda m: abs(stamp(m) - stamp(cloud)), default=None)
            if near is not None and abs(stamp(near) - stamp(cloud)) < 0.06:
                return cloud, near
        return None

    assert ros.wait_for(lambda: matched() is not None, timeout=10)
    cloud, image = matched()
    assert cloud.header.frame_id == "frontleft_fisheye" and cloud.point_step == 16
    assert [f.name for f in cloud.fields] == ["x", "y", "z", "rgb"]
    points = np.frombuffer(bytes(cloud.data), dtype=np.float32).reshape(-1, 4)
    assert len(points) > 10000
    packed = points[:, 3].view(np.uint32)
    rgb = np.stack([(packed >> 16) & 255, (packed >> 8) & 255, packed & 255], axis=1)
    model = VISUAL_MODEL
    u = np.rint(model.fx * points[:, 0] / points[:, 2] + model.cx).astype(int)
    v = np.rint(model.fy * points[:, 1] / points[:, 2] + model.cy).astype(int)
    pixels = np.frombuffer(bytes(image.data), dtype=np.uint8).reshape(image.height, image.width)
    assert image.encoding == "mono8"
    assert np.array_equal(rgb[:, 0], pixels[v, u]) and np.array_equal(rgb[:, 0], rgb[:, 2])
    assert len(np.unique(rgb[:, 0])) > 20  # shaded scene, not one colour


def test_the_front_cameras_are_stitched_into_the_virtual_middle_camera(world):
    """camera/frontmiddle_virtual: the robot's two front images (fetched here through the
    SDK) stitched from their own calibration, with its camera_info and its mount on
    /tf_static."""
    from bosdyn.client.frame_helpers import get_a_tform_b
    from bosdyn.client.image import ImageClient

    from conftest import connect
    from spot_driver.perception import images, stitching

    sim, _driver, ros = world
    topic = "/camera/frontmiddle_virtual"
    assert ros.wait_for(lambda: ros.latest(f"{topic}/image") is not None
                        and ros.latest(f"{topic}/camera_info") is not None, timeout=10)
    stitched, info = ros.latest(f"{topic}/image"), ros.latest(f"{topic}/camera_info")
    assert stitched.header.frame_id == info.header.frame_id == "frontmiddle_virtual"
    assert (stitched.width, stitched.height, stitched.encoding) == (960, 540, "mono8")
    assert (info.width, info.height) == (960, 540) and info.k[0] == VISUAL_MODEL.fx
    assert ros.wait_for(lambda: any(t.child_frame_id == "frontmiddle_virtual"
                                    and t.header.frame_id == "body"
                                    for m in ros.received("/tf_static")
                                    for t in m.transforms), timeout=5)
    robot = connect(sim)
    try:
        shots = robot.ensure_client(ImageClient.default_service_name).get_image_from_sources(
            ["frontleft_fisheye_image", "frontright_fisheye_image"])
    finally:
        robot.time_sync.stop()
    cameras = [(stitching.Pinhole(r.source.cols, r.source.rows,
                                  r.source.pinhole.intrinsics.focal_length.x,
                                  r.source.pinhole.intrinsics.focal_length.y,
                                  r.source.pinhole.intrinsics.principal_point.x,
                                  r.source.pinhole.intrinsics.principal_point.y),
                get_a_tform_b(r.shot.transforms_snapshot, "body", r.shot.frame_name_image_sensor))
               for r in shots]
    stitcher = stitching.Stitcher(stitching.virtual_model(cameras[0][0]),
                                  stitching.virtual_pose(cameras[0][1], cameras[1][1]), cameras)
    expected = stitcher.stitch([images.decode_pixels(r.shot.image) for r in shots])[..., 0]
    got = np.frombuffer(bytes(stitched.data), dtype=np.uint8).reshape(540, 960)
    assert np.mean(np.abs(got.astype(int) - expected) <= 8) > 0.95  # JPEG vs raw, noise
    assert np.mean(got > 0) > 0.9  # the two cameras cover the frame
