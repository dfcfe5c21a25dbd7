"""The Spot CAM's speaker, LEDs, compositor and media log as ROS services; its health on
/diagnostics."""

from pathlib import Path

from bosdyn.client.spot_cam.health import HealthClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import Image
from std_msgs.msg import Header

from spot_driver.conversions.time import robot_stamp_to_msg
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import CommandError, describe
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork
from spot_driver.nodes.triggers import answer_callback
from spot_driver.spot_cam import health, stills
from spot_driver.spot_cam.audio import Audio
from spot_driver.spot_cam.clients import NoSpotCamError, PollGate, spot_cam_client
from spot_driver.spot_cam.compositor import Compositor
from spot_driver.spot_cam.lights import Lights
from spot_driver.spot_cam.media_log import MediaLog
from spot_msgs.srv import (
    DeleteLogpoint,
    DeleteSound,
    ListLogpoints,
    ListScreens,
    ListSounds,
    LoadSound,
    PlaySound,
    RetrieveLogpoint,
    SetIrColormap,
    SetIrMeterOverlay,
    SetLedBrightness,
    SetScreen,
    SetVolume,
    StoreLogpoint,
    TagLogpoint,
)


class SpotCamPayloadNode(PeriodicWork, Node):
    """``spot_cam/{list,load,play,delete}_sound(s)``, ``spot_cam/set_volume``,
    ``spot_cam/set_led_brightness``, ``spot_cam/{list,set}_screen(s)``,
    ``spot_cam/set_ir_colormap``, ``spot_cam/set_ir_meter_overlay``,
    ``spot_cam/{store,list,retrieve,tag,delete}_logpoint(s)`` and ``spot_cam/media_log/image``;
    the ``spot_cam`` status on /diagnostics."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_cam_payload", namespace=context.namespace)
        self.connection = context.connection
        self.audio, self.lights = Audio(context.connection), Lights(context.connection)
        self.media = MediaLog(context.connection)
        self.compositor = Compositor(context.connection)
        health_rate = declare(self, "spot_cam_health_rate", 0.5)
        self.frame = f"{declare(self, 'frame_prefix', '')}spot_cam"
        self._image_pub = self.create_publisher(Image, "spot_cam/media_log/image", qos.SENSOR)
        group = ReentrantCallbackGroup()
        for srv_type, name, fill in (
                (ListSounds, "list_sounds", self._list_sounds),
                (LoadSound, "load_sound", self._load_sound),
                (PlaySound, "play_sound", self._play_sound),
                (DeleteSound, "delete_sound", self._delete_sound),
                (SetVolume, "set_volume", self._set_volume),
                (SetLedBrightness, "set_led_brightness", self._set_leds),
                (ListScreens, "list_screens", self._list_screens),
                (SetScreen, "set_screen", self._set_screen),
                (SetIrColormap, "set_ir_colormap", self._set_colormap),
                (SetIrMeterOverlay, "set_ir_meter_overlay", self._set_meter),
                (StoreLogpoint, "store_logpoint", self._store),
                (ListLogpoints, "list_logpoints", self._list_logpoints),
                (RetrieveLogpoint, "retrieve_logpoint", self._retrieve),
                (TagLogpoint, "tag_logpoint", self._tag),
                (DeleteLogpoint, "delete_logpoint", self._delete_logpoint)):
            self.create_service(srv_type, f"spot_cam/{name}", answer_callback(
                self.get_logger(), f"spot_cam/{name}", fill), qos_profile=qos.SERVICES,
                callback_group=group)
        self._health, self._health_gate = None, PollGate()
        context.health.append(self.health_status)
        if health_rate > 0:
            self.every(1.0 / health_rate, self._read_health)

    # ------------------------------------------------------------------ audio and LEDs
    def _list_sounds(self, request, response) -> str:
        response.names, response.volume = self.audio.sounds()
        return f"{len(response.names)} sounds, volume {response.volume:g}%"

    def _load_sound(self, request, response) -> str:
        data = bytes(request.data)
        if not data:
            if not request.wav_file:
                raise CommandError("give the WAV as data or as wav_file")
            try:
                data = Path(request.wav_file).read_bytes()
            except OSError as exc:
                raise CommandError(f"cannot read wav_file {request.wav_file!r}: {exc.strerror}"
                                   ) from None
        seconds = self.audio.load(request.name, data)
        return f"loaded {request.name!r} ({seconds:.2f} s)"

    def _play_sound(self, request, response) -> str:
        self.audio.play(request.name, request.gain)
        return f"playing {request.name!r}"

    def _delete_sound(self, request, response) -> str:
        self.audio.delete(request.name)
        return f"deleted {request.name!r}"

    def _set_volume(self, request, response) -> str:
        self.audio.set_volume(request.percent)
        return f"volume {request.percent:g}%"

    def _set_leds(self, request, response) -> str:
        response.brightness = self.lights.set(list(request.leds), list(request.brightness))
        return f"LED brightness {list(response.brightness)}"

    # ------------------------------------------------------------------ compositor
    def _list_screens(self, request, response) -> str:
        response.screens, response.current = self.compositor.screens()
        return f"{len(response.screens)} screens, showing {response.current!r}"

    def _set_screen(self, request, response) -> str:
        self.compositor.set_screen(request.name)
        return f"showing {request.name!r}"

    def _set_colormap(self, request, response) -> str:
        self.compositor.set_colormap(request.colormap, request.auto_scale, request.min_celsius,
                                     request.max_celsius)
        return f"IR colour map {request.colormap}"

    def _set_meter(self, request, response) -> str:
        self.compositor.set_meter(request.enable, request.x, request.y)
        return f"IR meter {'on' if request.enable else 'off'} at ({request.x}, {request.y})"

    # ------------------------------------------------------------------ media log
    def _stamp(self, point):
        return robot_stamp_to_msg(point.timestamp, self.connection.skew_nsec)

    def _store(self, request, response) -> str:
        point = self.media.store(request.camera, request.tag)
        response.logpoint = stills.logpoint_msg(point, self._stamp(point))
        return f"storing {request.camera} as {point.name}"

    def _list_logpoints(self, request, response) -> str:
        response.logpoints = [stills.logpoint_msg(p, self._stamp(p)) for p in self.media.points()]
        return f"{len(response.logpoints)} logpoints"

    def _retrieve(self, request, response) -> str:
        point, data = self.media.retrieve(request.name, request.raw)
        try:
            still = stills.decode(point, data)
        except stills.StillError as exc:
            raise CommandError(f"logpoint {request.name!r}: {exc}") from None
        response.logpoint = stills.logpoint_msg(point, self._stamp(point))
        response.image = stills.image_msg(still, Header(stamp=response.logpoint.stamp,
                                                        frame_id=self.frame))
        self._image_pub.publish(response.image)
        if request.save_to:
            path = Path(request.save_to).with_suffix(still.suffix)
            try:
                path.write_bytes(stills.file_bytes(still, data))
            except OSError as exc:
                raise CommandError(f"cannot write {path}: {exc.strerror}") from None
            response.saved_path = str(path)
        return f"{point.name}: {response.image.width}x{response.image.height} " \
               f"{response.image.encoding}"

    def _tag(self, request, response) -> str:
        self.media.tag(request.name, request.tag)
        return f"{request.name} tagged {request.tag!r}"

    def _delete_logpoint(self, request, response) -> str:
        self.media.delete(request.name)
        return f"deleted {request.name}"

    # ------------------------------------------------------------------ health
    def _read_health(self) -> None:
        if not self._health_gate.open():
            return
        try:
            client = spot_cam_client(self.connection, HealthClient)
            events, degradations = client.get_bit_status()
            self._health = (client.get_temperature(), events, degradations)
        except NoSpotCamError as exc:
            self._health_gate.found_absent()
            self._health = describe(exc)
        except Exception as exc:
            self._health = describe(exc)

    def health_status(self, prefix: str, hardware_id: str):
        reading = self._health
        if reading is None:
            return health.not_yet(prefix, hardware_id)
        if isinstance(reading, str):
            return health.unreachable(prefix, hardware_id, reading)
        return health.health_status(prefix, hardware_id, *reading)
