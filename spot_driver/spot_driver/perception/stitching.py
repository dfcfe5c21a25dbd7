"""The two front cameras stitched into one image of a virtual camera between them (what
spot_ros2's image stitcher publishes as ``camera/frontmiddle_virtual/image``). Pure.

The virtual camera sits midway between the two cameras, upright, looking along their mean
optical axis (``virtual_pose``). Each of
its pixels looks at a plane ``plane_distance`` in front of it; the point seen there is
projected into each real camera, and the pixel is taken from the camera that sees it farthest
from its image border (nearest neighbour). The mapping depends only on the calibration, so it
is computed once and each frame is a gather.
"""

from dataclasses import dataclass

import numpy as np
from bosdyn.client.math_helpers import SE3Pose

VIRTUAL_FRAME = "frontmiddle_virtual"
PLANE_DISTANCE_M = 1.0  # spot_ros2's default virtual_camera_plane_distance


@dataclass(frozen=True)
class Pinhole:
    cols: int
    rows: int
    fx: float
    fy: float
    cx: float
    cy: float


def virtual_model(camera: Pinhole) -> Pinhole:
    """The virtual camera's model: a real camera's focal length over a frame 1.5 times as
    wide and 9/8 as tall [ours: it covers both front cameras' overlap and most of the rest]."""
    cols, rows = round(1.5 * camera.cols), round(1.125 * camera.rows)
    return Pinhole(cols, rows, camera.fx, camera.fy, (cols - 1) / 2, (rows - 1) / 2)


def virtual_pose(body_t_left: SE3Pose, body_t_right: SE3Pose) -> SE3Pose:
    """body_T_virtual camera (optical frame: z forward, x right, y down): midway between the
    two cameras, looking along their mean optical axis, upright (its x axis level)."""
    forward = sum(p.to_matrix()[:3, 2] for p in (body_t_left, body_t_right))
    z = forward / np.linalg.norm(forward)
    x = np.cross(z, [0.0, 0.0, 1.0])
    if np.linalg.norm(x) < 1e-6:
        raise ValueError("the cameras look straight up or down: no upright virtual camera")
    x /= np.linalg.norm(x)
    rotation = np.stack([x, np.cross(z, x), z], axis=1)
    pose = SE3Pose.from_matrix(np.vstack([np.column_stack(
        [rotation, [(body_t_left.x + body_t_right.x) / 2, (body_t_left.y + body_t_right.y) / 2,
                    (body_t_left.z + body_t_right.z) / 2]]), [0.0, 0.0, 0.0, 1.0]]))
    return pose


class Stitcher:
    """Maps two camera images (same channels) into the virtual camera's image.

    ``cameras``: (model, body_T_camera optical frame) for each source camera, in the order
    their images are given to ``stitch``."""

    def __init__(self, virtual: Pinhole, body_t_virtual: SE3Pose,
                 cameras: list[tuple[Pinhole, SE3Pose]],
                 plane_distance: float = PLANE_DISTANCE_M) -> None:
        if not plane_distance > 0:
            raise ValueError(f"plane_distance must be positive, not {plane_distance}")
        self.virtual, self.body_t_virtual = virtual, body_t_virtual
        self._shapes = [(m.rows, m.cols) for m, _ in cameras]
        v, u = np.mgrid[0:virtual.rows, 0:virtual.cols].astype(np.float64)
        on_plane = np.stack([(u - virtual.cx) / virtual.fx * plane_distance,
                             (v - virtual.cy) / virtual.fy * plane_distance,
                             np.full(u.shape, plane_distance)], axis=-1).reshape(-1, 3)
        in_body = _apply(body_t_virtual, on_plane)
        best_margin = np.full(len(in_body), -np.inf)
        self.source = np.full(len(in_body), -1, dtype=np.int8)
        self.index = np.zeros(len(in_body), dtype=np.int64)
        for number, (model, body_t_camera) in enumerate(cameras):
            p = _apply(body_t_camera.inverse(), in_body)
            z = p[:, 2]
            with np.errstate(divide="ignore", invalid="ignore"):
                cu = np.rint(model.fx * p[:, 0] / z + model.cx)
                cv = np.rint(model.fy * p[:, 1] / z + model.cy)
            inside = (z > 0) & (cu >= 0) & (cu < model.cols) & (cv >= 0) & (cv < model.rows)
            margin = np.where(inside, np.minimum.reduce(
                [cu, model.cols - 1 - cu, cv, model.rows - 1 - cv]), -np.inf)
            better = margin > best_margin
            self.source[better] = number
            self.index[better] = (cv[better] * model.cols + cu[better]).astype(np.int64)
            best_margin = np.maximum(best_margin, margin)

    @property
    def coverage(self) -> float:
        """The fraction of the virtual image some camera sees."""
        return float(np.mean(self.source >= 0))

    def stitch(self, images: list[np.ndarray]) -> np.ndarray:
        """The virtual image, (rows, cols, channels) like the inputs; black where no camera
        sees."""
        channels = images[0].shape[2] if images[0].ndim == 3 else 1
        out = np.zeros((self.virtual.rows * self.virtual.cols, channels), dtype=images[0].dtype)
        for number, image in enumerate(images):
            if image.shape[:2] != self._shapes[number]:
                raise ValueError(f"image {number} is {image.shape[1]}x{image.shape[0]}, its "
                                 f"camera {self._shapes[number][1]}x{self._shapes[number][0]}")
            chosen = self.source == number
            out[chosen] = image.reshape(-1, channels)[self.index[chosen]]
        return out.reshape(self.virtual.rows, self.virtual.cols, channels)


def _apply(pose: SE3Pose, points: np.ndarray) -> np.ndarray:
    matrix = pose.to_matrix()
    return points @ matrix[:3, :3].T + matrix[:3, 3]
