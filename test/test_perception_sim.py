"""The simulated cameras and lidar, through the official SDK only; the gripper camera's
parameters and what they do to its images, IR emitters, ray casts, the standard point-cloud
name."""


import numpy as np
import pytest
import simplejpeg
from bosdyn.api import (
    gripper_camera_param_pb2,
    image_pb2,
    ir_enable_disable_pb2,
    point_cloud_pb2,
    ray_cast_pb2,
)
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.common import common_header_errors
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.gripper_camera_param import GripperCameraParamClient
from bosdyn.client.image import (
    ImageClient,
    UnknownImageSourceError,
    UnsupportedImageFormatRequestedError,
    UnsupportedPixelFormatRequestedError,
    build_image_request,
)
from bosdyn.client.ir_enable_disable import IREnableDisableServiceClient
from bosdyn.client.point_cloud import PointCloudClient
from bosdyn.client.ray_cast import RayCastClient
from bosdyn.client.ray_cast import UnknownFrameError as RayCastUnknownFrameError

from conftest import client, connect, running_sim
from spot_driver.conversions import point_cloud
from spot_driver.perception import images
from spot_sim.perception.point_cloud_encoding import DEFAULT_PARAMETERS

Image = image_pb2.Image
PC = point_cloud_pb2.PointCloud
BODY = ("frontleft", "frontright", "left", "right", "back")


def test_sources_of_a_robot_without_and_with_an_arm(certs_dir):
    for arm in (False, True):
        with running_sim(certs_dir, has_arm=arm) as sim:
            robot = connect(sim)
            names = {s.name for s in robot.ensure_client(ImageClient.default_service_name)
                     .list_image_sources()}
            robot.time_sync.stop()
        body = {f"{c}_{k}" for c in BODY
                for k in ("fisheye_image", "depth", "depth_in_visual_frame")}
        hand = {"hand_color_image", "hand_image", "hand_depth", "hand_depth_in_hand_color_frame",
                "hand_color_in_hand_depth_frame"}  # registered both ways, as a robot offers
        assert names == (body | hand if arm else body)


def test_formats_pixel_conversion_and_errors(robot):
    client: ImageClient = robot.ensure_client(ImageClient.default_service_name)
    raw, = client.get_image([build_image_request("frontleft_fisheye_image",
                                                 image_format=Image.FORMAT_RAW)])
    assert raw.shot.frame_name_image_sensor == "frontleft_fisheye"
    assert (raw.shot.image.cols, raw.shot.image.rows) == (640, 480)
    assert raw.shot.image.pixel_format == Image.PIXEL_FORMAT_GREYSCALE_U8
    grey = images.decode_pixels(raw.shot.image)
    small, large = (client.get_image([build_image_request("frontleft_fisheye_image",
                                                          quality_percent=q)])[0]
                    for q in (20, 95))
    assert len(small.shot.image.data) < len(large.shot.image.data)
    assert np.abs(images.decode_pixels(large.shot.image).astype(int) - grey).mean() < 4
    rgb, = client.get_image([build_image_request(
        "frontleft_fisheye_image", image_format=Image.FORMAT_RAW,
        pixel_format=Image.PIXEL_FORMAT_RGB_U8)])
    pixels = images.decode_pixels(rgb.shot.image)
    assert pixels.shape == (480, 640, 3)
    assert np.array_equal(pixels[..., 0], grey[..., 0])  # grey sensor: equal channels
    with pytest.raises(UnknownImageSourceError):
        client.get_image([build_image_request("no_such_camera")])
    with pytest.raises(UnsupportedImageFormatRequestedError):
        client.get_image([build_image_request("back_depth", image_format=Image.FORMAT_JPEG)])
    with pytest.raises(UnsupportedPixelFormatRequestedError):
        client.get_image([build_image_request("back_fisheye_image",
                                              pixel_format=Image.PIXEL_FORMAT_DEPTH_U16)])
    simplejpeg.decode_jpeg(large.shot.image.data)  # a valid JPEG


def test_colour_cameras(certs_dir):
    with running_sim(certs_dir, color_cameras=True) as sim:
        robot = connect(sim)
        client = robot.ensure_client(ImageClient.default_service_name)
        shot = client.get_image([build_image_request("left_fisheye_image")])[0].shot
        robot.time_sync.stop()
    pixels = images.decode_pixels(shot.image)
    assert shot.image.pixel_format == Image.PIXEL_FORMAT_RGB_U8 and pixels.shape[2] == 3
    assert np.abs(pixels[..., 0].astype(int) - pixels[..., 2]).max() > 50  # really colour


def _floor_z(response) -> np.ndarray:
    """Heights in odom of the depth image's points (through its own frame tree snapshot)."""
    source = response.source
    depth = images.decode_pixels(response.shot.image)
    xyz = images.PinholeRays.of_source(source).points(depth, source.depth_scale)
    odom_tform_sensor = get_a_tform_b(response.shot.transforms_snapshot, "odom",
                                      response.shot.frame_name_image_sensor)
    rotation = odom_tform_sensor.rotation.to_matrix()
    return xyz @ rotation.T + [odom_tform_sensor.x, odom_tform_sensor.y, odom_tform_sensor.z]


def test_depth_and_registered_depth_agree_with_the_scene(robot):
    client = robot.ensure_client(ImageClient.default_service_name)
    for camera in ("frontleft", "left"):
        for name in (f"{camera}_depth", f"{camera}_depth_in_visual_frame"):
            response, = client.get_image([build_image_request(name,
                                                              image_format=Image.FORMAT_RAW)])
            assert response.shot.image.pixel_format == Image.PIXEL_FORMAT_DEPTH_U16
            points = _floor_z(response)
            assert len(points) > 1000
            assert points[:, 2].min() > -0.01  # nothing below the floor
            assert np.mean(np.abs(points[:, 2]) < 0.01) > 0.3  # much of the view is floor


@pytest.mark.parametrize("encoding", [PC.ENCODING_XYZ_4SC, PC.ENCODING_XYZ_5SC])
def test_lidar_encodings_agree_with_32f(robot, sim, encoding):
    robot.sync_with_directory()  # payload services register after the standard ones
    client: PointCloudClient = robot.ensure_client("velodyne-point-cloud")
    assert [s.name for s in client.list_point_cloud_sources()] == ["velodyne-point-cloud"]
    reference = point_cloud.decode_xyz(
        client.get_point_cloud_from_sources(["velodyne-point-cloud"])[0].point_cloud)
    sim.sensors.lidar_encoding = encoding
    cloud = client.get_point_cloud_from_sources(["velodyne-point-cloud"])[0].point_cloud
    assert cloud.encoding == encoding and cloud.source.frame_name_sensor == "sensor"
    packed = point_cloud.decode_xyz(cloud)
    params = DEFAULT_PARAMETERS[encoding]
    resolution = np.array(params.max_xyz) / (params.remapping_constant * params.scale_factor)
    assert packed.shape == reference.shape and len(packed) > 10000
    assert np.all(np.abs(packed - reference) <= resolution / 2 + 1e-4)


def test_the_camera_ray_cast_matches_the_plain_ray_cast_from_any_pose():
    """raycast_grid skips boxes outside each camera's view; it must find the same hits as
    testing every ray against every box, from random poses inside and outside the room."""
    from bosdyn.client.math_helpers import Quat

    from spot_sim.perception.scene import Scene
    from spot_sim.perception.sources import VISUAL_MODEL

    scene, (xs, ys) = Scene(), VISUAL_MODEL.axes()
    u, v = np.meshgrid(xs, ys)
    camera_rays = np.stack([u.ravel(), v.ravel(), np.ones(u.size, np.float32)], axis=1)
    rng = np.random.default_rng(7)
    for _ in range(60):
        w, x, y, z = rng.normal(size=4)
        norm = float(np.sqrt(w * w + x * x + y * y + z * z))
        rotation = Quat(w / norm, x / norm, y / norm, z / norm).to_matrix()
        origin = rng.uniform([-7.0, -7.0, 0.05], [7.0, 7.0, 3.0])
        t, surface, _ = scene.raycast_grid(origin, rotation, xs, ys, 40.0)
        t_all, surface_all = scene.raycast(origin, camera_rays @ rotation.T.astype(np.float32),
                                           40.0)
        same = surface.ravel() == surface_all
        assert (~same).sum() <= 3  # float rounding on box edges only
        assert np.allclose(t.ravel()[same], t_all[same], rtol=1e-4, atol=1e-4, equal_nan=True)


def test_gripper_camera_params_round_trip(equipped_sim, equipped_robot):
    params = client(equipped_robot, GripperCameraParamClient)
    request = gripper_camera_param_pb2.GripperCameraParamRequest()
    request.params.brightness.value = 0.8
    request.params.camera_mode = request.params.MODE_1920_1080
    params.set_camera_params(request)
    got = params.get_camera_params(gripper_camera_param_pb2.GripperCameraGetParamRequest())
    assert got.params.brightness.value == pytest.approx(0.8)
    assert got.params.camera_mode == request.params.MODE_1920_1080
    request.params.brightness.value = 3.0
    with pytest.raises(sdk_errors.InvalidRequestError):
        params.set_camera_params(request)
    assert params.get_camera_params(gripper_camera_param_pb2.GripperCameraGetParamRequest()) \
        .params.brightness.value == pytest.approx(0.8)  # the refused request changed nothing
    request.params.brightness.value = 0.5
    request.params.camera_mode = request.params.MODE_640_480
    params.set_camera_params(request)


def _hand_image(robot) -> tuple[int, int, float]:
    """(cols, rows, mean grey level) of one hand colour image, and what ListImageSources
    says of its size."""
    images = client(robot, ImageClient)
    listed = {s.name: s for s in images.list_image_sources()}["hand_color_image"]
    shot = images.get_image([build_image_request(
        "hand_color_image", image_format=image_pb2.Image.FORMAT_RAW)])[0].shot.image
    assert (listed.cols, listed.rows) == (shot.cols, shot.rows)
    pixels = np.frombuffer(shot.data, np.uint8)
    assert pixels.size == shot.cols * shot.rows * 3
    return shot.cols, shot.rows, float(pixels.mean())


def test_gripper_camera_settings_change_the_hand_images(equipped_sim, equipped_robot):
    params = client(equipped_robot, GripperCameraParamClient)
    cols, rows, auto = _hand_image(equipped_robot)
    assert (cols, rows) == (640, 480)
    Params = gripper_camera_param_pb2.GripperCameraParams
    request = gripper_camera_param_pb2.GripperCameraParamRequest()
    request.params.camera_mode = Params.MODE_1280_720
    request.params.exposure_auto.value = False
    request.params.exposure_absolute.value = 0.05  # a fifth of what auto exposure chooses
    params.set_camera_params(request)
    cols, rows, dark = _hand_image(equipped_robot)
    assert (cols, rows) == (1280, 720)
    assert dark < 0.5 * auto
    request = gripper_camera_param_pb2.GripperCameraParamRequest()
    request.params.camera_mode = Params.MODE_4208_3120
    request.params.exposure_auto.value = True
    params.set_camera_params(request)
    cols, rows, bright = _hand_image(equipped_robot)
    assert (cols, rows) == (4208, 3120)
    assert bright == pytest.approx(auto, rel=0.1)
    request.params.camera_mode = Params.MODE_640_480
    params.set_camera_params(request)


def test_ir_enable_disable(sim, robot):
    ir = client(robot, IREnableDisableServiceClient)
    ir.set_ir_enabled(False)
    assert sim.ir.ir_enabled is False
    ir.set_ir_enabled(True)
    assert sim.ir.ir_enabled is True
    unknown = ir_enable_disable_pb2.IREnableDisableRequest()  # neither ON nor OFF
    with pytest.raises(sdk_errors.InvalidRequestError):
        ir.call(ir._stub.IREnableDisable, unknown, error_from_response=common_header_errors)
    assert sim.ir.ir_enabled is True  # a refused request changes nothing


def test_ray_cast_hits_the_floor_and_boxes(sim, robot):
    rays = client(robot, RayCastClient)
    Hit = ray_cast_pb2.RayIntersection
    down = rays.raycast((0, 0, 2), (0, 0, -1), [Hit.TYPE_GROUND_PLANE], frame_name="odom")
    assert down.hits[0].distance_meters == pytest.approx(2.0, abs=1e-4)
    # The red box spans x 2.2-2.8 at y 0.4-1.0, 0.8 m high: a ray along +x at y 0.7, z 0.4.
    box = rays.raycast((0, 0.7, 0.4), (1, 0, 0), [Hit.TYPE_VOXEL_MAP], frame_name="odom")
    assert box.hits[0].type == Hit.TYPE_VOXEL_MAP
    assert box.hits[0].hit_position_in_hit_frame.x == pytest.approx(2.2, abs=1e-3)
    body = rays.raycast((0, 0, 0), (0, 0, -1), [Hit.TYPE_GROUND_PLANE], frame_name="body")
    assert body.hit_frame_name == "body" and body.hits[0].distance_meters > 0.1
    with pytest.raises(RayCastUnknownFrameError):
        rays.raycast((0, 0, 0), (0, 0, -1), [Hit.TYPE_GROUND_PLANE], frame_name="no_such_frame")


def test_point_cloud_under_its_standard_name(sim, robot):
    clouds = client(robot, PointCloudClient)
    sources = [s.name for s in clouds.list_point_cloud_sources()]
    assert sources == ["velodyne-point-cloud"]
    (response,) = clouds.get_point_cloud_from_sources(sources)
    assert response.point_cloud.num_points > 1000
