"""The cameras' and the lidar's pictures of the scene from a sensor pose: pixels, their JPEG or
raw bytes, and the lidar's points in an encoding. Pure computation with a small cache of ray
casts; not thread-safe (a caller renders one at a time: ``render_pool.py``)."""

from collections import OrderedDict
from dataclasses import replace

import numpy as np
import simplejpeg
from bosdyn.api import image_pb2
from bosdyn.client.math_helpers import Quat

from spot_sim.perception import point_cloud_encoding
from spot_sim.perception.gripper_camera import MAX_RENDER_COLS, Look
from spot_sim.perception.scene import NOTHING, Scene
from spot_sim.perception.sources import DEPTH_SCALE, VISUAL, CameraSource, Pinhole

Image = image_pb2.Image
MAX_DEPTH_M = 10.0
Pose = tuple[float, float, float, float, float, float, float]  # x, y, z, qw, qx, qy, qz


class Lru(OrderedDict):
    """A dict that forgets its oldest entry beyond ``size``."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key, value) -> None:
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)


def lidar_rays(beams: int = 16, columns: int = 1800) -> np.ndarray:
    """Unit directions of a 16-beam spinning lidar (+/-15 deg, 0.2 deg steps), sensor frame."""
    elevation = np.deg2rad(np.linspace(-15.0, 15.0, beams))
    azimuth = np.linspace(-np.pi, np.pi, columns, endpoint=False)
    az, el = np.meshgrid(azimuth, elevation)
    return np.stack([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)],
                    axis=-1).reshape(-1, 3)


def _rotation(pose: Pose) -> np.ndarray:
    return Quat(*pose[3:]).to_matrix()


class Renderer:
    """Renders ``scene`` as the robot's sensors see it."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self._noises: dict[int, np.ndarray] = {}
        self._casts = Lru(32)
        self._rays = lidar_rays()

    def encoded(self, source: CameraSource, pose: Pose, pixel_format: int, look: Look,
                quality: int | None) -> bytes:
        """The image's data: JPEG at ``quality`` percent, or raw pixels when None."""
        pixels = self.pixels(source, pose, pixel_format, look)
        if quality is None:
            return pixels.tobytes()
        if pixel_format == Image.PIXEL_FORMAT_GREYSCALE_U8:
            return simplejpeg.encode_jpeg(pixels[..., None], quality, colorspace="GRAY")
        space = "RGBA" if pixel_format == Image.PIXEL_FORMAT_RGBA_U8 else "RGB"
        return simplejpeg.encode_jpeg(np.ascontiguousarray(pixels), quality, colorspace=space)

    def pixels(self, source: CameraSource, pose: Pose, pixel_format: int,
               look: Look) -> np.ndarray:
        """The source's image (rows, cols[, channels]) in ``pixel_format``, at most
        MAX_RENDER_COLS wide rendered: larger images are scaled up from that."""
        model = source.model
        if model.cols <= MAX_RENDER_COLS:
            return self._render(source, pose, pixel_format, look)
        rows = round(model.rows * MAX_RENDER_COLS / model.cols)
        small = replace(source, model=model.resized(MAX_RENDER_COLS, rows))
        pixels = self._render(small, pose, pixel_format, look)
        row_index = np.arange(model.rows) * rows // model.rows
        col_index = np.arange(model.cols) * MAX_RENDER_COLS // model.cols
        return np.ascontiguousarray(pixels[row_index][:, col_index])

    def lidar(self, pose: Pose, encoding: int, max_range: float = 30.0
              ) -> tuple[np.ndarray, bytes, point_cloud_encoding.PackedParameters | None]:
        """(N, 3) float32 returns in the sensor frame (beams with no return dropped), and
        their data and parameters in ``encoding``."""
        origin = np.array(pose[:3])
        t, surface = self.scene.raycast(origin, self._rays @ _rotation(pose).T, max_range)
        hit = surface != NOTHING
        points = (self._rays[hit] * t[hit, None]).astype(np.float32)
        return (points, *point_cloud_encoding.encode(points, encoding))

    def _cast(self, model: Pinhole, pose: Pose):
        key = (model, pose)
        if key not in self._casts:
            xs, ys = model.axes()
            origin = np.array(pose[:3])
            t, surface, world = self.scene.raycast_grid(origin, _rotation(pose), xs, ys,
                                                        MAX_DEPTH_M * 4)
            self._casts.put(key, (t.ravel(), surface.ravel(), origin, world.reshape(3, -1)))
        return self._casts[key]

    def _noise(self, size: int) -> np.ndarray:
        """Fixed per-pixel sensor noise (+/-6 grey levels): realistic JPEG sizes."""
        noise = self._noises.get(size)
        if noise is None:
            noise = self._noises[size] = np.random.default_rng(size).integers(
                -6, 7, size, dtype=np.int16)
        return noise

    def _render(self, source: CameraSource, pose: Pose, pixel_format: int,
                look: Look) -> np.ndarray:
        t, surface, origin, directions = self._cast(source.model, pose)
        shape = (source.model.rows, source.model.cols)
        if source.kind != VISUAL:
            depth = np.minimum(t, MAX_DEPTH_M) * (t <= MAX_DEPTH_M)  # 0: beyond, or nothing
            return np.rint(depth * np.float32(DEPTH_SCALE)).astype(np.uint16).reshape(shape)
        grey = self.scene.shade(surface, origin, directions, t)
        grey = np.clip(grey.astype(np.int16) + self._noise(len(grey)), 0, 255).astype(np.uint8)
        grey_sensor = source.native_format == Image.PIXEL_FORMAT_GREYSCALE_U8
        if pixel_format == Image.PIXEL_FORMAT_GREYSCALE_U8 and grey_sensor:
            return look.apply(grey, None)[0].reshape(shape)
        if grey_sensor:
            rgb = np.repeat(look.apply(grey, None)[0][:, None], 3, axis=1)
        else:
            rgb = look.apply(grey, self.scene.colorize(surface, grey))[1]
        if pixel_format == Image.PIXEL_FORMAT_GREYSCALE_U8:
            luma = rgb.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
            return np.rint(luma).astype(np.uint8).reshape(shape)
        if pixel_format == Image.PIXEL_FORMAT_RGBA_U8:
            alpha = np.full((len(rgb), 1), 255, np.uint8)
            return np.concatenate([rgb, alpha], axis=1).reshape((*shape, 4))
        return rgb.reshape((*shape, 3))
