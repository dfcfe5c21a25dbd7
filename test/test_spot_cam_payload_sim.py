"""The simulated Spot CAM beyond its PTZ, through the SDK's own Spot CAM clients: audio,
LEDs, power rails, health, compositor, stream settings, version and the media log, whose
stills are rendered from the simulated world (the PTZ view follows pan and zoom, IR reads the
hot object hotter); refusals change nothing. The SDK's Spot CAM program runs unmodified."""

import importlib.util
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from bosdyn.api import image_pb2
from bosdyn.api.spot_cam import (
    audio_pb2,
    camera_pb2,
    compositor_pb2,
    logging_pb2,
    network_pb2,
    ptz_pb2,
)
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.spot_cam.audio import AudioClient
from bosdyn.client.spot_cam.compositor import CompositorClient
from bosdyn.client.spot_cam.health import HealthClient
from bosdyn.client.spot_cam.lighting import LightingClient
from bosdyn.client.spot_cam.media_log import MediaLogClient
from bosdyn.client.spot_cam.network import NetworkClient
from bosdyn.client.spot_cam.power import PowerClient
from bosdyn.client.spot_cam.ptz import PtzClient
from bosdyn.client.spot_cam.streamquality import StreamQualityClient
from bosdyn.client.spot_cam.version import VersionClient
from test_spot_cam_sim import wait_for

from conftest import PASSWORD, USERNAME, connect, missing, running_sim, wav_bytes

Refused = sdk_errors.InvalidRequestError
MECH = ptz_pb2.PtzDescription(name="mech")
RED_BOX_CENTRE = (2.5, 0.7)  # the scene's hot red box (perception.scene), seen from the origin


@pytest.fixture(scope="module")
def spot(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs"), has_spot_cam=True) as sim:
        yield sim


@pytest.fixture(scope="module")
def robot(spot):
    robot = connect(spot)
    yield robot
    robot.time_sync.stop()


def client(robot, cls):
    return robot.ensure_client(cls.default_service_name)




# ---------------------------------------------------------------------------- audio
def test_a_loaded_sound_plays_and_bad_sounds_are_refused(spot, robot):
    audio = client(robot, AudioClient)
    speaker = spot.spot_cam.speaker
    audio.load_sound(audio_pb2.Sound(name="beep"), wav_bytes(0.5))
    assert "beep" in [s.name for s in audio.list_sounds()]
    audio.set_volume(80.0)
    audio.play_sound(audio_pb2.Sound(name="beep"), 0.5)
    played = speaker.played()[-1]
    assert (played.name, played.gain, played.volume) == ("beep", 0.5, 80.0)
    assert abs((played.end_ns - played.start_ns) / 1e9 - 0.5) < 0.01
    count = len(speaker.played())
    with pytest.raises(Refused, match="no sound named 'nope'"):
        audio.play_sound(audio_pb2.Sound(name="nope"))
    with pytest.raises(Refused, match="not a WAV file"):
        audio.load_sound(audio_pb2.Sound(name="junk"), b"not audio at all")
    with pytest.raises(Refused, match="volume"):
        audio.set_volume(150.0)
    with pytest.raises(Refused, match="gain"):
        audio.play_sound(audio_pb2.Sound(name="beep"), float("nan"))
    assert "junk" not in [s.name for s in audio.list_sounds()]
    assert audio.get_volume() == 80.0 and len(speaker.played()) == count
    audio.delete_sound(audio_pb2.Sound(name="beep"))
    with pytest.raises(Refused):
        audio.delete_sound(audio_pb2.Sound(name="beep"))


def test_audio_capture_channel_and_gain(robot):
    audio = client(robot, AudioClient)
    audio.set_audio_capture_channel(audio_pb2.AUDIO_CHANNEL_EXTERNAL_MIC)
    assert audio.get_audio_capture_channel() == audio_pb2.AUDIO_CHANNEL_EXTERNAL_MIC
    audio.set_audio_capture_gain(audio_pb2.AUDIO_CHANNEL_EXTERNAL_MIC, 0.8)
    assert audio.get_audio_capture_gain(audio_pb2.AUDIO_CHANNEL_EXTERNAL_MIC) == 0.8
    with pytest.raises(Refused):
        audio.set_audio_capture_gain(audio_pb2.AUDIO_CHANNEL_EXTERNAL_MIC, 2.0)
    with pytest.raises(Refused):
        audio.set_audio_capture_channel(audio_pb2.AUDIO_CHANNEL_UNKNOWN)
    assert audio.get_audio_capture_gain(audio_pb2.AUDIO_CHANNEL_EXTERNAL_MIC) == 0.8


# ---------------------------------------------------------------------------- LEDs, power
def test_leds_take_brightness_in_range_or_change_nothing(robot):
    lights = client(robot, LightingClient)
    lights.set_led_brightness([0.5, 0.0, 0.0, 1.0])
    assert lights.get_led_brightness() == [0.5, 0.0, 0.0, 1.0]
    for bad in ([1.5], [0.2, float("nan"), 0.3], [0.1, -0.1]):
        with pytest.raises(Refused):
            lights.set_led_brightness(bad)
    assert lights.get_led_brightness() == [0.5, 0.0, 0.0, 1.0]


def test_a_ptz_power_cycle_refuses_the_head_shows_in_health_and_comes_back(robot):
    """The SDK's PowerClient turns rails on or cycles them (it never sends "off")."""
    power, health = client(robot, PowerClient), client(robot, HealthClient)
    ptz = client(robot, PtzClient)
    health.clear_bit_events()
    warm = {t.channel_name: t.temperature for t in health.get_temperature()}
    assert all(20_000 < t < 70_000 for t in warm.values())  # millidegrees C
    assert not power.cycle_power(ptz=True).ptz.value  # off for 2 s
    with pytest.raises(Refused, match="powered off"):
        ptz.get_ptz_position(MECH)
    events, degradations = health.get_bit_status()
    assert [e.name for e in events] == ["ptz_power_off"]
    assert [d.type for d in degradations] == [degradations[0].PTZ]
    cool = {t.channel_name: t.temperature for t in health.get_temperature()}
    assert cool["ptz"] < warm["ptz"]
    health.clear_bit_events()
    assert health.get_bit_status()[0] == []
    assert b"ptz_power_off" in health.get_system_log()
    assert wait_for(lambda: power.get_power_status().ptz.value, 5.0)
    ptz.get_ptz_position(MECH)
    assert health.get_bit_status()[1] == []


# ---------------------------------------------------------------------------- compositor
def test_screens_and_their_visible_cameras(robot):
    compositor = client(robot, CompositorClient)
    names = [s.name for s in compositor.list_screens()]
    assert {"mech", "pano_full", "ir", "mech_ir"} <= set(names)
    compositor.set_screen("mech_ir")
    assert compositor.get_screen() == "mech_ir"
    assert [s.camera.name for s in compositor.get_visible_cameras()] == ["ptz", "ir"]
    with pytest.raises(Refused, match="unknown screen"):
        compositor.set_screen("nope")
    assert compositor.get_screen() == "mech_ir"


def test_ir_colormap_and_meter(robot):
    compositor = client(robot, CompositorClient)
    compositor.set_ir_colormap(compositor_pb2.IrColorMap.COLORMAP_INFERNO, 10.0, 70.0, False)
    colormap = compositor.get_ir_colormap()
    assert (colormap.colormap, colormap.scale.min, colormap.scale.max) == (
        compositor_pb2.IrColorMap.COLORMAP_INFERNO, 10.0, 70.0)
    with pytest.raises(Refused, match="not a range"):
        compositor.set_ir_colormap(compositor_pb2.IrColorMap.COLORMAP_JET, 50.0, 10.0, False)
    assert compositor.get_ir_colormap().colormap == compositor_pb2.IrColorMap.COLORMAP_INFERNO
    celsius = compositor_pb2.IrMeterOverlay.TempUnit(
        value=compositor_pb2.IrMeterOverlay.TempUnit.TEMPUNIT_CELSIUS)
    compositor.set_ir_meter_overlay(0.5, 0.5, True, celsius)
    assert compositor.get_ir_meter_overlay().overlay.enable
    with pytest.raises(Refused, match="outside the image"):
        compositor.set_ir_meter_overlay(1.5, 0.5, True, celsius)
    compositor.set_ir_colormap(compositor_pb2.IrColorMap.COLORMAP_JET, 0.0, 1.0, True)


# ---------------------------------------------------------------------------- stream, version
def test_stream_parameters_network_and_version(robot):
    quality = client(robot, StreamQualityClient)
    quality.set_stream_params(target_bitrate=3_000_000)
    got = quality.get_stream_params()
    assert got.targetbitrate.value == 3_000_000 and got.refreshinterval.value == 30
    with pytest.raises(Refused, match="bitrate"):
        quality.set_stream_params(target_bitrate=-5)
    assert quality.get_stream_params().targetbitrate.value == 3_000_000
    network = client(robot, NetworkClient)
    server = network_pb2.ICEServer(type=network_pb2.ICEServer.STUN, address="10.0.0.1",
                                   port=3478)
    network.set_ice_configuration([server])
    assert network.get_ice_configuration()[0].port == 3478
    with pytest.raises(Refused):
        network.set_ice_configuration([network_pb2.ICEServer(address="x", port=3478)])
    assert len(network.get_ice_configuration()) == 1
    assert client(robot, VersionClient).get_software_version().major_version >= 1


# ---------------------------------------------------------------------------- media log
def store(media, camera: str, tag: str = "") -> logging_pb2.Logpoint:
    point = media.store(camera_pb2.Camera(name=camera), logging_pb2.Logpoint.STILLIMAGE, tag)
    assert wait_for(lambda: media.get_status(point).status == logging_pb2.Logpoint.COMPLETE,
                    20.0)
    return media.get_status(point)


def point_ptz(robot, pan: float, tilt: float, zoom: float) -> None:
    ptz = client(robot, PtzClient)
    ptz.set_ptz_position(MECH, pan, tilt, zoom)

    def there():
        p = ptz.get_ptz_position(MECH)
        return (abs((p.pan.value - pan + 180) % 360 - 180) < 0.5
                and abs(p.tilt.value - tilt) < 0.5 and abs(p.zoom.value - zoom) < 0.05)
    assert wait_for(there, 15.0)


def red_fraction(rgb: np.ndarray) -> float:
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    return float(np.mean((r > 2 * g + 20) & (r > 2 * b + 20)))


def test_a_logpoint_round_trip(robot):
    media = client(robot, MediaLogClient)
    assert {c.name for c in media.list_cameras()} >= {"pano", "c0", "c4", "ptz", "ir"}
    point = store(media, "ptz", tag="valve 3")
    assert point.tag == "valve 3" and point.calibration[0].intrinsics.focal_length.x > 0
    point, data = media.retrieve(point)
    assert len(data) == point.image_params.width * point.image_params.height * 3
    point.tag = "valve 4"
    media.tag(point)
    assert media.get_status(point).tag == "valve 4"
    assert point.name in [p.name for p in media.list_logpoints()]
    media.delete(point)
    assert point.name not in [p.name for p in media.list_logpoints()]
    with pytest.raises(Refused, match="no logpoint"):
        media.retrieve(point)
    with pytest.raises(Refused, match="unknown camera"):
        media.store(camera_pb2.Camera(name="c9"), logging_pb2.Logpoint.STILLIMAGE)
    assert point.name not in [p.name for p in media.list_logpoints()]


def test_the_ptz_view_follows_pan_and_zoom(robot):
    media = client(robot, MediaLogClient)

    def ptz_image() -> np.ndarray:
        point, data = media.retrieve(store(media, "ptz"))
        return np.frombuffer(data, np.uint8).reshape(
            point.image_params.height, point.image_params.width, 3)

    bearing = math.degrees(math.atan2(RED_BOX_CENTRE[1], RED_BOX_CENTRE[0]))
    point_ptz(robot, (360.0 - bearing) % 360.0, 0.0, 1.0)  # pan is clockwise from above
    wide = red_fraction(ptz_image())
    point_ptz(robot, (360.0 - bearing) % 360.0, 0.0, 4.0)
    tele = red_fraction(ptz_image())
    point_ptz(robot, 180.0 - bearing, 0.0, 1.0)
    away = red_fraction(ptz_image())
    assert tele > 2 * wide > 0.01 and away < 0.001, (wide, tele, away)
    point_ptz(robot, 0.0, 0.0, 1.0)


def test_ir_reads_the_hot_object_hotter(robot):
    media = client(robot, MediaLogClient)

    def celsius() -> np.ndarray:
        point, raw = media.retrieve_raw_data(store(media, "ir"))
        assert point.image_params.format == image_pb2.Image.PIXEL_FORMAT_GREYSCALE_U16
        kelvin = np.frombuffer(raw, ">u2").astype(float) / 100.0
        return kelvin.reshape(point.image_params.height, point.image_params.width) - 273.15

    bearing = math.degrees(math.atan2(RED_BOX_CENTRE[1], RED_BOX_CENTRE[0]))
    point_ptz(robot, (360.0 - bearing) % 360.0, 0.0, 1.0)
    toward = celsius()
    point_ptz(robot, 180.0, 0.0, 1.0)
    away = celsius()
    assert toward.max() > 50.0 > 30.0 > away.max(), (toward.max(), away.max())
    _, jpeg = media.retrieve(store(media, "ir"))
    assert jpeg[:2] == b"\xff\xd8"  # the colourised view, as JPEG
    point_ptz(robot, 0.0, 0.0, 1.0)


# ---------------------------------------------------------------------------- the SDK's program
PROGRAM_NEEDS = [m for m in ("aiortc", "cv2", "PIL") if importlib.util.find_spec(m) is None]
COMMANDS = [  # every sub-command but webrtc's, each with what its output must show
    (["audio", "set_volume", "40"], ""), (["audio", "get_volume"], "40"),
    (["audio", "load", "chime", "{wav}"], ""), (["audio", "list"], "chime"),
    (["audio", "play", "chime", "--gain", "0.5"], ""), (["audio", "delete", "chime"], ""),
    (["audio", "set_capture_channel", "external_mic"], ""),
    (["audio", "get_capture_channel"], "2"),
    (["audio", "set_capture_gain", "external_mic", "0.7"], ""),
    (["audio", "get_capture_gain", "external_mic"], "0.7"),
    (["compositor", "list"], "pano_full"), (["compositor", "set", "mech"], "mech"),
    (["compositor", "get"], "mech"), (["compositor", "visible"], "ptz"),
    (["compositor", "set_colormap", "inferno", "--min-temp", "10", "--max-temp", "60",
      "--disable-auto_scale"], ""), (["compositor", "get_colormap"], "COLORMAP_INFERNO"),
    (["compositor", "set_reticle", "--xs", "0.2", "0.8", "--ys", "0.5", "0.5"], ""),
    (["compositor", "get_reticle"], "0.8"),
    (["health", "temperature"], "cpu"), (["health", "bit"], ""), (["health", "clear"], ""),
    (["health", "system_log", "--dst", "{tmp}/log.gpg"], "log.gpg"),
    (["lighting", "set", "0.2", "0.2", "0.2", "0.2"], ""), (["lighting", "get"], "0.2"),
    (["media_log", "list_cameras"], "pano"), (["media_log", "store", "c0"], "name"),
    (["media_log", "status", "{lp}"], "COMPLETE"),
    (["media_log", "list_logpoints"], "{lp}"), (["media_log", "tag", "{lp}", "tank 2"], ""),
    (["media_log", "retrieve", "{lp}", "--dst", "{tmp}/c0"], "tank 2"),
    (["media_log", "store_retrieve", "ptz", "--dst", "{tmp}/ptz"], "COMPLETE"),
    (["media_log", "store_retrieve", "ir", "--dst", "{tmp}/ir-raw", "--enable-raw-ir"],
     "PIXEL_FORMAT_GREYSCALE_U16"),
    (["media_log", "retrieve_all"], "name"), (["media_log", "enable_debug"], ""),
    (["media_log", "delete", "{lp}"], ""), (["media_log", "delete-all"], ""),
    (["network", "set_ice", "{program_dir}/ice.json"], ""),
    (["network", "ice_settings"], "3478"), (["power", "get"], "ptz"),
    (["power", "set", "--enable-aux1"], "aux1"), (["power", "cycle", "--enable-aux2"], "aux2"),
    (["ptz", "list"], "mech"), (["ptz", "get_position", "mech"], "pan"),
    (["ptz", "set_position", "mech", "10", "5", "2"], "pan"),
    (["ptz", "get_velocity", "digi"], "pan"), (["ptz", "set_velocity", "digi", "5", "0", "0"],
                                                "pan"),
    (["ptz", "initialize_lens"], ""), (["ptz", "set_focus", "manual_focus", "--distance", "4"],
                                       ""), (["ptz", "get_focus"], "PTZ_FOCUS_MANUAL"),
    (["stream_quality", "set", "--target-bitrate", "3000000"], "3000000"),
    (["stream_quality", "get"], "3000000"),
    (["stream_quality", "congestion_control", "--enable-congestion_control"], ""),
    (["utils", "save_calibration", "{tmp}/calibration.txt"], ""),
    (["version", "software"], "Version 4.1.0"),
]


# What a sub-command whose output shows nothing did on the robot (each runs right after it;
# the others print what the robot answered, or a later getter checks them).
def _played(spot, _robot, _logpoint) -> None:
    last = spot.spot_cam.speaker.played()[-1]
    assert (last.name, last.gain) == ("chime", 0.5), last


def _sound_gone(_spot, robot, _logpoint) -> None:
    sounds = client(robot, AudioClient).list_sounds()
    assert "chime" not in {sound.name for sound in sounds}, sounds


def _bit_events_cleared(_spot, robot, _logpoint) -> None:
    events, _degradations = client(robot, HealthClient).get_bit_status()
    assert not events, events


def _logpoint_gone(_spot, robot, logpoint) -> None:
    names = {point.name for point in client(robot, MediaLogClient).list_logpoints()}
    assert logpoint not in names, names


def _no_logpoints(_spot, robot, _logpoint) -> None:
    assert not client(robot, MediaLogClient).list_logpoints()


def _lens_initialized(spot, _robot, _logpoint) -> None:
    assert spot.spot_cam.heads.lens_initializations >= 1


def _ptz_back_on(_spot, robot, _logpoint) -> None:
    """`power cycle` cycles the PTZ too (its default): the head is refused until it is
    powered again, so the next command waits for that, as a user must."""
    assert wait_for(lambda: client(robot, PowerClient).get_power_status().ptz.value, 10.0)


def _congestion_control_on(spot, _robot, _logpoint) -> None:
    assert spot.spot_cam.stream.congestion_control is True


COMMAND_NAMES = {"delete-all": "delete_all"}  # argument spellings, as keys below
EFFECTS = {("audio", "play"): _played, ("audio", "delete"): _sound_gone,
           ("health", "clear"): _bit_events_cleared, ("media_log", "delete"): _logpoint_gone,
           ("media_log", "delete_all"): _no_logpoints,
           ("ptz", "initialize_lens"): _lens_initialized, ("power", "cycle"): _ptz_back_on,
           ("stream_quality", "congestion_control"): _congestion_control_on}
# `media_log enable_debug` is only accepted: the simulated payload keeps no debug records
# (doc/simulator.md); `health bit` and the getters print the robot's answer.


def test_the_sdk_spot_cam_program_runs_unmodified(spot, robot, tmp_path, sdk_examples):
    if PROGRAM_NEEDS:  # requirements.lock has them: only a hand-made environment lacks them
        missing(f"the Spot CAM program's own requirements: {', '.join(PROGRAM_NEEDS)}")
    program = sdk_examples / "spot_cam/command_line.py"
    (tmp_path / "chime.wav").write_bytes(wav_bytes(0.2))
    env = {**os.environ, "BOSDYN_CLIENT_USERNAME": USERNAME, "BOSDYN_CLIENT_PASSWORD": PASSWORD}
    logpoint = store(client(robot, MediaLogClient), "c1").name
    names = dict(wav=tmp_path / "chime.wav", tmp=tmp_path, lp=logpoint,
                 program_dir=program.parent)
    for args, expected in COMMANDS:
        args = [a.format(**names) for a in args]
        expected = expected.format(**names)
        result = subprocess.run(
            [sys.executable, "-m", "spot_sim.sdk_program", "--port", str(spot.port), "--ca",
             str(spot.ca_cert), str(program), "127.0.0.1", *args],
            capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
        assert result.returncode == 0, (args, result.stderr[-2000:])
        assert expected in result.stdout, (args, result.stdout[-2000:])
        effect = EFFECTS.get(tuple(COMMAND_NAMES.get(a, a) for a in args[:2]))
        if effect is not None:  # what it did on the robot, where its output shows nothing
            effect(spot, robot, logpoint)
    assert (tmp_path / "ptz.jpg").stat().st_size > 10_000
    assert (tmp_path / "ir-raw.pgm").stat().st_size > 640 * 512 * 2
    assert (tmp_path / "calibration.txt").read_text().count("fx=") == 5
