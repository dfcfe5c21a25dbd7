"""The Spot SDK's own example programs, unmodified, against the simulated robot (with an arm,
no e-stop required, as a robot whose operator holds the e-stop elsewhere).

``RUNS`` are the programs that run here (each with the arguments it needs and a sentence its
output must contain); ``DOES_NOT_RUN`` says why each other example is not run. The README's
"SDK example programs" table is checked against both, and every example directory of a
spot-sdk checkout (``SPOT_SDK_DIR``, by default the workplace copy ../shared/vendor/spot-sdk)
must be in one of them.
"""

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import PASSWORD, SDK_EXAMPLES, USERNAME, connect, running_sim, wait_for

REPO = Path(__file__).resolve().parent.parent
NEEDS_SDK = pytest.mark.usefixtures("sdk_examples")  # skips, or fails in CI, without one


# What a program did on the simulated robot, for those whose output says nothing of it (or
# that exit 1 after running well): (robot, an SDK connection to it, the program's folder,
# its output) -> fails if the robot shows nothing of it.
def _saved_image(name: str, size: tuple[int, int] | None = None):
    def check(_spot, _sdk, folder: Path, _output: str) -> None:
        from PIL import Image
        with Image.open(folder / name) as image:  # a real image file, decodable
            assert image.size == size if size else min(image.size) > 100, image.size
    return check


def _gripper_camera_params(_spot, sdk, _folder, _output) -> None:
    from bosdyn.api import gripper_camera_param_pb2 as params_pb2
    from bosdyn.client.gripper_camera_param import GripperCameraParamClient
    params = sdk.ensure_client(GripperCameraParamClient.default_service_name) \
        .get_camera_params(params_pb2.GripperCameraGetParamRequest()).params
    assert params.camera_mode == params_pb2.GripperCameraParams.MODE_1280_720_60FPS_UYVY, params
    assert abs(params.brightness.value - 0.6) < 1e-6, params
    assert not params.exposure_auto.value and abs(params.exposure_absolute.value - 0.2) < 1e-6


def _auto_return_configured(_spot, sdk, _folder, _output) -> None:
    from bosdyn.client.auto_return import AutoReturnClient
    configuration = sdk.ensure_client(AutoReturnClient.default_service_name).get_configuration()
    assert configuration.enabled, configuration
    assert configuration.request.params.max_displacement == 12.5  # the program's default


def _ir_disabled(spot, _sdk, _folder, _output) -> None:
    assert spot.ir.ir_enabled is False  # the request reached the robot (no getter in the API)


def _faults_seen_then_cleared(_spot, sdk, _folder, output: str) -> None:
    from bosdyn.client.robot_state import RobotStateClient
    seen = output.split("Should see locally triggered fault", 1)[1] \
        .split("Should not see locally triggered fault", 1)
    assert "ManualExampleFault" in seen[0]  # the robot's state listed the triggered fault
    assert "ManualExampleFault" not in seen[1]  # and no longer once cleared
    faults = sdk.ensure_client(RobotStateClient.default_service_name).get_robot_state() \
        .service_fault_state
    assert "ManualExampleFault" not in {f.fault_id.fault_name for f in faults.faults}, faults
    assert "ManualExampleFault" in {f.fault_id.fault_name for f in faults.historical_faults}


def _fan_command_on_the_robot(_spot, sdk, _folder, _output) -> None:
    from bosdyn.api import power_pb2
    from bosdyn.client.power import PowerClient
    feedback = sdk.ensure_client(PowerClient.default_service_name) \
        .fan_power_command_feedback(1)  # the robot's first fan command: the program's
    assert feedback.status in (power_pb2.FanPowerCommandFeedbackResponse.STATUS_COMPLETE,
                               power_pb2.FanPowerCommandFeedbackResponse.STATUS_RUNNING), \
        feedback


def _commands_with(field: str, at_least: int):
    """The robot received ``at_least`` RobotCommands whose mobility command is ``field``
    (what the program did, not what it printed before doing it)."""
    def check(spot, _sdk, _folder, output: str) -> None:
        sent = [c.request for c in spot.commands.commands("RobotCommand")
                if c.request is not None and c.request.command.synchronized_command
                .mobility_command.WhichOneof("command") == field]
        assert len(sent) >= at_least, (field, len(sent), output[-2000:])
    return check


@dataclass(frozen=True)
class Example:
    program: str  # under python/examples/
    args: tuple[str, ...] = ()
    prints: str = ""  # a sentence the program's output (stdout + stderr) must contain
    interrupt_after: float = 0.0  # s: a program that runs until Ctrl-C gets SIGINT then
    exit_code: int = 0  # some examples exit 1 after running well (their main returns None);
    # after the SIGINT of interrupt_after: what the program then exits with (-2: Python's
    # uncaught KeyboardInterrupt ends the process by the signal)
    sim: tuple[tuple[str, object], ...] = ()  # SimConfig fields the robot needs (hardware)
    check: Callable | None = None  # what it did on the robot (see above)


RUNS = (
    Example("get_robot_state/get_robot_state.py", ("state",), "kinematic_state"),
    Example("get_robot_state/get_robot_state.py", ("metrics",), "gait cycles"),
    Example("get_image/get_image.py", ("--image-sources", "hand_color_image"), "",
            check=_saved_image("hand_color_image.jpg")),
    Example("gripper_camera_params/set_gripper_camera_params.py",
            ("--resolution", "1280x720", "--brightness", "0.6", "--auto-exposure", "off",
             "--exposure", "0.2"), "", check=_gripper_camera_params),
    Example("gripper_camera_params/get_gripper_camera_params.py", (),
            "Exposure ........................... auto"),
    Example("stance/stance_in_place.py", (), "press Ctrl-C to sit Spot", interrupt_after=8.0,
            exit_code=-2, check=_commands_with("stance_request", 3)),
    Example("arm_simple/arm_simple.py", (), "Robot safely powered off"),
    Example("arm_stow_unstow/arm_stow_unstow.py", (), "Robot safely powered off"),
    Example("arm_joint_move/arm_joint_move.py", (), "Robot safely powered off"),
    Example("arm_gaze/arm_gaze.py", (), "Robot safely powered off"),
    Example("arm_trajectory/arm_trajectory.py", (), "Robot safely powered off"),
    Example("arm_surface_contact/arm_surface_contact.py", (), "Robot safely powered off"),
    Example("arm_with_body_follow/arm_with_body_follow.py", (), "Robot safely powered off"),
    Example("auto_return/force_start_auto_return.py", (), "", check=_auto_return_configured),
    Example("payloads/payloads.py", ("--payload-credentials-file-1", "payload1.txt",
                                     "--payload-credentials-file-2", "payload2.txt"),
            "Client Registered Payload Ex #2"),
    Example("audio_visual/audio_visual_params/audio_visual_params.py",
            ("--max-brightness", "0.5"), "max_brightness: 0.5",
            sim=(("has_audio_visual", True),)),
    Example("audio_visual/audio_visual_behaviors/audio_visual_behaviors.py",
            ("-t", "2", "-l", "blink", "-c", "255,0,0", "-mbv", "0.1", "-d"),
            'Successfully deleted behaviors: "custom"', sim=(("has_audio_visual", True),)),
    Example("reset_safety_stop/reset_primary_safety_stop.py", (), "STATUS_OK",
            sim=(("safety_rated_stop", True),)),
    Example("reset_safety_stop/reset_redundant_safety_stop.py", (), "STATUS_OK",
            sim=(("safety_rated_stop", True),)),
    Example("arm_force_control/force_wrench_control.py", (), "Robot safely powered off"),
    Example("arm_force_control/force_trajectory.py", (), "Robot safely powered off"),
    Example("arm_impedance_control/arm_impedance_control_simple.py", (),
            "Impedance move succeeded"),
    Example("arm_impedance_control/arm_impedance_control.py", (), "Impedance move succeeded"),
    Example("world_object_mutations/mutate_world_objects.py", (),
            "Found sphere named debug_sphere"),
    Example("user_nogo_regions/user_nogo_regions.py", (), "Robot safely powered off"),
    Example("hello_spot/hello_spot.py", (), "Robot safely powered off"),
    Example("get_robot_state_async/get_robot_state_async.py", (), "SUCCESS!"),
    Example("get_world_objects/get_world_objects.py", (), "Recent objects after"),
    Example("ray_cast/cast_single_ray.py", ("-o", "0", "0", "0.3", "-d", "1", "0", "-1"),
            "TYPE_GROUND_PLANE"),
    Example("time_sync/time_sync_client.py", (), "Did establish timesync: True"),
    Example("log_status/log_status.py", ("retro", "2"), "TYPE_RETRO"),
    Example("data_buffer/data_buffer.py", ("operator", "hello"), "Added operator comment"),
    Example("logging/log_spot_data.py", (), "Added robot command log blob"),
    Example("frame_trajectory_command/frame_trajectory_command.py", (), "Arrived at the goal."),
    Example("arm_freeze/arm_freeze_hand.py", (), "Walking with joint move to freeze."),
    Example("arm_and_mobility_command/arm_and_mobility_command.py", (),
            "Robot safely powered off"),
    Example("arm_grasp_carry_overrides/arm_grasp_carry_overrides.py", (),
            "Arm successfully stowed."),
    Example("get_mission_state/get_mission_state.py", (), "Got mission state"),
    Example("directory/directory_modification.py", (), "directory-registration"),
    Example("service_faults/service_faults.py", (), "Should not see locally triggered fault.",
            exit_code=1, check=_faults_seen_then_cleared),
    Example("fan_command/basic_fan_command.py", (), "status: STATUS_COMPLETE", exit_code=1,
            check=_fan_command_on_the_robot),
    Example("disable_ir_emission/disable_ir_emission.py", ("--disable",), "",
            check=_ir_disabled),
    Example("docking/dock_my_robot.py", ("--dock-id", "520"), "Docking Success"),
    Example("world_object_with_image_coordinates/world_object_with_image_coordinates.py", (),
            "object_lifetime"),
    Example("data_service/get_index.py", ("text",), "text_messages"),
    Example("data_service/get_comments.py", (), "events_comments"),
    Example("data_service/get_events.py", (), "events_comments"),
    Example("data_service/get_pages.py", (), "pages --------"),
    Example("get_depth_plus_visual_image/get_depth_plus_visual_image.py", (), "",
            check=_saved_image("frontleft.jpg")),
    # a robot with an arm registers its hand camera both ways
    Example("get_depth_plus_visual_image/get_depth_plus_visual_image.py",
            ("--camera", "hand"), "", check=_saved_image("hand.jpg")),
    Example("get_depth_plus_visual_image/get_depth_plus_visual_image.py",
            ("--camera", "hand", "--to-depth"), "", check=_saved_image("hand.jpg")),
    Example("tester_programs/image_service_tester.py", ("--service-name", "image"),
            "no active service faults after all tests are complete"),
    Example("fiducial_follow/fiducial_follow.py", (), "Powered On True", interrupt_after=20.0,
            exit_code=-2, check=_commands_with("se2_trajectory_request", 1)),
)

# Example directory -> the test file that runs its programs (with fixtures of their own).
RUN_ELSEWHERE = {
    "joint_control": "test_low_level_sim.py",
    "upload_choreographed_sequence": "test_choreography_moves_sim.py",
    "spot_cam": "test_spot_cam_payload_sim.py",
    "data_acquisition_service": "test_data_acquisition_sim.py",
    "arm_constrained_manipulation": "test_manipulation_modes_sim.py",
    "remote_mission_service": "test_core_payloads_sim.py",
    "bddf_download": "test_data_acquisition_sim.py",
    "area_callback": "test_core_payloads_sim.py",
}

# Example directory -> why it does not run against the simulated robot here.
DOES_NOT_RUN = {
    "inverse_kinematics": "needs matplotlib (plots the reachable poses)",
    "wasd": "a person at a curses keyboard interface",
    "arm_wasd": "a person at a curses keyboard interface",
    "animation_recorder": "a person at a curses keyboard interface (its recording RPCs and "
                          "the SDK's log-to-animation converter run in "
                          "test_choreography_sim.py)",
    "xbox_controller": "a person with a game controller",
    "visualizer": "a window (VTK)",
    "graph_nav_view_map": "a window (VTK)",
    "graph_nav_view_gps": "a window (a map viewer) and GPS",
    "arm_grasp": "a person clicking on a camera image in a window (OpenCV)",
    "arm_walk_to_object": "a person clicking on a camera image in a window (OpenCV)",
    "stitch_front_images": "a window (OpenGL)",
    "cloud_upload": "accounts at Google Cloud or AWS (it uploads there)",
    "post_docking_callbacks": "accounts at Google Cloud or AWS (its docking callback uploads "
                              "there)",
    "comms_test": "iperf3 servers on the robot's payload network",
    "comms_mapping": "a window (OpenCV, matplotlib) and the robot's Wi-Fi signal map",
    "core_io_gpio": "CORE I/O hardware (its GPIO pins)",
    "metrics_over_coreio": "a CORE I/O running the extension (Docker)",
    "extensions": "Docker, to build robot extension packages (no robot calls)",
    "orbit": "a Boston Dynamics Orbit server",
    "edit_autowalk": "a window (PyQt5)",
    "record_autowalk": "a window (PyQt5)",
    "estop": "a person at the e-stop (a PyQt5 window or a curses screen)",
    "mission_recorder": "a person at a curses keyboard interface",
    "graph_nav_command_line": "a person choosing commands at a prompt",
    "mission_question_answerer": "a person answering the mission's questions at a prompt",
    "spot_tensorflow_detector": "TensorFlow and a trained detection model",
    "spot_light": "a window (OpenCV) and a person shining a light at the camera",
    "extract_images_from_walk": "a recorded Autowalk folder and matplotlib, python-pptx",
    "graph_nav_anchoring_optimization": "matplotlib (it plots the optimized anchoring)",
    "velodyne_client": "a window (matplotlib, PyQt5)",
    "arm_door": "a person clicking on a door's handle in a window (OpenCV), and a door",
    "arm_gcode": "a person pressing Enter between strokes, and a G-code drawing surface",
    "access_controlled_doors": "an access-controlled door system's server",
    "gps_service": "a GPS receiver (NMEA over TCP, UDP or serial)",
    "network_compute_bridge": "a network compute server with TensorFlow models",
    "network_request_callback": "a payload service that sends HTTP requests to the URLs a "
                                "mission gives it (traffic off this machine, which tests do "
                                "not send; the RemoteGrpc node and routing it needs are "
                                "simulated)",
    "self_registration": "grpcio-tools to compile its announce protos, and an administrator "
                         "authorizing the payload (the routing it needs is simulated: "
                         "test_core_payloads_sim.py)",
    "service_customization": "a webcam (its image server) and TensorFlow (its network compute "
                             "worker); its data-acquisition plugin is one of the kind "
                             "test_core_payloads_sim.py runs",
    "graph_nav_extract_point_cloud": "a map folder written by graph_nav_command_line (a person at "
                                     "its prompt)",
    "replay_mission": "a mission file or Autowalk folder recorded on a robot",
}


def _example_dirs() -> set[str]:
    return {p.name for p in SDK_EXAMPLES.iterdir()
            if p.is_dir() and p.name != "docs"}


def run(spot, example: Example, tmp_path: Path) -> tuple[int, str]:
    """(exit code, stdout + stderr). A program that runs until Ctrl-C must still run when
    its SIGINT comes (its exit code is then what Ctrl-C makes of it)."""
    program = SDK_EXAMPLES / example.program
    env = {**os.environ, "BOSDYN_CLIENT_USERNAME": USERNAME, "BOSDYN_CLIENT_PASSWORD": PASSWORD,
           "MPLBACKEND": "Agg"}
    process = subprocess.Popen(
        [sys.executable, "-m", "spot_sim.sdk_program", "--port", str(spot.port), "--ca",
         str(spot.ca_cert), str(program), "127.0.0.1", *example.args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    if example.interrupt_after:  # a program that runs until Ctrl-C: once it says it runs
        assert wait_for(lambda: example.prints in "".join(lines) or process.poll() is not None,
                        120.0, 0.1), f"{example.program} never said {example.prints!r}"
        with pytest.raises(subprocess.TimeoutExpired):  # it must still be running
            process.wait(timeout=example.interrupt_after)
        process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=180)
    except subprocess.TimeoutExpired:
        process.kill()
        reader.join(10)
        raise AssertionError(f"{example.program} still running after 180 s: "
                             f"{''.join(lines)[-2000:]}") from None
    reader.join(10)
    output = "".join(lines)
    return process.returncode, output


@NEEDS_SDK
@pytest.mark.parametrize("example", RUNS, ids=[" ".join((e.program, *e.args)) for e in RUNS])
def test_the_sdk_example_runs_unmodified(example, tmp_path):
    # A robot per program: one that ends holding the lease cannot starve the next.
    with running_sim(tmp_path / "certs", has_arm=True, estop_required=False,
                     **dict(example.sim)) as spot:
        code, output = run(spot, example, tmp_path)
        assert code == example.exit_code, output[-3000:]
        assert example.prints in output, output[-3000:]
        if example.check is not None:
            sdk = connect(spot)
            try:
                example.check(spot, sdk, tmp_path, output)
            finally:
                sdk.time_sync.stop()


@NEEDS_SDK
def test_every_example_is_run_or_said_why_not():
    run_dirs = {e.program.split("/")[0] for e in RUNS}
    unlisted = sorted(_example_dirs() - run_dirs - set(DOES_NOT_RUN) - set(RUN_ELSEWHERE))
    assert not unlisted, f"say whether these run: {unlisted}"


def test_the_docs_list_what_runs_and_what_does_not():
    text = (REPO / "doc" / "simulator.md").read_text()
    table = text.split("## SDK example programs", 1)[1].split("\n#", 1)[0]
    rows = dict(re.findall(r"^\| `([^`]+)` \| ([^|]+) \|", table, re.MULTILINE))
    for example in RUNS:
        directory = example.program.split("/")[0]
        assert rows.get(directory, "").startswith("runs"), directory
    for directory, test_file in RUN_ELSEWHERE.items():
        assert rows.get(directory, "").strip() == f"runs (in {test_file})", directory
    for directory, why in DOES_NOT_RUN.items():
        assert rows.get(directory, "").strip() == f"does not run: {why}", directory
