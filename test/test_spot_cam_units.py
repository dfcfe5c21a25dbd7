"""The Spot CAM's pure parts: the driver's PTZ move checks and the head's frame; the
simulated heads' limits, slew and short way round (no robot, no ROS graph)."""

import math

import pytest
from builtin_interfaces.msg import Time
from transforms3d.quaternions import rotate_vector

from conftest import wav_bytes
from spot_driver.spot_cam.conversions import Limits, check_move, head_transform
from spot_sim.spot_cam.ptz import PAN_TILT_SLEW_DEG_S, Pose, PtzError, PtzHeads

HEADS = {"mech": Limits("mech", (0.0, 360.0), (-30.0, 100.0), (1.0, 30.0)),
         "digi": Limits("digi", (None, None), (-90.0, 90.0), (1.0, 30.0))}


@pytest.mark.parametrize("name, pose, sentence", [
    ("mech", (361.0, 0.0, 1.0), "mech pan 361 degrees is outside [0, 360] degrees"),
    ("mech", (0.0, 100.5, 1.0), "mech tilt 100.5 degrees is outside [-30, 100] degrees"),
    ("mech", (0.0, 0.0, 0.5), "mech zoom 0.5 is outside [1, 30]"),
    ("mech", (0.0, math.inf, 1.0), "tilt must be a finite number, not inf"),
    ("zoom", (0.0, 0.0, 1.0), "unknown PTZ name 'zoom'; this Spot CAM has digi, mech"),
])
def test_a_move_outside_a_heads_limits_is_refused_with_a_sentence(name, pose, sentence):
    with pytest.raises(ValueError) as refused:
        check_move(HEADS, name, *pose)
    assert str(refused.value) == sentence


def test_moves_within_the_limits_and_an_unlimited_axis_pass():
    check_move(HEADS, "mech", 0.0, -30.0, 30.0)
    check_move(HEADS, "mech", 360.0, 100.0, 1.0)
    check_move(HEADS, "digi", 720.0, 0.0, 1.0)  # no pan limit listed


@pytest.mark.parametrize("pan, tilt, looks", [
    (0.0, 0.0, (1.0, 0.0, 0.0)),
    (90.0, 0.0, (0.0, -1.0, 0.0)),  # clockwise seen from above: to the right
    (270.0, 0.0, (0.0, 1.0, 0.0)),
    (0.0, 90.0, (0.0, 0.0, 1.0)),  # tilt up
    (180.0, -30.0, (-math.cos(math.radians(30)), 0.0, -0.5)),
])
def test_the_head_frame_looks_where_pan_and_tilt_point(pan, tilt, looks):
    transform = head_transform(pan, tilt, (0.1, 0.0, 0.2), "body", "spot_cam_ptz", Time())
    r = transform.transform.rotation
    assert rotate_vector([1.0, 0.0, 0.0], [r.w, r.x, r.y, r.z]) == pytest.approx(looks,
                                                                                abs=1e-9)
    t = transform.transform.translation
    assert (t.x, t.y, t.z) == (0.1, 0.0, 0.2)
    assert (transform.header.frame_id, transform.child_frame_id) == ("body", "spot_cam_ptz")


def test_the_simulated_mech_head_slews_and_takes_the_short_way_round():
    heads = PtzHeads(0)
    heads.set_position("mech", Pose(350.0, 0.0, 1.0), 0)
    half = int(10.0 / PAN_TILT_SLEW_DEG_S / 2 * 1e9)
    midway = heads.position("mech", half).pan  # 10 degrees the short way is 5 at half time
    assert midway == pytest.approx(355.0)
    assert heads.position("mech", 10**10) == Pose(350.0, 0.0, 1.0)
    with pytest.raises(PtzError, match="outside"):
        heads.set_position("mech", Pose(0.0, 120.0, 1.0), 10**10)
    assert heads.position("mech", 2 * 10**10) == Pose(350.0, 0.0, 1.0)  # nothing moved


# ---------------------------------------------------------------------------- payload parts

def test_the_drivers_audio_and_led_checks():
    from spot_driver.core.errors import CommandError
    from spot_driver.spot_cam.audio import check_gain, check_volume, check_wav
    from spot_driver.spot_cam.lights import check_brightness

    assert check_wav(wav_bytes(0.25)) == pytest.approx(0.25)
    for bad in (lambda: check_wav(b"RIFF...."), lambda: check_volume(-1.0),
                lambda: check_volume(math.nan), lambda: check_gain(-0.1),
                lambda: check_brightness([0], [1.1]), lambda: check_brightness([-1], [0.5]),
                lambda: check_brightness([0, 1], [0.5])):
        with pytest.raises(CommandError):
            bad()
    assert check_brightness([3, 0], [0.5, 1.0]) == {3: 0.5, 0: 1.0}


def test_stills_decode_to_the_logpoints_size_and_refuse_other_bytes():
    import numpy as np
    import simplejpeg
    from bosdyn.api import image_pb2
    from bosdyn.api.spot_cam import logging_pb2

    from spot_driver.spot_cam import stills

    point = logging_pb2.Logpoint(name="p")
    point.image_params.width, point.image_params.height = 4, 2
    rgb = stills.decode(point, bytes(range(24)))
    assert (rgb.encoding, rgb.pixels.shape, rgb.suffix) == ("rgb8", (2, 4, 3), ".png")
    point.image_params.format = image_pb2.Image.PIXEL_FORMAT_GREYSCALE_U16
    kelvin = stills.decode(point, np.full(8, 29315, ">u2").tobytes())
    assert kelvin.encoding == "32FC1" and kelvin.pixels[0, 0] == pytest.approx(293.15)
    jpeg = simplejpeg.encode_jpeg(np.zeros((16, 16, 3), np.uint8))
    assert stills.decode(point, jpeg).suffix == ".jpg"
    with pytest.raises(stills.StillError):
        stills.decode(point, bytes(10))
    assert stills.file_bytes(kelvin, b"")[:2] in (b"II", b"MM")  # a TIFF


def test_health_is_ok_or_names_each_problem():
    from bosdyn.api import robot_state_pb2
    from bosdyn.api.spot_cam import health_pb2

    from spot_driver.spot_cam.health import health_status

    temps = [health_pb2.Temperature(channel_name="cpu", temperature=45_000)]
    ok = health_status("p: ", "hw", temps, [], [])
    assert (ok.level, ok.name, ok.values[0].key, ok.values[0].value) == (
        b"\x00", "p: spot_cam", "cpu (C)", "45.0")
    event = robot_state_pb2.SystemFault(name="ptz_power_off", error_message="off")
    hot = [health_pb2.Temperature(channel_name="cpu", temperature=85_000)]
    warn = health_status("p: ", "hw", hot, [event], [])
    assert warn.level == b"\x01"
    assert warn.message == "ptz_power_off: off; cpu at 85 C"


def test_the_simulated_leds_speaker_and_rails():
    from spot_sim.spot_cam.audio import AudioError, Speaker
    from spot_sim.spot_cam.lights import Lights, LightsError
    from spot_sim.spot_cam.power import CYCLE_S, PowerRails

    lights = Lights()
    with pytest.raises(LightsError):
        lights.set({0: 0.5, 1: 2.0})  # all or none
    assert lights.get() == [0.0] * 4
    speaker = Speaker()
    speaker.load("a", wav_bytes(1.0))
    played = speaker.play("a", 2.0, 10)
    assert played.end_ns - played.start_ns == 1_000_000_000
    with pytest.raises(AudioError):
        speaker.play("b", 1.0, 0)
    rails = PowerRails()
    assert not rails.cycle(["ptz"], 0)["ptz"]
    assert not rails.is_on("ptz", int(CYCLE_S * 1e9) - 1)
    assert rails.is_on("ptz", int(CYCLE_S * 1e9))


def test_ir_colour_maps_span_the_scale():
    import numpy as np
    from bosdyn.api.spot_cam import compositor_pb2

    from spot_sim.spot_cam.cameras import CAMERAS
    from spot_sim.spot_cam.compositor import SCREENS, colorize

    colormap = compositor_pb2.IrColorMap(colormap=compositor_pb2.IrColorMap.COLORMAP_GREYSCALE)
    colormap.scale.min, colormap.scale.max = 0.0, 100.0
    rgb = colorize(np.array([[0.0, 50.0, 100.0, 150.0]]), colormap)
    assert rgb[0, :, 0].tolist() == [0, 127, 255, 255]
    assert all(camera in CAMERAS for screen in SCREENS.values() for camera, _ in screen)


def test_ir_counts_read_as_kelvin_and_jpegs_pass_through():
    import numpy as np
    from bosdyn.api import image_pb2
    from std_msgs.msg import Header

    from spot_driver.spot_cam import images

    raw = image_pb2.Image(cols=3, rows=2, format=image_pb2.Image.FORMAT_RAW,
                          pixel_format=image_pb2.Image.PIXEL_FORMAT_GREYSCALE_U16,
                          data=np.array([29315] * 5 + [33815], "<u2").tobytes())
    kelvin = images.kelvin(raw)
    assert kelvin.shape == (2, 3) and kelvin[1, 2] == pytest.approx(338.15)
    message = images.temperature_msg(kelvin, Header(frame_id="f"))
    assert (message.encoding, message.step, len(message.data)) == ("32FC1", 12, 24)
    jpeg = image_pb2.Image(format=image_pb2.Image.FORMAT_JPEG, data=b"\xff\xd8",
                           pixel_format=image_pb2.Image.PIXEL_FORMAT_RGB_U8)
    assert bytes(images.compressed(jpeg, Header()).data) == b"\xff\xd8"
    with pytest.raises(ValueError):
        images.kelvin(jpeg)
    with pytest.raises(ValueError):
        images.compressed(raw, Header())


def test_compositor_settings_are_checked():
    from spot_driver.core.errors import CommandError
    from spot_driver.spot_cam.compositor import COLORMAPS, check_colormap, check_meter

    assert check_colormap("turbo", False, 0.0, 100.0) == COLORMAPS["turbo"]
    assert check_colormap("jet", True, math.nan, math.nan) == COLORMAPS["jet"]  # auto scale
    for bad in (lambda: check_colormap("viridis", True, 0, 1),
                lambda: check_colormap("jet", False, 5.0, 5.0),
                lambda: check_meter(-0.1, 0.5), lambda: check_meter(0.5, math.inf)):
        with pytest.raises(CommandError):
            bad()


def test_a_poll_that_found_no_spot_cam_waits_before_asking_again():
    from spot_driver.spot_cam.clients import PollGate

    now = [100.0]
    gate = PollGate(retry_s=30.0, clock=lambda: now[0])
    assert gate.open()
    gate.found_absent()
    now[0] += 29.9
    assert not gate.open()
    now[0] += 0.2
    assert gate.open()
