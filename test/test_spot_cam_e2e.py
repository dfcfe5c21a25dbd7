"""End to end: the Spot CAM through ROS -> driver -> gRPC -> a simulated Spot with a Spot
CAM: the PTZ heads and their limits, a move the state topic and the frame follow until the
head gets there, moves outside the limits refused with nothing sent; sounds loaded, played
and deleted; LEDs; a media-log round trip, IR reading the hot object hotter; the Spot CAM's
health on /diagnostics; and a robot without a Spot CAM answering so."""

import math

import numpy as np
import pytest
import simplejpeg
from bosdyn.client.spot_cam.power import PowerClient
from diagnostic_msgs.msg import DiagnosticArray
from PIL import Image as PilImage
from ros_harness import DriverProcess, RosClient, driver_world
from sensor_msgs.msg import CameraInfo, CompressedImage, Image
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from transforms3d.quaternions import rotate_vector

from conftest import PASSWORD, USERNAME, connect, running_sim, wav_bytes
from spot_msgs.msg import PtzState
from spot_msgs.srv import (
    DeleteLogpoint,
    DeleteSound,
    GetPtzPosition,
    ListLogpoints,
    ListPtz,
    ListScreens,
    ListSounds,
    LoadSound,
    PlaySound,
    RetrieveLogpoint,
    SetIrColormap,
    SetIrMeterOverlay,
    SetLedBrightness,
    SetPtzPosition,
    SetScreen,
    SetVolume,
    StoreLogpoint,
    TagLogpoint,
)

MOUNT = [0.1, 0.0, 0.25]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with driver_world(tmp_path_factory, "spot_cam_test_client", sim={"has_spot_cam": True},
                      params={"spot_cam_ptz_rate": 10.0, "spot_cam_mount": MOUNT,
                              "spot_cam_health_rate": 4.0, "spot_cam_image_rate": 2.0},
                      subscriptions=(("/spot_cam/ptz/state", PtzState), ("/tf", TFMessage),
                                     ("/diagnostics", DiagnosticArray),
                                     ("/spot_cam/media_log/image", Image),
                                     ("/spot_cam/ptz/image/compressed", CompressedImage),
                                     ("/spot_cam/ptz/camera_info", CameraInfo),
                                     ("/spot_cam/ir/temperature", Image),
                                     ("/tf_static", TFMessage, {"latched": True})),
                      first="/spot_cam/ptz/state") as (sim, _driver, ros):
        yield sim, ros


def ptz_frame(ros):
    """The newest body -> spot_cam_ptz transform on /tf."""
    for message in reversed(ros.received("/tf")):
        for transform in message.transforms:
            if transform.child_frame_id == "spot_cam_ptz":
                return transform
    return None


def looking(transform) -> tuple[float, float, float]:
    """Where the frame's +x points, in the body frame."""
    r = transform.transform.rotation
    return tuple(rotate_vector([1.0, 0.0, 0.0], [r.w, r.x, r.y, r.z]))


def set_position(ros, pan, tilt, zoom, name="mech"):
    return ros.call(SetPtzPosition, "/spot_cam/set_ptz_position",
                    SetPtzPosition.Request(name=name, pan=pan, tilt=tilt, zoom=zoom))


def test_the_heads_are_listed_with_their_limits(world):
    _, ros = world
    response = ros.call(ListPtz, "/spot_cam/list_ptz")
    assert response.success, response.message
    heads = {h.name: h for h in response.heads}
    mech = heads["mech"]
    assert (mech.pan_min, mech.pan_max, mech.tilt_min, mech.tilt_max, mech.zoom_min,
            mech.zoom_max) == (0.0, 360.0, -30.0, 100.0, 1.0, 30.0)


def test_ptz_moves_and_its_state_and_frame_follow(world):
    sim, ros = world
    response = set_position(ros, 90.0, 30.0, 5.0)
    assert response.success, response.message
    assert (response.position.pan, response.position.tilt) == (90.0, 30.0)

    def there() -> bool:
        state = ros.latest("/spot_cam/ptz/state")
        return (abs(state.pan - 90.0) < 0.5 and abs(state.tilt - 30.0) < 0.5
                and abs(state.zoom - 5.0) < 0.1)

    assert ros.wait_for(there, timeout=15)
    truth = sim.spot_cam.heads.position("mech", sim.clock.now_nsec())
    assert (truth.pan, truth.tilt) == pytest.approx((90.0, 30.0), abs=0.5)
    got = ros.call(GetPtzPosition, "/spot_cam/get_ptz_position",
                   GetPtzPosition.Request(name="mech"))
    assert got.success and got.position.pan == pytest.approx(90.0, abs=0.5)
    assert ros.wait_for(lambda: ptz_frame(ros) is not None and looking(ptz_frame(ros))[1]
                        < -0.8, timeout=5)
    frame = ptz_frame(ros)
    assert frame.header.frame_id == "body"
    t = frame.transform.translation
    assert [t.x, t.y, t.z] == pytest.approx(MOUNT)
    x, y, z = looking(frame)  # pan 90 clockwise: to the robot's right (-y), tilted up 30
    assert (x, y, z) == pytest.approx((0.0, -math.cos(math.radians(30)),
                                       math.sin(math.radians(30))), abs=0.02)


@pytest.mark.parametrize("pan, tilt, zoom, sentence", [
    (400.0, 0.0, 1.0, "mech pan 400 degrees is outside [0, 360] degrees"),
    (0.0, -45.0, 1.0, "mech tilt -45 degrees is outside [-30, 100] degrees"),
    (0.0, 0.0, 40.0, "mech zoom 40 is outside [1, 30]"),
    (math.nan, 0.0, 1.0, "pan must be a finite number, not nan"),
])
def test_a_move_outside_the_limits_is_refused_and_nothing_moves(world, pan, tilt, zoom,
                                                                 sentence):
    sim, ros = world
    heads = sim.spot_cam.heads
    before = heads.position("mech", sim.clock.now_nsec())
    response = set_position(ros, pan, tilt, zoom)
    assert not response.success and response.message == sentence
    assert heads.position("mech", sim.clock.now_nsec()) == before


def test_an_unknown_head_is_refused(world):
    _, ros = world
    response = set_position(ros, 0.0, 0.0, 1.0, name="periscope")
    assert not response.success
    assert response.message == "unknown PTZ name 'periscope'; this Spot CAM has digi, mech"


def test_lens_initialization(world):
    sim, ros = world
    heads = sim.spot_cam.heads
    before = heads.lens_initializations
    response = ros.call(Trigger, "/spot_cam/initialize_lens")
    assert response.success, response.message
    assert heads.lens_initializations == before + 1


def test_a_robot_without_a_spot_cam_says_so(tmp_path):
    with running_sim(tmp_path / "certs") as sim:
        ros = RosClient("no_spot_cam_test_client")
        driver = DriverProcess(sim, tmp_path / "driver.log", USERNAME, PASSWORD,
                               namespace="/plain")  # beside the module's driver
        try:
            response = ros.call(ListPtz, "/plain/spot_cam/list_ptz", timeout=60)
            assert not response.success
            assert response.message == ("this robot has no Spot CAM (its directory lists no "
                                        "spot-cam-ptz service)")
            response = ros.call(ListSounds, "/plain/spot_cam/list_sounds", timeout=30)
            assert not response.success
            assert response.message == ("this robot has no Spot CAM (its directory lists no "
                                        "spot-cam-audio service)")
        finally:
            ros.close()
            driver.stop()


# ---------------------------------------------------------------------------- audio, LEDs

def test_a_sound_loads_plays_and_is_deleted(world, tmp_path):
    sim, ros = world
    speaker = sim.spot_cam.speaker
    (tmp_path / "chime.wav").write_bytes(wav_bytes(0.3))
    loaded = ros.call(LoadSound, "/spot_cam/load_sound",
                      LoadSound.Request(name="chime", wav_file=str(tmp_path / "chime.wav")))
    assert loaded.success, loaded.message
    assert ros.call(SetVolume, "/spot_cam/set_volume", SetVolume.Request(percent=70.0)).success
    listed = ros.call(ListSounds, "/spot_cam/list_sounds")
    assert listed.success and "chime" in listed.names and listed.volume == 70.0
    played = ros.call(PlaySound, "/spot_cam/play_sound",
                      PlaySound.Request(name="chime", gain=0.5))
    assert played.success, played.message
    last = speaker.played()[-1]
    assert (last.name, last.gain, last.volume) == ("chime", 0.5, 70.0)
    count = len(speaker.played())
    for srv, name, request, sentence in (
            (PlaySound, "play_sound", PlaySound.Request(name="gong"),
             "unknown sound name 'gong'; loaded: chime"),
            (PlaySound, "play_sound", PlaySound.Request(name="chime", gain=math.inf),
             "gain inf must be a finite number >= 0"),
            (LoadSound, "load_sound",
             LoadSound.Request(name="junk", data=list(b"not a sound file at all")),
             "not a WAV file: file does not start with RIFF id"),
            (SetVolume, "set_volume", SetVolume.Request(percent=150.0),
             "volume 150.0 is outside [0, 100] percent")):
        response = ros.call(srv, f"/spot_cam/{name}", request)
        assert (response.success, response.message) == (False, sentence)
    assert len(speaker.played()) == count and speaker.names() == ["chime"]
    assert speaker.volume() == 70.0
    deleted = ros.call(DeleteSound, "/spot_cam/delete_sound", DeleteSound.Request(name="chime"))
    assert deleted.success and speaker.names() == []


def test_leds_are_set_by_index_and_bad_levels_change_nothing(world):
    sim, ros = world
    lights = sim.spot_cam.lights
    response = ros.call(SetLedBrightness, "/spot_cam/set_led_brightness",
                        SetLedBrightness.Request(leds=[1, 2], brightness=[0.25, 0.75]))
    assert response.success, response.message
    assert list(response.brightness) == [0.0, 0.25, 0.75, 0.0] == lights.get()
    for leds, levels, sentence in (([4], [0.5], "LED 4 does not exist (indices 0-3)"),
                                   ([0, 1], [0.5, math.nan], "LED 1 brightness nan is outside "
                                    "[0, 1]"), ([0], [], "1 leds but 0 brightness values")):
        response = ros.call(SetLedBrightness, "/spot_cam/set_led_brightness",
                            SetLedBrightness.Request(leds=leds, brightness=levels))
        assert (response.success, response.message) == (False, sentence)
    assert lights.get() == [0.0, 0.25, 0.75, 0.0]


def test_screens_and_ir_colouring_and_bad_settings_change_nothing(world):
    sim, ros = world
    compositor = sim.spot_cam.compositor
    listed = ros.call(ListScreens, "/spot_cam/list_screens")
    assert listed.success and "mech_ir" in listed.screens and listed.current
    assert ros.call(SetScreen, "/spot_cam/set_screen", SetScreen.Request(name="mech_ir")).success
    assert compositor.screen() == "mech_ir"
    set_map = ros.call(SetIrColormap, "/spot_cam/set_ir_colormap", SetIrColormap.Request(
        colormap="inferno", min_celsius=10.0, max_celsius=80.0))
    assert set_map.success, set_map.message
    colormap = compositor.colormap()
    assert (colormap.scale.min, colormap.scale.max) == (10.0, 80.0)
    assert ros.call(SetIrMeterOverlay, "/spot_cam/set_ir_meter_overlay",
                    SetIrMeterOverlay.Request(enable=True, x=0.5, y=0.25)).success
    assert compositor.overlay().meter[0].y == 0.25
    for srv, service, request, sentence in (
            (SetScreen, "set_screen", SetScreen.Request(name="cinema"), "unknown screen "
             "name 'cinema'; screens: "),
            (SetIrColormap, "set_ir_colormap", SetIrColormap.Request(colormap="rainbow"),
             "unknown IR colormap 'rainbow'; maps: greyscale, jet, inferno, turbo"),
            (SetIrColormap, "set_ir_colormap", SetIrColormap.Request(
                colormap="jet", min_celsius=50.0, max_celsius=math.nan),
             "IR colour scale [50.0, nan] C is not a range (min_celsius < max_celsius)"),
            (SetIrMeterOverlay, "set_ir_meter_overlay", SetIrMeterOverlay.Request(
                enable=True, x=1.5, y=0.5), "IR meter x, y (1.5, 0.5) is outside the image")):
        response = ros.call(srv, f"/spot_cam/{service}", request)
        assert not response.success and response.message.startswith(sentence), response.message
    assert compositor.screen() == "mech_ir" and compositor.overlay().meter[0].x == 0.5
    assert compositor.colormap().scale.max == 80.0
    ros.call(SetIrColormap, "/spot_cam/set_ir_colormap",
             SetIrColormap.Request(colormap="jet", auto_scale=True))


# ---------------------------------------------------------------------------- media log
def stored(ros, camera: str, tag: str = "") -> str:
    """Store a still and wait until the media log lists it COMPLETE; its name."""
    response = ros.call(StoreLogpoint, "/spot_cam/store_logpoint",
                        StoreLogpoint.Request(camera=camera, tag=tag))
    assert response.success, response.message
    name = response.logpoint.name

    def complete() -> bool:
        points = ros.call(ListLogpoints, "/spot_cam/list_logpoints").logpoints
        return any(p.name == name and p.status == "COMPLETE" for p in points)

    assert ros.wait_for(complete, timeout=20)
    return name


def test_a_logpoint_round_trip(world, tmp_path):
    sim, ros = world
    name = stored(ros, "ptz", tag="gauge 7")
    got = ros.call(RetrieveLogpoint, "/spot_cam/retrieve_logpoint",
                   RetrieveLogpoint.Request(name=name, save_to=str(tmp_path / "gauge")))
    assert got.success, got.message
    assert (got.image.width, got.image.height, got.image.encoding) == (1920, 1080, "rgb8")
    assert got.logpoint.tag == "gauge 7" and got.saved_path.endswith("gauge.png")
    with PilImage.open(tmp_path / "gauge.png") as saved:  # the same pixels, as PNG
        assert saved.size == (1920, 1080) and saved.tobytes() == bytes(got.image.data)
    assert ros.wait_for(lambda: any(m.width == 1920 for m in
                                    ros.received("/spot_cam/media_log/image")), timeout=5)
    assert ros.call(TagLogpoint, "/spot_cam/tag_logpoint",
                    TagLogpoint.Request(name=name, tag="gauge 8")).success
    assert sim.spot_cam.media_log.status(name).tag == "gauge 8"
    assert ros.call(DeleteLogpoint, "/spot_cam/delete_logpoint",
                    DeleteLogpoint.Request(name=name)).success
    assert name not in [p.name for p in sim.spot_cam.media_log.points()]
    count = len(sim.spot_cam.media_log.points())
    for srv, service, request, sentence in (
            (RetrieveLogpoint, "retrieve_logpoint", RetrieveLogpoint.Request(name=name),
             f"no logpoint named {name!r} in the Spot CAM's media log"),
            (StoreLogpoint, "store_logpoint", StoreLogpoint.Request(camera="c9"),
             "unknown Spot CAM camera 'c9'; cameras: pano, c0, c1, c2, c3, c4, ptz, ir")):
        response = ros.call(srv, f"/spot_cam/{service}", request)
        assert (response.success, response.message) == (False, sentence)
    assert len(sim.spot_cam.media_log.points()) == count


def test_ir_reads_the_hot_object_hotter(world):
    _, ros = world
    bearing = math.degrees(math.atan2(0.7, 2.5))  # the scene's hot red box (perception.scene)

    def hottest_kelvin(pan: float) -> float:
        assert set_position(ros, pan, 0.0, 1.0).success
        assert ros.wait_for(lambda: abs((ros.latest("/spot_cam/ptz/state").pan - pan + 180)
                                        % 360 - 180) < 0.5, timeout=15)
        got = ros.call(RetrieveLogpoint, "/spot_cam/retrieve_logpoint",
                       RetrieveLogpoint.Request(name=stored(ros, "ir"), raw=True))
        assert got.success and got.image.encoding == "32FC1", got.message
        return float(np.frombuffer(bytes(got.image.data), np.float32).max())

    toward, away = hottest_kelvin(360.0 - bearing), hottest_kelvin(180.0)
    assert toward > 273.15 + 50.0 > 273.15 + 30.0 > away, (toward, away)
    assert set_position(ros, 0.0, 0.0, 1.0).success


# ---------------------------------------------------------------------------- camera topics
def test_ptz_images_info_following_zoom_and_ir_temperatures(world):
    _, ros = world
    bearing = math.degrees(math.atan2(0.7, 2.5))  # the scene's hot red box (perception.scene)
    assert set_position(ros, 360.0 - bearing, 0.0, 1.0).success

    def settled(zoom: float) -> bool:
        state = ros.latest("/spot_cam/ptz/state")
        return (state is not None and abs(state.zoom - zoom) < 0.01
                and abs((state.pan - (360.0 - bearing) + 180) % 360 - 180) < 0.5)

    assert ros.wait_for(lambda: settled(1.0), timeout=20)
    ros.next_messages("/spot_cam/ptz/camera_info", 2, timeout=20)  # after the head stopped
    wide = ros.latest("/spot_cam/ptz/camera_info")
    assert wide.header.frame_id == "spot_cam_ptz_optical" and (wide.width, wide.height) == (
        1920, 1080)
    assert wide.k[0] == pytest.approx(960 / math.tan(math.radians(63.7 / 2)), rel=0.01)
    jpeg = ros.latest("/spot_cam/ptz/image/compressed")
    assert simplejpeg.decode_jpeg(bytes(jpeg.data)).shape == (1080, 1920, 3)
    ir = ros.next_messages("/spot_cam/ir/temperature", 2, timeout=20)[-1]
    assert (ir.encoding, ir.width, ir.height) == ("32FC1", 640, 512)
    assert np.frombuffer(bytes(ir.data), np.float32).max() > 273.15 + 50.0
    assert set_position(ros, 360.0 - bearing, 0.0, 4.0).success
    assert ros.wait_for(lambda: abs(ros.latest("/spot_cam/ptz/camera_info").k[0]
                                    - 4 * wide.k[0]) < 0.01 * 4 * wide.k[0], timeout=20)
    optical = [t for m in ros.received("/tf_static") for t in m.transforms
               if t.child_frame_id == "spot_cam_ptz_optical"]
    assert optical and optical[0].header.frame_id == "spot_cam_ptz"
    assert set_position(ros, 0.0, 0.0, 1.0).success


# ---------------------------------------------------------------------------- health
def spot_cam_status(ros):
    for message in reversed(ros.received("/diagnostics")):
        for status in message.status:
            if status.name == "spot_driver: spot_cam":
                return status
    return None


def test_spot_cam_health_is_on_diagnostics(world):
    sim, ros = world
    assert ros.wait_for(lambda: spot_cam_status(ros) is not None, timeout=15)
    status = spot_cam_status(ros)
    assert status.level == b"\x00", status.message
    assert {v.key for v in status.values} >= {"cpu (C)", "ptz (C)"}
    robot = connect(sim)  # another client power-cycles the PTZ (a BIT event)
    try:
        robot.ensure_client(PowerClient.default_service_name).cycle_power(ptz=True)
    finally:
        robot.time_sync.stop()
    assert ros.wait_for(lambda: "ptz_power_off" in spot_cam_status(ros).message, timeout=15)
    assert spot_cam_status(ros).level == b"\x01"
