"""The Spot CAM's cameras and how they see the simulated world.

``pano`` is the 360-degree panorama (equirectangular), ``c0``-``c4`` the five ring cameras
it is stitched from (72 degrees apart, c0 facing forward), ``ptz`` the mechanical
pan-tilt-zoom camera (its field of view narrows with zoom), ``ir`` the thermal camera that
moves with the PTZ. Names and the panorama's, PTZ's and IR's sizes follow the SDK's Spot CAM
programs; fields of view are ours (stated in the README), as is where the Spot CAM sits.
"""

import math
from dataclasses import dataclass

import numpy as np
from bosdyn.api.spot_cam import camera_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim.perception.scene import Scene
from spot_sim.spot_cam.ptz import Pose

MOUNT = (0.0, 0.0, 0.2)  # m: the pan/tilt centre in the body frame (ours)
PANO_RENDER = (1200, 600)  # the panorama is ray cast at this size, then scaled up
MAX_RANGE_M = 40.0
_OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])  # optical -> x fwd


@dataclass(frozen=True)
class Camera:
    """One camera: its name, size, horizontal field of view at zoom 1 (0 for the panorama)
    and the yaw of a fixed ring camera (degrees, counter-clockwise from forward)."""

    name: str
    cols: int
    rows: int
    hfov_deg: float
    yaw_deg: float = 0.0
    on_ptz: bool = False

    @property
    def spherical(self) -> bool:
        return self.hfov_deg == 0.0

    def focal(self, zoom: float = 1.0) -> float:
        """Focal length in pixels at ``zoom``."""
        return zoom * (self.cols / 2.0) / math.tan(math.radians(self.hfov_deg) / 2.0)

    def to_proto(self, zoom: float = 1.0) -> camera_pb2.Camera:
        out = camera_pb2.Camera(name=self.name, base_frame_name="body")
        out.resolution.x, out.resolution.y = self.cols, self.rows
        mount = mount_pose(self, Pose(0.0, 0.0, zoom))
        out.base_tform_sensor.CopyFrom(mount.to_proto())
        if self.spherical:
            out.spherical.min_angle.x, out.spherical.min_angle.y = -180.0, -90.0
            out.spherical.max_angle.x, out.spherical.max_angle.y = 180.0, 90.0
        else:
            f = self.focal(zoom)
            out.pinhole.focal_length.x = out.pinhole.focal_length.y = f
            out.pinhole.center_point.x = (self.cols - 1) / 2.0
            out.pinhole.center_point.y = (self.rows - 1) / 2.0
        return out


CAMERAS = {c.name: c for c in (
    Camera("pano", 4800, 2400, 0.0),
    *(Camera(f"c{i}", 1280, 960, 80.0, yaw_deg=72.0 * i) for i in range(5)),
    Camera("ptz", 1920, 1080, 63.7, on_ptz=True),
    Camera("ir", 640, 512, 50.0, on_ptz=True),
)}


def mount_pose(camera: Camera, ptz: Pose) -> SE3Pose:
    """body_tform_camera: the optical frame (z forward) for a pinhole camera, x forward for
    the panorama. Pan turns clockwise seen from above (ours), tilt up is positive."""
    yaw = math.radians(-ptz.pan if camera.on_ptz else camera.yaw_deg)
    pitch = math.radians(-ptz.tilt) if camera.on_ptz else 0.0
    turn = Quat.from_yaw(yaw) * Quat.from_pitch(pitch)
    if not camera.spherical:
        turn = turn * Quat.from_matrix(_OPTICAL)
    return SE3Pose(*MOUNT, turn)


def _directions(camera: Camera, ptz: Pose) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Camera-frame ray slopes for a pinhole camera: xs (cols), ys (rows), or the panorama's
    unit directions (3, N) at PANO_RENDER size."""
    if camera.spherical:
        cols, rows = PANO_RENDER
        azimuth = np.radians(180.0 - (np.arange(cols) + 0.5) * 360.0 / cols)
        elevation = np.radians(90.0 - (np.arange(rows) + 0.5) * 180.0 / rows)
        a, e = np.meshgrid(azimuth, elevation)
        return np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)]).reshape(3, -1)
    f = camera.focal(ptz.zoom if camera.on_ptz else 1.0)
    return ((np.arange(camera.cols) - (camera.cols - 1) / 2.0) / f,
            (np.arange(camera.rows) - (camera.rows - 1) / 2.0) / f)


def _cast(scene: Scene, camera: Camera, odom_tform_body: SE3Pose, ptz: Pose):
    """(t, surface, origin, odom directions (3, N)) of every pixel's ray."""
    odom_tform_camera = odom_tform_body * mount_pose(camera, ptz)
    origin = np.array([odom_tform_camera.x, odom_tform_camera.y, odom_tform_camera.z])
    rotation = odom_tform_camera.rotation.to_matrix()
    if camera.spherical:
        directions = rotation @ _directions(camera, ptz)
        t, surface = scene.raycast(origin, directions.T, MAX_RANGE_M)
        return t, surface, origin, directions
    xs, ys = _directions(camera, ptz)
    t, surface, directions = scene.raycast_grid(origin, rotation, xs, ys, MAX_RANGE_M)
    return t.ravel(), surface.ravel(), origin, directions.reshape(3, -1)


def _full_size(camera: Camera, pixels: np.ndarray) -> np.ndarray:
    if not camera.spherical:
        return pixels
    rows, cols = PANO_RENDER[1], PANO_RENDER[0]
    grid = pixels.reshape(rows, cols, *pixels.shape[1:])
    return np.repeat(np.repeat(grid, camera.rows // rows, axis=0), camera.cols // cols, axis=1)


def render_rgb(scene: Scene, camera: Camera, odom_tform_body: SE3Pose,
               ptz: Pose) -> np.ndarray:
    """The camera's colour image (rows, cols, 3) uint8 from the robot's pose."""
    t, surface, origin, directions = _cast(scene, camera, odom_tform_body, ptz)
    rgb = scene.colorize(surface, scene.shade(surface, origin, directions, t))
    return _full_size(camera, rgb).reshape(camera.rows, camera.cols, 3)


def render_celsius(scene: Scene, camera: Camera, odom_tform_body: SE3Pose,
                   ptz: Pose) -> np.ndarray:
    """What a thermal camera measures (rows, cols) float32 degrees C."""
    _, surface, _, _ = _cast(scene, camera, odom_tform_body, ptz)
    return _full_size(camera, scene.temperatures(surface)).reshape(camera.rows, camera.cols)
