"""spot-cam-image: the Spot CAM's cameras as an image service (``pano``, ``c0``-``c4``,
``ptz``, ``ir``), rendered from the simulated world at the robot's pose and the PTZ's
position. The PTZ's intrinsics follow its zoom. IR comes as a colourised view (RGB, JPEG or
raw) or as its radiometric image (GREYSCALE_U16 raw, centikelvin: ours, as the media log).

The robot's body cameras and the Spot CAM share one gRPC service type; the image servicer
answers by the authority a call was addressed to (``spot-cam-image.spot.robot``)."""

from collections import OrderedDict

import numpy as np
import simplejpeg
from bosdyn.api import image_pb2
from bosdyn.client.frame_helpers import get_a_tform_b

from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.perception.image_service import SPOT_CAM_AUTHORITY, ImageServicer
from spot_sim.spot_cam.cameras import CAMERAS, Camera, render_celsius, render_rgb
from spot_sim.spot_cam.compositor import colorize
from spot_sim.spot_cam.media_log import KELVIN_OFFSET

Image = image_pb2.Image
Response = image_pb2.ImageResponse
SERVICE = "spot-cam-image"


def image_source(camera: Camera, zoom: float) -> image_pb2.ImageSource:
    source = image_pb2.ImageSource(name=camera.name, cols=camera.cols, rows=camera.rows,
                                   image_type=image_pb2.ImageSource.IMAGE_TYPE_VISUAL)
    source.image_formats.extend([Image.FORMAT_JPEG, Image.FORMAT_RAW])
    source.pixel_formats.append(Image.PIXEL_FORMAT_RGB_U8)
    if camera.name == "ir":
        source.pixel_formats.append(Image.PIXEL_FORMAT_GREYSCALE_U16)
    if not camera.spherical:
        pinhole = camera.to_proto(zoom).pinhole
        intrinsics = source.pinhole.intrinsics
        intrinsics.focal_length.CopyFrom(pinhole.focal_length)
        intrinsics.principal_point.CopyFrom(pinhole.center_point)
    return source


class SpotCamImages:
    """The Spot CAM's image sources; the last few renders kept by pose (a still robot and
    PTZ are served from memory)."""

    def __init__(self, parts) -> None:
        self.clock, self.robot, self.scene = parts.clock, parts.robot, parts.sensors.scene
        self.heads, self.compositor = parts.spot_cam.heads, parts.spot_cam.compositor
        self._lock = OrderedLock("spot_cam renders", LEAF)
        self._renders: OrderedDict = OrderedDict()

    def _zoom(self) -> float:
        return self.heads.position("mech", self.clock.now_nsec()).zoom

    def sources(self) -> list[image_pb2.ImageSource]:
        zoom = self._zoom()
        return [image_source(c, zoom if c.on_ptz else 1.0) for c in CAMERAS.values()]

    def _render(self, camera: Camera, radiometric: bool) -> np.ndarray:
        ptz = self.heads.position("mech", self.clock.now_nsec())
        body = get_a_tform_b(self.robot.transforms_snapshot(), "odom", "body")
        key = (camera.name, radiometric, round(body.x, 4), round(body.y, 4), round(body.z, 4),
               tuple(round(q, 5) for q in (body.rot.w, body.rot.x, body.rot.y, body.rot.z)),
               round(ptz.pan, 3), round(ptz.tilt, 3), round(ptz.zoom, 3)) if camera.on_ptz \
            else (camera.name, radiometric, round(body.x, 4), round(body.y, 4))
        with self._lock:
            if key in self._renders:
                self._renders.move_to_end(key)
                return self._renders[key]
        if radiometric:
            pixels = render_celsius(self.scene, camera, body, ptz)
        elif camera.name == "ir":
            pixels = colorize(render_celsius(self.scene, camera, body, ptz),
                              self.compositor.colormap())
        else:
            pixels = render_rgb(self.scene, camera, body, ptz)
        with self._lock:
            self._renders[key] = pixels
            while len(self._renders) > 8:
                self._renders.popitem(last=False)
        return pixels

    def respond(self, request: image_pb2.ImageRequest, out: Response) -> None:
        """Fill one ImageResponse for ``request``."""
        camera = CAMERAS.get(request.image_source_name)
        if camera is None:
            out.status = Response.STATUS_UNKNOWN_CAMERA
            return
        pixel_format = request.pixel_format or Image.PIXEL_FORMAT_RGB_U8
        image_format = request.image_format or Image.FORMAT_JPEG
        radiometric = pixel_format == Image.PIXEL_FORMAT_GREYSCALE_U16
        if pixel_format not in (Image.PIXEL_FORMAT_RGB_U8, Image.PIXEL_FORMAT_GREYSCALE_U16) \
                or (radiometric and camera.name != "ir"):
            out.status = Response.STATUS_UNSUPPORTED_PIXEL_FORMAT_REQUESTED
            return
        if image_format not in (Image.FORMAT_JPEG, Image.FORMAT_RAW) or (
                radiometric and image_format != Image.FORMAT_RAW):
            out.status = Response.STATUS_UNSUPPORTED_IMAGE_FORMAT_REQUESTED
            return
        stamp = self.clock.timestamp()
        pixels = self._render(camera, radiometric)
        image = out.shot.image
        image.cols, image.rows = camera.cols, camera.rows
        image.format, image.pixel_format = image_format, pixel_format
        if radiometric:
            image.data = np.rint((pixels + KELVIN_OFFSET) * 100.0).astype("<u2").tobytes()
        elif image_format == Image.FORMAT_JPEG:
            quality = int(request.quality_percent) if request.quality_percent > 0 else 75
            image.data = simplejpeg.encode_jpeg(np.ascontiguousarray(pixels), quality)
        else:
            image.data = np.ascontiguousarray(pixels).tobytes()
        out.shot.acquisition_time.CopyFrom(stamp)
        out.shot.frame_name_image_sensor = "body"
        out.source.CopyFrom(image_source(camera, self._zoom() if camera.on_ptz else 1.0))
        out.status = Response.STATUS_OK


def spec() -> ServiceSpec:
    """A directory entry for the image servicer, answered by its authority."""
    return ServiceSpec(SERVICE, "bosdyn.api.ImageService", SPOT_CAM_AUTHORITY,
                       lambda servicer, server: None)


SERVICES = (Served(spec(), lambda parts: parts.servicer(ImageServicer).attach_spot_cam(
    SpotCamImages(parts)), hardware="spot_cam"),)
