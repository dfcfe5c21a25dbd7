"""The Spot CAM's media log: still images stored as logpoints, rendered after the request
returns (QUEUED, then COMPLETE), tagged, listed, retrieved and deleted.

Data as the SDK's Spot CAM program expects it: the panorama and IR as JPEG, the PTZ and ring
cameras as raw RGB24; IR's raw data is 16-bit big-endian centikelvin (ours: the radiometric
unit of common thermal cores). The scene, pose and PTZ are those at the time of the store.
"""

import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import simplejpeg
from bosdyn.api import image_pb2
from bosdyn.api.spot_cam import logging_pb2

from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.spot_cam.cameras import Camera, render_celsius, render_rgb

Logpoint = logging_pb2.Logpoint
Image = image_pb2.Image
KELVIN_OFFSET = 273.15


class MediaLogError(ValueError):
    """A logpoint request the Spot CAM refuses (unknown camera or logpoint, not ready)."""


@dataclass(frozen=True)
class Still:
    """One capture: the retrieved bytes and their format, and the raw bytes and theirs."""

    data: bytes
    data_format: int
    raw: bytes
    raw_format: int


def capture(scene, camera: Camera, odom_tform_body, ptz, colormap,
            colorize: Callable) -> Still:
    """Render ``camera``'s still as the media log stores it."""
    if camera.name == "ir":
        celsius = render_celsius(scene, camera, odom_tform_body, ptz)
        centikelvin = np.rint((celsius + KELVIN_OFFSET) * 100.0).astype(">u2")
        jpeg = simplejpeg.encode_jpeg(np.ascontiguousarray(colorize(celsius, colormap)), 90)
        return Still(jpeg, Image.PIXEL_FORMAT_RGB_U8, centikelvin.tobytes(),
                     Image.PIXEL_FORMAT_GREYSCALE_U16)
    rgb = np.ascontiguousarray(render_rgb(scene, camera, odom_tform_body, ptz))
    data = simplejpeg.encode_jpeg(rgb, 90) if camera.spherical else rgb.tobytes()
    return Still(data, Image.PIXEL_FORMAT_RGB_U8, data, Image.PIXEL_FORMAT_RGB_U8)


class _Entry:
    def __init__(self, point: Logpoint) -> None:
        self.point = point
        self.still: Still | None = None


class MediaLog:
    """The logpoints; stills are rendered one at a time by a worker thread."""

    def __init__(self) -> None:
        self._lock = OrderedLock("spot_cam media log", LEAF)
        self._entries: dict[str, _Entry] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="media-log")

    def store(self, camera: Camera, tag: str, stamp, calibration,
              render: Callable[[], Still]) -> Logpoint:
        """Queue a still of ``camera``; returns the QUEUED logpoint."""
        point = Logpoint(name=str(uuid.uuid4()), type=Logpoint.STILLIMAGE,
                         status=Logpoint.QUEUED, queue_status=Logpoint.QUEUED_RENDER, tag=tag)
        point.timestamp.CopyFrom(stamp)
        point.image_params.width, point.image_params.height = camera.cols, camera.rows
        point.image_params.format = Image.PIXEL_FORMAT_RGB_U8
        if calibration is not None:
            point.calibration.add().CopyFrom(calibration)
        with self._lock:
            self._entries[point.name] = _Entry(point)
        self._worker.submit(self._render, point.name, render)
        return _copy(point)

    def _render(self, name: str, render: Callable[[], Still]) -> None:
        try:
            still = render()
        except Exception:  # the logpoint fails as the robot's would
            still = None
        with self._lock:
            entry = self._entries.get(name)
            if entry is None:  # deleted while queued
                return
            entry.still = still
            entry.point.status = Logpoint.COMPLETE if still else Logpoint.FAILED
            entry.point.queue_status = Logpoint.QUEUED_UNKNOWN

    def _entry(self, name: str) -> _Entry:
        entry = self._entries.get(name)
        if entry is None:
            raise MediaLogError(f"no logpoint named {name!r}")
        return entry

    def status(self, name: str) -> Logpoint:
        with self._lock:
            return _copy(self._entry(name).point)

    def points(self) -> list[Logpoint]:
        with self._lock:
            return [_copy(entry.point) for entry in self._entries.values()]

    def tag(self, name: str, tag: str) -> None:
        with self._lock:
            self._entry(name).point.tag = tag

    def delete(self, name: str) -> None:
        with self._lock:
            self._entry(name)
            del self._entries[name]

    def retrieve(self, name: str, raw: bool) -> tuple[Logpoint, bytes]:
        """The logpoint (its image format that of the bytes) and its data or raw data."""
        with self._lock:
            entry = self._entry(name)
            if entry.point.status != Logpoint.COMPLETE or entry.still is None:
                state = Logpoint.LogStatus.Name(entry.point.status)
                raise MediaLogError(f"logpoint {name!r} is {state}, not COMPLETE")
            point, still = _copy(entry.point), entry.still
        point.image_params.format = still.raw_format if raw else still.data_format
        return point, still.raw if raw else still.data

    def close(self) -> None:
        self._worker.shutdown(wait=False, cancel_futures=True)


def _copy(point: Logpoint) -> Logpoint:
    copy = Logpoint()
    copy.CopyFrom(point)
    return copy
