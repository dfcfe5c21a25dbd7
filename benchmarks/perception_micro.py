"""Throughput of each perception conversion next to a memcpy of the same bytes, same run.

Reading a protobuf bytes field (``image.data``) copies it (upb), so converting an Image proto
costs at least two copies; ``*_bytes_to_image_cdr`` is the conversion from bytes in hand.
Inputs are real simulator output (a 640x480 greyscale camera, a 424x240 depth image, a JPEG)
and synthetic 100k-point clouds. Writes benchmarks/results/perception_micro.json.
"""

import json
import statistics
import time

import _results
import numpy as np
from bosdyn.api import image_pb2, point_cloud_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose
from rclpy.serialization import serialize_message
from sensor_msgs.msg import Image as ImageMsg

from spot_driver.conversions import point_cloud, sensor_cdr
from spot_driver.perception import images
from spot_sim.perception import point_cloud_encoding
from spot_sim.perception.sensors import Sensors

Image = image_pb2.Image
PC = point_cloud_pb2.PointCloud
STAMP = 1_790_000_000_123_456_789
ROUNDS, BATCH_S = 9, 0.05  # alternated rounds of about 50 ms batches


def _calls_for(fn, seconds: float) -> int:
    """How many calls of ``fn`` take about ``seconds`` (after one warm-up call)."""
    fn()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        calls += 1
    return max(calls, 1)


def _batch_us(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def memcpy_floor(nbytes: int):
    """The floor: copy ``nbytes`` into a new bytes object, as every conversion's output and
    protobuf's bytes-field read are (the same allocation, page faults and copy as the code
    under test, not a reused hot buffer): a slice that drops 16 bytes (alignment kept), which
    CPython copies."""
    src = np.random.default_rng(0).integers(0, 255, nbytes + 16, dtype=np.uint8).tobytes()
    return lambda: src[16:]


def against_floor(fn, floor, rounds: int = ROUNDS) -> tuple[float, float, float]:
    """(µs per call, floor µs, ratio): batches of ``fn`` and of ``floor`` alternated for
    ``rounds`` rounds (machine-speed drift hits both alike); medians, the ratio the median of
    the per-round ratios."""
    fn_calls, floor_calls = _calls_for(fn, BATCH_S), _calls_for(floor, BATCH_S)
    ours, floors = [], []
    for _ in range(rounds):
        ours.append(_batch_us(fn, fn_calls))
        floors.append(_batch_us(floor, floor_calls))
    ratios = [a / b for a, b in zip(ours, floors, strict=True)]
    return statistics.median(ours), statistics.median(floors), statistics.median(ratios)


def camera_inputs():
    sensors = Sensors(has_arm=False, color=False, render_workers=0)  # the render itself
    pose = SE3Pose(0.5, 0.0, 0.55, Quat.from_pitch(0.35))
    visual = sensors.sources["frontleft_fisheye_image"]
    depth = sensors.sources["frontleft_depth"]
    raw = sensors.image(image_pb2.ImageRequest(image_source_name=visual.name,
                                               image_format=Image.FORMAT_RAW), pose)
    jpeg = sensors.image(image_pb2.ImageRequest(image_source_name=visual.name,
                                                image_format=Image.FORMAT_JPEG,
                                                quality_percent=75), pose)
    depth_image = sensors.image(image_pb2.ImageRequest(image_source_name=depth.name,
                                                       image_format=Image.FORMAT_RAW), pose)
    return raw, jpeg, depth_image, depth.to_proto()


def cloud(encoding: int, n: int = 100_000) -> PC:
    points = np.random.default_rng(1).uniform([-19, -19, -4], [19, 19, 4], (n, 3))
    data, params = point_cloud_encoding.encode(points, encoding)
    out = PC(num_points=n, encoding=encoding, data=data)
    if params is not None:
        out.encoding_parameters.CopyFrom(
            params.to_proto(point_cloud_encoding.bytes_per_point(encoding)))
    return out


def rclpy_image_path(image: Image) -> bytes:
    """The message path for comparison: build sensor_msgs/Image then serialize it."""
    import array

    msg = ImageMsg(height=image.rows, width=image.cols, encoding="mono8", step=image.cols)
    msg.header.frame_id = "frontleft_fisheye"
    buf = array.array("B")
    buf.frombytes(image.data)
    msg.data = buf
    return serialize_message(msg)


def main() -> dict:
    raw, jpeg, depth, depth_source = camera_inputs()
    rays = images.PinholeRays.of_source(depth_source)
    depth_pixels = images.decode_pixels(depth)
    clouds = {name: cloud(enc) for name, enc in (("xyz_32f", PC.ENCODING_XYZ_32F),
                                                  ("xyz_4sc", PC.ENCODING_XYZ_4SC),
                                                  ("xyz_5sc", PC.ENCODING_XYZ_5SC))}
    response = image_pb2.GetImageResponse()
    response.image_responses.add().shot.image.CopyFrom(raw)
    response_bytes = response.SerializeToString()

    raw_data = raw.data
    cases = {
        "protobuf_bytes_field_read_640x480": (len(raw_data), lambda: raw.data),
        "raw_mono8_640x480_bytes_to_image_cdr": (
            len(raw_data), lambda: sensor_cdr.image_cdr(
                STAMP, "frontleft_fisheye", raw.rows, raw.cols, "mono8", raw.cols, raw_data)),
        "raw_mono8_640x480_to_image_cdr": (
            len(raw.data), lambda: sensor_cdr.image_cdr(
                STAMP, "frontleft_fisheye", raw.rows, raw.cols, "mono8",
                images.row_step(raw), images.raw_bytes(raw))),
        "depth_u16_424x240_to_image_cdr": (
            len(depth.data), lambda: sensor_cdr.image_cdr(
                STAMP, "frontleft", depth.rows, depth.cols, "16UC1", images.row_step(depth),
                images.raw_bytes(depth))),
        "jpeg_passthrough_to_compressed_cdr": (
            len(jpeg.data), lambda: sensor_cdr.compressed_image_cdr(
                STAMP, "frontleft_fisheye", "mono8; jpeg compressed mono8", jpeg.data)),
        "jpeg_decode_to_image_cdr": (
            len(raw.data), lambda: sensor_cdr.image_cdr(
                STAMP, "frontleft_fisheye", jpeg.rows, jpeg.cols, "mono8", jpeg.cols,
                memoryview(images.decode_pixels(jpeg)).cast("B"))),
        "depth_424x240_to_points": (
            len(depth.data), lambda: rays.points(depth_pixels, 1000.0)),
        "depth_424x240_to_pointcloud2_cdr": (
            len(depth.data), lambda: sensor_cdr.point_cloud2_cdr(
                STAMP, "frontleft", rays.points(images.decode_pixels(depth), 1000.0))),
        "cloud_100k_xyz_32f_to_pointcloud2_cdr": (
            len(clouds["xyz_32f"].data), lambda: sensor_cdr.point_cloud2_cdr(
                STAMP, "sensor", point_cloud.decode_xyz(clouds["xyz_32f"]))),
        "cloud_100k_xyz_4sc_decode": (
            len(clouds["xyz_4sc"].data), lambda: point_cloud.decode_xyz(clouds["xyz_4sc"])),
        "cloud_100k_xyz_5sc_decode": (
            len(clouds["xyz_5sc"].data), lambda: point_cloud.decode_xyz(clouds["xyz_5sc"])),
        "rclpy_message_path_raw_mono8_640x480": (len(raw.data), lambda: rclpy_image_path(raw)),
        "protobuf_parse_get_image_response_640x480": (
            len(response_bytes), lambda: image_pb2.GetImageResponse.FromString(response_bytes)),
    }
    results = {}
    for name, (nbytes, fn) in cases.items():
        us, copy, ratio = against_floor(fn, memcpy_floor(nbytes))
        results[name] = {"input_bytes": nbytes, "us_per_call": round(us, 1),
                         "memcpy_us": round(copy, 1), "x_memcpy": round(ratio, 2),
                         "mb_per_s": round(nbytes / us, 1)}
    output = {"results": results, "rounds": ROUNDS,
              "floor": "memcpy of the same number of bytes into a new bytes object, alternated "
                       "with the conversion; ratio = median of per-round ratios",
              "targets": {"raw_image_and_32f_cloud_x_memcpy_max": 2.0,
                          "xyz_4sc_100k_decode_us_max": 1000.0}}
    _results.write("perception_micro", output)
    return output


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
