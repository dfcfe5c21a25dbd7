"""Spot point clouds (ENCODING_XYZ_32F / 4SC / 5SC) to (N, 3) float32 XYZ.

Packed encodings, per bosdyn/api/point_cloud.proto: each point has a signed byte ``p1`` per
axis and a shared "extra" value ``x`` (a byte for 4SC, a little-endian 16-bit word for 5SC)
whose base-``f`` digits refine each axis. A coordinate is
``(p1 * f + digit - f / 2) * m / (c * f)``, with ``f`` the scale factor, ``m`` the half-size
of the box the cloud lies in (max_x/y/z) and ``c`` the remapping constant.
"""

import numpy as np
from bosdyn.api import point_cloud_pb2

PointCloud = point_cloud_pb2.PointCloud
_BYTES_PER_POINT = {PointCloud.ENCODING_XYZ_32F: 12, PointCloud.ENCODING_XYZ_4SC: 4,
                    PointCloud.ENCODING_XYZ_5SC: 5}


class PointCloudDecodeError(ValueError):
    """A cloud whose data does not match its encoding and point count."""


def decode_xyz(cloud: point_cloud_pb2.PointCloud) -> np.ndarray:
    """(num_points, 3) float32 XYZ in the cloud's sensor frame."""
    encoding = cloud.encoding
    size = _BYTES_PER_POINT.get(encoding)
    if size is None:
        raise PointCloudDecodeError(f"unsupported point cloud encoding {encoding}")
    n = cloud.num_points
    if n < 0 or len(cloud.data) != n * size:
        raise PointCloudDecodeError(f"cloud of {n} points has {len(cloud.data)} bytes, expected "
                                    f"{n * size} for {PointCloud.Encoding.Name(encoding)}")
    if encoding == PointCloud.ENCODING_XYZ_32F:
        return np.frombuffer(cloud.data, dtype="<f4").reshape(n, 3)
    p = cloud.encoding_parameters
    return decode_packed(cloud.data, size, p.scale_factor, (p.max_x, p.max_y, p.max_z),
                         p.remapping_constant)


def decode_packed(data: bytes, bytes_per_point: int, scale_factor: int,
                  max_xyz: tuple[float, float, float], remapping_constant: float) -> np.ndarray:
    """Vectorised 4SC (4 bytes/point) or 5SC (5 bytes/point) decoding to (N, 3) float32."""
    f = int(scale_factor)
    if f <= 0 or remapping_constant <= 0:
        raise PointCloudDecodeError(f"invalid encoding parameters: scale_factor={scale_factor}, "
                                    f"remapping_constant={remapping_constant}")
    raw = np.frombuffer(data, dtype=np.uint8).reshape(-1, bytes_per_point)
    if bytes_per_point == 4:
        extra = raw[:, 3].astype(np.int32)
    else:
        extra = raw[:, 3].astype(np.int32) | (raw[:, 4].astype(np.int32) << 8)
    coarse = raw[:, :3].view(np.int8).astype(np.float32)
    digits = np.empty_like(coarse)
    np.remainder(extra, f, out=digits[:, 0], casting="unsafe")
    np.remainder(extra // f, f, out=digits[:, 1], casting="unsafe")
    np.remainder(extra // (f * f), f, out=digits[:, 2], casting="unsafe")
    scale = np.asarray(max_xyz, dtype=np.float32) / np.float32(remapping_constant * f)
    coarse *= np.float32(f)
    coarse += digits
    coarse -= np.float32(f / 2)
    coarse *= scale
    return coarse
