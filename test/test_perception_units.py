"""Perception conversions against straightforward reference implementations (hypothesis),
and camera names turned into image sources."""

import struct

import numpy as np
import pytest
import simplejpeg
from bosdyn.api import (
    image_pb2,
    point_cloud_pb2,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import CompressedImage, Image, PointCloud2, PointField

from spot_driver.conversions import point_cloud, sensor_cdr
from spot_driver.perception import images
from spot_driver.perception.cameras import UnknownCameraError, camera_sources
from spot_driver.perception.node import TopicOutput
from spot_sim.perception import point_cloud_encoding

PC = point_cloud_pb2.PointCloud
PF = image_pb2.Image


# ------------------------------------------------------------------ point clouds
def reference_decode_packed(data: bytes, bytes_per_point: int, f: int, m, c: float):
    """The formula of bosdyn/api/point_cloud.proto, one point and one axis at a time."""
    out = []
    for i in range(len(data) // bytes_per_point):
        chunk = data[i * bytes_per_point:(i + 1) * bytes_per_point]
        p1 = struct.unpack("<3b", chunk[:3])
        x = chunk[3] if bytes_per_point == 4 else struct.unpack("<H", chunk[3:5])[0]
        p2 = [(x % f) - f / 2, ((x // f) % f) - f / 2, ((x // (f * f)) % f) - f / 2]
        out.append([(p1[k] * f + p2[k]) * m[k] / (c * f) for k in range(3)])
    return np.array(out, dtype=np.float64).reshape(-1, 3)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([4, 5]), st.integers(0, 40), st.integers(1, 40),
       st.tuples(*[st.floats(0.5, 50.0)] * 3), st.floats(50.0, 200.0), st.data())
def test_packed_decoding_matches_the_reference(size, n, f, m, c, data):
    raw = data.draw(st.binary(min_size=n * size, max_size=n * size))
    fast = point_cloud.decode_packed(raw, size, f, m, c)
    slow = reference_decode_packed(raw, size, f, m, c)
    assert fast.dtype == np.float32 and fast.shape == (n, 3)
    np.testing.assert_allclose(fast, slow, rtol=1e-5, atol=1e-5 * max(m))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([PC.ENCODING_XYZ_4SC, PC.ENCODING_XYZ_5SC]),
       st.lists(st.tuples(st.floats(-19.9, 19.9), st.floats(-19.9, 19.9),
                          st.floats(-4.9, 4.9)), min_size=1, max_size=200))
def test_packed_round_trip_is_within_the_encoding_resolution(encoding, points):
    points = np.array(points)
    data, params = point_cloud_encoding.encode(points, encoding)
    cloud = PC(num_points=len(points), encoding=encoding, data=data)
    cloud.encoding_parameters.CopyFrom(
        params.to_proto(point_cloud_encoding.bytes_per_point(encoding)))
    decoded = point_cloud.decode_xyz(cloud)
    resolution = np.array(params.max_xyz) / (params.remapping_constant * params.scale_factor)
    assert np.all(np.abs(decoded - points) <= resolution * 0.5 + 1e-4)


def test_xyz_32f_and_bad_clouds():
    xyz = np.arange(12, dtype=np.float32).reshape(4, 3)
    cloud = PC(num_points=4, encoding=PC.ENCODING_XYZ_32F, data=xyz.tobytes())
    np.testing.assert_array_equal(point_cloud.decode_xyz(cloud), xyz)
    with pytest.raises(point_cloud.PointCloudDecodeError, match="expected 48"):
        point_cloud.decode_xyz(PC(num_points=4, encoding=PC.ENCODING_XYZ_32F,
                                  data=xyz.tobytes()[:-1]))
    with pytest.raises(point_cloud.PointCloudDecodeError, match="unsupported"):
        point_cloud.decode_xyz(PC(num_points=0, encoding=PC.ENCODING_UNKNOWN))
    bad = PC(num_points=1, encoding=PC.ENCODING_XYZ_4SC, data=b"\x00" * 4)
    with pytest.raises(point_cloud.PointCloudDecodeError, match="scale_factor"):
        point_cloud.decode_xyz(bad)


# ------------------------------------------------------------------ images
@settings(max_examples=40, deadline=None)
@given(st.sampled_from(list(images.PIXEL_LAYOUTS)), st.integers(1, 20), st.integers(1, 20),
       st.data())
def test_raw_decoding_matches_reference(pixel_format, cols, rows, data):
    layout = images.PIXEL_LAYOUTS[pixel_format]
    size = cols * rows * layout.channels * layout.dtype.itemsize
    raw = data.draw(st.binary(min_size=size, max_size=size))
    image = PF(cols=cols, rows=rows, format=PF.FORMAT_RAW, pixel_format=pixel_format, data=raw)
    pixels = images.decode_pixels(image)
    for r in range(rows):
        for col in range(cols):
            for ch in range(layout.channels):
                offset = ((r * cols + col) * layout.channels + ch) * layout.dtype.itemsize
                expected = int.from_bytes(raw[offset:offset + layout.dtype.itemsize], "little")
                assert pixels[r, col, ch] == expected
    assert images.row_step(image) == cols * layout.channels * layout.dtype.itemsize
    with pytest.raises(images.ImageDecodeError, match="truncated"):
        images.raw_bytes(PF(cols=cols, rows=rows, format=PF.FORMAT_RAW,
                            pixel_format=pixel_format, data=raw[:-1]))


@pytest.mark.parametrize("pixel_format,space", [(PF.PIXEL_FORMAT_GREYSCALE_U8, "GRAY"),
                                                (PF.PIXEL_FORMAT_RGB_U8, "RGB")])
def test_jpeg_decoding_and_corrupt_jpeg(pixel_format, space):
    channels = 1 if space == "GRAY" else 3
    pixels = np.tile(np.arange(64, dtype=np.uint8)[None, :, None] * 3, (48, 1, channels))
    jpeg = simplejpeg.encode_jpeg(np.ascontiguousarray(pixels), 95, colorspace=space)
    image = PF(cols=64, rows=48, format=PF.FORMAT_JPEG, pixel_format=pixel_format, data=jpeg)
    decoded = images.decode_pixels(image)
    assert decoded.shape == (48, 64, channels)
    assert np.abs(decoded.astype(int) - pixels).max() <= 8
    image.data = bytes(16) + jpeg[16:]
    with pytest.raises(images.ImageDecodeError, match="corrupt JPEG"):
        images.decode_pixels(image)
    image.data, image.cols = jpeg, 65
    with pytest.raises(images.ImageDecodeError, match="header says"):
        images.decode_pixels(image)
    assert images.compressed_format(pixel_format).endswith("jpeg compressed " +
                                                           ("mono8" if channels == 1 else "rgb8"))


def _source(cols, rows, fx, fy, cx, cy):
    source = image_pb2.ImageSource(name="s", cols=cols, rows=rows, depth_scale=1000.0)
    i = source.pinhole.intrinsics
    i.focal_length.x, i.focal_length.y = fx, fy
    i.principal_point.x, i.principal_point.y = cx, cy
    return source


# ROS strings are UTF-8 without NUL: no surrogates, no "\x00".
ros_text = st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)),
                   max_size=30)
intrinsics = st.tuples(st.integers(1, 30), st.integers(1, 30), st.floats(50, 800),
                       st.floats(50, 800), st.floats(-10, 40), st.floats(-10, 40))


@settings(max_examples=60, deadline=None)
@given(intrinsics, st.data())
def test_depth_to_points_matches_per_pixel_reference(model, data):
    cols, rows, fx, fy, cx, cy = model
    depth = np.array(data.draw(st.lists(st.integers(0, 65535), min_size=cols * rows,
                                        max_size=cols * rows)), dtype=np.uint16)
    depth = depth.reshape(rows, cols)
    fast = images.PinholeRays.of_source(_source(*model)).points(depth, 1000.0)
    expected = []
    for v in range(rows):
        for u in range(cols):
            if depth[v, u]:
                z = depth[v, u] / 1000.0
                expected.append(((u - cx) / fx * z, (v - cy) / fy * z, z))
    expected = np.array(expected).reshape(-1, 3)
    assert fast.shape == expected.shape
    np.testing.assert_allclose(fast, expected, rtol=1e-5, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(intrinsics, ros_text)
def test_camera_info_from_pinhole_intrinsics(model, frame):
    cols, rows, fx, fy, cx, cy = model
    info = images.camera_info(_source(*model), frame, 1_500_000_001)
    assert (info.width, info.height, info.header.frame_id) == (cols, rows, frame)
    assert (info.header.stamp.sec, info.header.stamp.nanosec) == (1, 500_000_001)
    k = np.array(info.k).reshape(3, 3)
    np.testing.assert_allclose(k, [[fx, 0, cx], [0, fy, cy], [0, 0, 1]])
    np.testing.assert_allclose(np.array(info.p).reshape(3, 4)[:, :3], k)
    np.testing.assert_allclose(np.array(info.r).reshape(3, 3), np.eye(3))
    assert info.distortion_model == "plumb_bob" and list(info.d) == [0.0] * 5
    with pytest.raises(ValueError, match="no pinhole"):
        images.camera_info(image_pb2.ImageSource(name="x"), frame)


# ------------------------------------------------------------------ serialized messages
def _same_outside_padding(fast: bytes, msg) -> None:
    """Equal to rclpy's serialization except in alignment padding, which rclpy leaves
    uninitialised: padding precedes a 4-byte aligned field, so it is never at an aligned offset
    (CDR offsets count from the end of the 4-byte encapsulation header), and ours is zero."""
    slow = serialize_message(msg)
    assert len(fast) == len(slow)
    for i, (a, b) in enumerate(zip(fast, slow, strict=True)):
        if a != b:
            assert a == 0 and (i - 4) % 4 != 0, f"byte {i} differs outside padding"


stamps = st.integers(0, 2**31 * 10**9 - 1)


@settings(max_examples=60, deadline=None)
@given(stamps, ros_text, st.integers(0, 6), st.integers(0, 9),
       st.sampled_from(["mono8", "rgb8", "16UC1", "rgba8"]), st.data())
def test_image_cdr_equals_rclpy(stamp, frame, rows, cols, encoding, data):
    step = cols * {"mono8": 1, "rgb8": 3, "16UC1": 2, "rgba8": 4}[encoding]
    payload = data.draw(st.binary(min_size=rows * step, max_size=rows * step))
    fast = sensor_cdr.image_cdr(stamp, frame, rows, cols, encoding, step, payload)
    msg = Image(height=rows, width=cols, encoding=encoding, step=step, data=payload)
    msg.header.frame_id = frame
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
    _same_outside_padding(fast, msg)
    assert deserialize_message(fast, Image) == msg


@settings(max_examples=60, deadline=None)
@given(stamps, ros_text, ros_text, st.binary(max_size=300))
def test_compressed_image_cdr_equals_rclpy(stamp, frame, fmt, payload):
    fast = sensor_cdr.compressed_image_cdr(stamp, frame, fmt, payload)
    msg = CompressedImage(format=fmt, data=payload)
    msg.header.frame_id = frame
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
    _same_outside_padding(fast, msg)
    assert deserialize_message(fast, CompressedImage) == msg


@settings(max_examples=60, deadline=None)
@given(stamps, ros_text,
       st.lists(st.tuples(*[st.floats(-1e6, 1e6, width=32)] * 3), max_size=50))
def test_point_cloud2_cdr_equals_rclpy(stamp, frame, points):
    xyz = np.array(points, dtype=np.float32).reshape(-1, 3)
    fast = sensor_cdr.point_cloud2_cdr(stamp, frame, xyz)
    msg = PointCloud2(height=1, width=len(xyz), is_bigendian=False, point_step=12,
                      row_step=12 * len(xyz), data=xyz.tobytes(), is_dense=True)
    msg.fields = [PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32, count=1)
                  for i, n in enumerate("xyz")]
    msg.header.frame_id = frame
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 10**9)
    _same_outside_padding(fast, msg)
    assert deserialize_message(fast, PointCloud2) == msg


def test_xyzrgb_points_from_registered_depth_and_its_image():
    """Each valid depth pixel becomes a point coloured by the image pixel at the same place
    (grey replicated to RGB), packed 0x00RRGGBB in a float32 field as depth_image_proc's
    XYZRGB clouds; an image of another size than its depth is refused."""
    rays = images.PinholeRays(3, 2, fx=1.0, fy=1.0, cx=1.0, cy=0.5)
    depth = np.array([[0, 1000, 2000], [500, 0, 0]], dtype=np.uint16)
    rgb = np.arange(18, dtype=np.uint8).reshape(2, 3, 3)
    xyz, colours = rays.colored_points(depth, 1000.0, rgb)
    np.testing.assert_allclose(xyz, [[0.0, -0.5, 1.0], [2.0, -1.0, 2.0], [-0.5, 0.25, 0.5]])
    assert colours.tolist() == [[3, 4, 5], [6, 7, 8], [9, 10, 11]]
    grey = np.array([[[7], [8], [9]], [[10], [11], [12]]], dtype=np.uint8)
    assert rays.colored_points(depth, 1000.0, grey)[1].tolist() == [[8] * 3, [9] * 3, [10] * 3]
    with pytest.raises(images.ImageDecodeError, match="registered depth 3x2"):
        rays.colored_points(depth, 1000.0, np.zeros((4, 3, 3), dtype=np.uint8))
    msg = deserialize_message(sensor_cdr.point_cloud2_cdr(5, "frontleft_fisheye", xyz, colours),
                              PointCloud2)
    assert [(f.name, f.offset, f.datatype) for f in msg.fields] == [
        ("x", 0, PointField.FLOAT32), ("y", 4, PointField.FLOAT32),
        ("z", 8, PointField.FLOAT32), ("rgb", 12, PointField.FLOAT32)]
    assert (msg.point_step, msg.width, len(msg.data)) == (16, 3, 48)
    packed = np.frombuffer(bytes(msg.data), dtype="<u4").reshape(3, 4)[:, 3]
    assert packed.tolist() == [(3 << 16) | (4 << 8) | 5, (6 << 16) | (7 << 8) | 8,
                               (9 << 16) | (10 << 8) | 11]
    with pytest.raises(ValueError, match="2 colours for 3 points"):
        sensor_cdr.point_cloud2_cdr(5, "f", xyz, colours[:2])


def test_restamp_replaces_only_the_stamp():
    info = images.camera_info(_source(640, 480, 280, 280, 320, 240), "frontleft_fisheye")
    template = serialize_message(info)
    restamped = deserialize_message(sensor_cdr.restamp(template, 7 * 10**9 + 5), type(info))
    assert (restamped.header.stamp.sec, restamped.header.stamp.nanosec) == (7, 5)
    restamped.header.stamp = info.header.stamp
    assert restamped == info


def test_sensor_mounts_are_published_together_and_again_when_one_moves():
    """Each response's tree gives its sensor's mount; /tf_static gets all mounts in one
    message, again when a camera's calibration changes, not for repeats."""
    from bosdyn.client.math_helpers import Quat, SE3Pose

    from spot_driver.perception.extrinsics import WRIST_IN_IMAGES, SensorMounts
    from spot_sim import SimConfig
    from spot_sim.body.frame_tree import sensor_view
    from spot_sim.body.robot import SimRobot
    from spot_sim.core.clock import RobotClock

    robot = SimRobot(SimConfig(has_arm=True), RobotClock(0.0))
    robot.step()
    full = robot.transforms_snapshot()
    published: list = []
    mounts = SensorMounts("spot/", dict(WRIST_IN_IMAGES), published.append)
    robot_state_frames = {"body", "odom", "vision", "flat_body", "gpe", "hand", "link_wr1"}
    for sensor in ("frontleft_fisheye", "hand_color_image_sensor", "frontleft_fisheye"):
        mounts.update(sensor_view(full, sensor), sensor, robot_state_frames, None)
    assert len(published) == 2  # the repeat of frontleft_fisheye published nothing
    parents = {t.child_frame_id: t.header.frame_id for t in published[-1]}
    assert parents == {"spot/head": "spot/body", "spot/frontleft": "spot/head",
                       "spot/frontleft_fisheye": "spot/frontleft",
                       "spot/hand_color_image_sensor": "spot/link_wr1"}  # the alias
    moved = sensor_view(full, "frontleft_fisheye")
    edge = moved.child_to_parent_edge_map["frontleft"]
    edge.parent_tform_child.CopyFrom(SE3Pose(0.1, 0.0, 0.0, Quat()).to_proto())
    assert mounts.update(moved, "frontleft_fisheye", robot_state_frames, None)
    assert len(published) == 3 and len(published[-1]) == 4


def test_gripper_camera_settings_are_checked_and_read_back():
    from bosdyn.api import gripper_camera_param_pb2 as pb

    from spot_driver.core.errors import CommandError
    from spot_driver.perception import gripper_camera
    from spot_msgs.msg import GripperCameraParameters

    msg = GripperCameraParameters(camera_mode="1920x1080", exposure_auto=False,
                                  exposure_absolute=0.2, hdr="auto")
    params = gripper_camera.to_proto(msg, ["camera_mode", "exposure_auto",
                                           "exposure_absolute", "hdr"])
    assert params.camera_mode == pb.GripperCameraParams.MODE_1920_1080
    assert params.exposure_auto.value is False and params.hdr == pb.HDR_AUTO
    assert not params.HasField("brightness")  # not named: the robot keeps its own
    back = gripper_camera.from_proto(params)
    assert (back.camera_mode, back.exposure_auto, back.hdr) == ("1920x1080", False, "auto")
    assert back.focus_auto is True  # unset means on, as the robot documents
    for fields, bad, words in ((["gain"], {"gain": 1.5}, "gain 1.5 is outside [0, 1]"),
                               (["camera_mode"], {"camera_mode": "800x600"}, "not one of"),
                               (["zoom"], {}, "unknown gripper camera settings ['zoom']"),
                               ([], {}, "name the settings to change")):
        with pytest.raises(CommandError) as refused:
            gripper_camera.to_proto(GripperCameraParameters(**bad), fields)
        assert words in str(refused.value)


def test_the_simulated_gripper_camera_applies_what_is_set():
    import numpy as np
    from bosdyn.api import gripper_camera_param_pb2 as pb

    from spot_sim.perception.gripper_camera import GripperCamera, Look

    grey = np.arange(0, 250, 10, dtype=np.uint8)
    assert Look().apply(grey, None)[0] is grey  # defaults leave the image alone
    camera = GripperCamera()
    assert camera.size() == (640, 480) and camera.look() == Look()
    bad = pb.GripperCameraParams(camera_mode=pb.GripperCameraParams.MODE_1280_720)
    bad.contrast.value = -0.1
    assert camera.set(bad) == "contrast -0.1 is outside [0, 1]"
    assert camera.size() == (640, 480)  # refused whole
    dim = pb.GripperCameraParams()
    dim.exposure_auto.value = False
    dim.exposure_absolute.value = 0.125
    assert camera.set(dim) == ""
    darker = camera.look().apply(grey, None)[0]
    assert np.all(darker <= grey) and darker[-1] < grey[-1] * 0.6


def test_the_front_cameras_stitch_into_the_virtual_camera_between_them():
    """Two cameras posed as the simulated Spot's front pair look at a checkerboard on the
    stitching plane; the stitched image shows the board as the virtual camera would see it
    (nearest-neighbour: pixels on a cell border may differ), upright and covering nearly
    all of its frame."""
    from bosdyn.client.frame_helpers import get_a_tform_b

    from spot_driver.perception import stitching
    from spot_sim import SimConfig
    from spot_sim.body.robot import SimRobot
    from spot_sim.core.clock import RobotClock
    from spot_sim.perception.sources import VISUAL_MODEL

    m = VISUAL_MODEL
    robot = SimRobot(SimConfig(), RobotClock(0.0))
    robot.step()
    tree = robot.transforms_snapshot()
    poses = [get_a_tform_b(tree, "body", f"{c}_fisheye") for c in ("frontleft", "frontright")]
    camera = stitching.Pinhole(m.cols, m.rows, m.fx, m.fy, m.cx, m.cy)
    body_t_virtual = stitching.virtual_pose(*poses)
    assert abs(body_t_virtual.to_matrix()[2, 0]) < 1e-9  # its x axis is level: upright
    virtual = stitching.virtual_model(camera)
    stitcher = stitching.Stitcher(virtual, body_t_virtual, [(camera, p) for p in poses])
    assert stitcher.coverage > 0.95
    virtual_t_body = body_t_virtual.inverse().to_matrix()

    def checker(points_in_virtual: np.ndarray) -> np.ndarray:
        cells = np.floor(points_in_virtual[..., :2] / 0.1).astype(int)
        return (((cells[..., 0] + cells[..., 1]) % 2) * 200 + 20).astype(np.uint8)

    def render(body_t_camera) -> np.ndarray:
        """What a camera sees of the board on the plane z = 1 m of the virtual camera."""
        v, u = np.mgrid[0:m.rows, 0:m.cols].astype(float)
        rays = np.stack([(u - m.cx) / m.fx, (v - m.cy) / m.fy, np.ones_like(u)], axis=-1)
        to_virtual = virtual_t_body @ body_t_camera.to_matrix()
        origin = to_virtual[:3, 3]
        directions = rays @ to_virtual[:3, :3].T
        t = (stitching.PLANE_DISTANCE_M - origin[2]) / directions[..., 2]
        return checker(origin + directions * t[..., None])[..., None]

    stitched = stitcher.stitch([render(p) for p in poses])[..., 0]
    v, u = np.mgrid[0:virtual.rows, 0:virtual.cols].astype(float)
    seen = np.stack([(u - virtual.cx) / virtual.fx, (v - virtual.cy) / virtual.fy], axis=-1)
    expected = checker(seen * stitching.PLANE_DISTANCE_M)
    covered = stitcher.source.reshape(virtual.rows, virtual.cols) >= 0
    assert np.mean(stitched[covered] == expected[covered]) > 0.97
    assert (stitched[~covered] == 0).all()
    with pytest.raises(ValueError, match="image 0 is 320x240"):
        stitcher.stitch([np.zeros((240, 320, 1), np.uint8)] * 2)


def test_camera_sources_by_name():
    front = camera_sources("frontleft")
    assert (front.visual, front.depth) == ("frontleft_fisheye_image", "frontleft_depth")
    assert camera_sources("hand", color=True).visual == "hand_color_image"
    assert camera_sources("hand").visual == "hand_image"
    with pytest.raises(UnknownCameraError, match="unknown camera 'nosuch'; Spot's cameras are"):
        camera_sources("nosuch")


class _Writer:
    """A publisher as TopicOutput sees one: its readers, and whether they acknowledged all."""

    def __init__(self, readers: int, acked: bool) -> None:
        self.readers, self.acked, self.sent = readers, acked, []

    def get_subscription_count(self) -> int:
        return self.readers

    def wait_for_all_acked(self, _timeout) -> bool:
        return self.acked

    def publish(self, data: bytes) -> None:
        self.sent.append(data)


def test_a_paced_output_is_not_fetched_while_its_reader_has_not_acknowledged():
    writer = _Writer(readers=1, acked=False)
    paced = TopicOutput(writer, lazy=True, pace=True)
    assert not paced.wanted()  # the robot is not asked for a frame nobody could receive
    paced.publish(b"fetched before")  # one already fetched is dropped and counted
    assert (writer.sent, paced.dropped) == ([], 1)
    writer.acked = True
    assert paced.wanted()
    paced.publish(b"frame")
    assert (writer.sent, paced.dropped) == ([b"frame"], 1)
    writer.readers = 0
    assert not paced.wanted()  # lazy: nobody subscribed
    unpaced = TopicOutput(_Writer(readers=1, acked=False), lazy=True)
    assert unpaced.wanted()  # without pacing an unacknowledged reader changes nothing
