"""Spot point clouds (ENCODING_XYZ_32F / 4SC / 5SC) to (N, 3) float32 XYZ.

Packed encodings, per bosdyn/api/point_cloud.proto: each point has a signed byte ``p1`` per
axis and a shared "extra" value ``x`` (a byte for 4SC, a little-endian 16-bit word for 5SC)
whose base-``f`` digits refine each axis. A coordinate is
``(p1 * f + digit - f / 2) * m / (c * f)``, with ``f`` the scale factor, ``m`` the half-size
of the box the cloud lies in (max_x/y/z) and ``c`` the remapping constant.
"""

import functools

import numpy as np
from bosdyn.api import point_cloud_pb2

from spot_driver.conversions.robot_data import RobotDataError

PointCloud = point_cloud_pb2.PointCloud
_BYTES_PER_POINT = {PointCloud.ENCODING_XYZ_32F: 12, PointCloud.ENCODING_XYZ_4SC: 4,
                    PointCloud.ENCODING_XYZ_5SC: 5}


class PointCloudDecodeError(RobotDataError):
    """A cloud whose data does not match its encoding and point count."""


def decode_xyz(cloud: point_cloud_pb2.PointCloud) -> np.ndarray:
    """(num_points, 3) float32 XYZ in the cloud's sensor frame."""
    encoding = cloud.encoding
    size = _BYTES_PER_POINT.get(encoding)
    if size is None:
        raise PointCloudDecodeError(f"unsupported point cloud encoding {encoding}")
    n = cloud.num_points
    data = cloud.data  # reading a protobuf bytes field copies it: once
    if n < 0 or len(data) != n * size:
        raise PointCloudDecodeError(f"cloud of {n} points has {len(data)} bytes, expected "
                                    f"{n * size} for {PointCloud.Encoding.Name(encoding)}")
    if encoding == PointCloud.ENCODING_XYZ_32F:
        return np.frombuffer(data, dtype="<f4").reshape(n, 3)
    p = cloud.encoding_parameters
    return decode_packed(data, size, p.scale_factor, (p.max_x, p.max_y, p.max_z),
                         p.remapping_constant)


def decode_packed(data: bytes, bytes_per_point: int, scale_factor: int,
                  max_xyz: tuple[float, float, float], remapping_constant: float) -> np.ndarray:
    """Vectorised 4SC (4 bytes/point) or 5SC (5 bytes/point) decoding to (N, 3) float32.

    The fine part of every point depends only on its extra value, so it is looked up in a
    table of all 2^8 (4SC) or 2^16 (5SC) values; the coarse part is one multiply-add.
    """
    f = int(scale_factor)
    if f <= 0 or not remapping_constant > 0 or bytes_per_point not in (4, 5):
        raise PointCloudDecodeError(f"invalid encoding parameters: scale_factor={scale_factor}, "
                                    f"remapping_constant={remapping_constant}, "
                                    f"bytes_per_point={bytes_per_point}")
    raw = np.frombuffer(data, dtype=np.uint8).reshape(-1, bytes_per_point)
    scale = tuple(float(m) / (remapping_constant * f) for m in max_xyz)
    if bytes_per_point == 4:
        extra = raw[:, 3]
    else:
        extra = np.ascontiguousarray(raw[:, 3:5]).view("<u2")[:, 0]
    # Whole-array operations only: numpy is slow on (N, 3) strided views (an inner loop of 3).
    coarse = raw.view(np.int8).astype(np.float32) @ _coarse_matrix(f, bytes_per_point, scale)
    coarse += np.take(_fine_table(f, 8 * (bytes_per_point - 3), scale), extra, axis=0)
    return coarse


@functools.lru_cache(maxsize=16)
def _coarse_matrix(f: int, bytes_per_point: int, scale: tuple[float, float, float]) -> np.ndarray:
    """(bytes_per_point, 3) float32 mapping each point's signed bytes to p1 * f * scale."""
    matrix = np.zeros((bytes_per_point, 3), dtype=np.float32)
    matrix[[0, 1, 2], [0, 1, 2]] = np.float32(f) * np.asarray(scale, np.float32)
    return matrix


@functools.lru_cache(maxsize=16)
def _fine_table(f: int, bits: int, scale: tuple[float, float, float]) -> np.ndarray:
    """(2**bits, 3) float32: the metric offset (digit - f/2) * scale of every extra value."""
    x = np.arange(2**bits, dtype=np.int64)
    digits = np.stack([x % f, (x // f) % f, (x // (f * f)) % f], axis=1)
    return ((digits - f / 2) * np.asarray(scale)).astype(np.float32)
