"""Encode XYZ points the way Spot point-cloud sources do (ENCODING_XYZ_32F / 4SC / 5SC).

The packed encodings store, per axis, a signed byte ``p1`` and one base-``f`` digit of a shared
"extra" value ``x`` (one byte for 4SC, a little-endian 16-bit word for 5SC). A coordinate is
``(p1 * f + digit - f / 2) * m / (c * f)`` with ``m`` the half-size of the box the cloud lies in
and ``c`` the remapping constant (127), per bosdyn/api/point_cloud.proto.
"""

from dataclasses import dataclass

import numpy as np
from bosdyn.api import point_cloud_pb2

Encoding = point_cloud_pb2.PointCloud


@dataclass(frozen=True)
class PackedParameters:
    scale_factor: int
    max_xyz: tuple[float, float, float]
    remapping_constant: float = 127.0

    def to_proto(self, bytes_per_point: int) -> point_cloud_pb2.PointCloud.EncodingParameters:
        return point_cloud_pb2.PointCloud.EncodingParameters(
            scale_factor=self.scale_factor, max_x=self.max_xyz[0], max_y=self.max_xyz[1],
            max_z=self.max_xyz[2], remapping_constant=self.remapping_constant,
            bytes_per_point=bytes_per_point)


# 4SC: f^3 <= 256 leaves f = 5 (1 byte of extra); 5SC: f^3 < 2^16 allows f = 40.
DEFAULT_PARAMETERS = {
    Encoding.ENCODING_XYZ_4SC: PackedParameters(5, (20.0, 20.0, 5.0)),
    Encoding.ENCODING_XYZ_5SC: PackedParameters(40, (20.0, 20.0, 5.0)),
}


def encode(points: np.ndarray, encoding: int,
           parameters: PackedParameters | None = None) -> tuple[bytes, PackedParameters | None]:
    """Encode (N, 3) points; returns the data bytes and the parameters used (None for 32F)."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if encoding == Encoding.ENCODING_XYZ_32F:
        return points.astype("<f4").tobytes(), None
    if encoding not in DEFAULT_PARAMETERS:
        raise ValueError(f"unsupported encoding {encoding}")
    params = parameters or DEFAULT_PARAMETERS[encoding]
    f = params.scale_factor
    m = np.asarray(params.max_xyz)
    scaled = points / m * params.remapping_constant * f
    q = np.rint(scaled + f / 2).astype(np.int64)
    q = np.clip(q, -127 * f, 127 * f + f - 1)
    p1 = np.floor_divide(q, f)
    digits = q - p1 * f
    extra = digits[:, 0] + digits[:, 1] * f + digits[:, 2] * f * f
    if encoding == Encoding.ENCODING_XYZ_4SC:
        out = np.empty((len(points), 4), dtype=np.uint8)
        out[:, :3] = p1.astype(np.int8).view(np.uint8)
        out[:, 3] = extra.astype(np.uint8)
    else:
        out = np.empty((len(points), 5), dtype=np.uint8)
        out[:, :3] = p1.astype(np.int8).view(np.uint8)
        out[:, 3:5] = extra.astype("<u2").view(np.uint8).reshape(-1, 2)
    return out.tobytes(), params


def bytes_per_point(encoding: int) -> int:
    return {Encoding.ENCODING_XYZ_32F: 12, Encoding.ENCODING_XYZ_4SC: 4,
            Encoding.ENCODING_XYZ_5SC: 5}[encoding]
