"""The simulated robot's choreography service through the SDK's own ChoreographyClient
(``bosdyn-choreography-client``): the move catalog, uploads good and bad (strict and
non-strict), animations, execution at a time-synced start with status, interruption, the
robot-side refusals and a withheld license."""

import math
import time
from pathlib import Path

import pytest
from bosdyn.api import lease_pb2
from bosdyn.api.spot import choreography_sequence_pb2 as seq_pb2
from bosdyn.choreography.client.animation_file_to_proto import convert_animation_file_to_proto
from bosdyn.choreography.client.choreography import (
    AnimationValidationFailedError,
    ChoreographyClient,
    NoRecordedInformation,
    RobotCommandIssuesError,
    UnknownRecordingSessionId,
)
from bosdyn.client.exceptions import InvalidRequestError, LeaseUseError, ResponseError
from bosdyn.client.power import power_on_motors
from bosdyn.client.robot_command import RobotCommandBuilder, blocking_stand
from google.protobuf import text_format
from test_body_sim import commander, odom_tform_body, operated, state_of, wait_for

from conftest import connect, holds, running_sim

DATA = Path(__file__).parent / "data" / "choreography"
Status = seq_pb2.ChoreographyStatusResponse


def sequence(name: str) -> seq_pb2.ChoreographySequence:
    return text_format.Parse((DATA / f"{name}.csq").read_text(), seq_pb2.ChoreographySequence())


def client(robot) -> ChoreographyClient:
    return robot.ensure_client(ChoreographyClient.default_service_name)


# Every move of Boston Dynamics' move reference (spot-sdk docs/concepts/choreography/
# move_reference.md), by section.
REFERENCE_MOVES = {
    "body": ["rotate_body", "rotate_body_sharp", "body_hold", "body_const", "sway",
             "random_rotate", "twerk", "butt_circle", "fidget_stand"],
    "step": ["step", "goto", "trot", "pace", "turn_2step", "pace_2step", "crawl",
             "custom_gait"],
    "dynamic": ["running_man", "bourree", "hop", "jog", "skip", "front_up", "jump"],
    "transition": ["sit", "stand_up", "sit_to_sprawl", "random_stretch", "stand_to_kneel",
                   "kneel_to_stand", "kneel_to_stand_fast", "self_right", "leg_pose"],
    "kneel": ["kneel_leg_move", "kneel_leg_move2", "kneel_clap", "kneel_circles"],
    "arm": ["nod", "stow", "unstow", "shoulder_left", "shoulder_right", "arm_move",
            "arm_move_no_gripper", "arm_move_relative", "workspace_arm_move", "figure8_move",
            "gripper", "frame_snapshot", "chicken_head"],
    "lights": ["set_color", "fade_color", "independent_color", "ripple_color"],
    "audio_visual": ["set_audio_visual_color", "set_all_color", "buzzer_note"],
}


def test_move_catalog_with_parameter_specs(sim, robot):
    moves = client(robot).list_all_moves()
    listed = {m.name: m for m in moves.moves}
    missing = {n for names in REFERENCE_MOVES.values() for n in names} - set(listed)
    assert not missing
    sway = listed["sway"]
    assert sway.controls_body and not sway.controls_legs and sway.is_extendable
    assert "sway horizontal default=0.08 min=-0.15 max=0.15" in moves.move_param_config
    assert "sway pronounced default=0.5 min=0 max=1" in moves.move_param_config
    assert "set_color left_color.red default=255 min=0 max=255" in moves.move_param_config
    assert listed["sit"].exit_state == seq_pb2.MoveInfo.TRANSITION_STATE_SIT
    assert listed["sit"].min_time == 3.0  # "requires at least 3 seconds"
    assert listed["turn_2step"].move_length_slices == 8 and not listed["turn_2step"].is_extendable
    assert listed["stand_to_kneel"].exit_state == seq_pb2.MoveInfo.TRANSITION_STATE_KNEEL
    assert list(listed["kneel_clap"].entrance_states) == [
        seq_pb2.MoveInfo.TRANSITION_STATE_KNEEL]
    assert listed["figure8_move"].controls_arm and listed["gripper"].controls_gripper
    assert listed["buzzer_note"].controls_audio_visual_buzzer
    for name in REFERENCE_MOVES["arm"]:
        assert listed[name].display.category == seq_pb2.ChoreographerDisplayInfo.CATEGORY_ARM


def test_uploads_are_validated(sim, robot):
    chor = client(robot)
    assert not chor.upload_choreography(sequence("short_sway")).warnings
    assert not chor.upload_choreography(sequence("long_routine")).warnings
    assert {"short_sway", "long_routine"} <= set(chor.list_all_sequences().known_sequences)

    bad = sequence("out_of_range")
    with pytest.raises(InvalidRequestError) as strict:
        chor.upload_choreography(bad, non_strict_parsing=False)
    assert "horizontal = 0.5 is outside [-0.15, 0.15]" in strict.value.response.warnings[0]
    assert "out_of_range" not in chor.list_all_sequences().known_sequences
    lenient = chor.upload_choreography(bad, non_strict_parsing=True)
    assert "using 0.15" in lenient.warnings[0]  # corrected and kept
    assert "out_of_range" in chor.list_all_sequences().known_sequences

    broken = sequence("short_sway")
    broken.name = "broken"
    broken.moves.add(type="moonwalk", start_slice=8)
    overlap = broken.moves.add(type="rotate_body", start_slice=1, requested_slices=4)
    overlap.rotate_body_params.rotation.yaw.value = 0.1
    for strictness in (True, False):
        with pytest.raises(InvalidRequestError) as refused:
            chor.upload_choreography(broken, non_strict_parsing=strictness)
        warnings = "\n".join(refused.value.response.warnings)
        assert "unknown move type 'moonwalk'" in warnings
        assert "both control body during slices 1-4" in warnings
    wrong_state = seq_pb2.ChoreographySequence(name="kneel", slices_per_minute=480)
    wrong_state.moves.add(type="sit", start_slice=0)
    wrong_state.moves.add(type="turn_2step", start_slice=24)
    with pytest.raises(InvalidRequestError) as refused:
        chor.upload_choreography(wrong_state)
    assert "the robot is in TRANSITION_STATE_SIT" in refused.value.response.warnings[0]


def test_animation_upload(sim, robot):
    chor = client(robot)
    animation = convert_animation_file_to_proto(str(DATA / "head_bob.cha")).proto
    chor.upload_animated_move(animation, "head_bob")
    bob = next(m for m in chor.list_all_moves().moves if m.name == "head_bob")
    assert bob.move_length_slices == 16  # 2 s at 120 bpm, 4 slices a beat
    seq = seq_pb2.ChoreographySequence(name="nodding", slices_per_minute=480)
    bobbing = seq.moves.add(type="head_bob", start_slice=0, requested_slices=16)
    bobbing.animate_params.speed.value = 1
    assert not chor.upload_choreography(seq).warnings
    single = seq_pb2.Animation(name="blip", controls_body=True)
    single.animation_keyframes.add(time=0.0)
    with pytest.raises(AnimationValidationFailedError):
        chor.upload_animated_move(single, "blip")


def test_execute_with_status_then_interrupt(sim, robot):
    chor = client(robot)
    chor.upload_choreography(sequence("short_sway"))
    chor.upload_choreography(sequence("long_routine"))
    with operated(robot):
        with pytest.raises(RobotCommandIssuesError):  # motors off
            chor.execute_choreography("short_sway", time.time() + 0.5, 0)
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        with pytest.raises(ResponseError, match="UNKNOWN_SEQUENCE"):
            chor.execute_choreography("no_such_dance", time.time(), 0)
        bogus = lease_pb2.Lease(resource="body", epoch="not-this-robot", sequence=[1])
        with pytest.raises(LeaseUseError):
            chor.execute_choreography("short_sway", time.time(), 0, lease=bogus)

        start = time.time() + 1.0
        response = chor.execute_choreography("short_sway", start, 0)
        assert response.execution_id > 0
        status, _ = chor.get_choreography_status()
        assert status.status == Status.STATUS_WAITING_FOR_START_TIME
        assert status.sequence_name == "short_sway" and status.sequence_slices == 8
        rest = odom_tform_body(robot)
        assert wait_for(lambda: chor.get_choreography_status()[0].status
                        == Status.STATUS_DANCING, 3.0)
        assert time.time() >= start - 0.05  # not before the requested start
        status, _ = chor.get_choreography_status()
        assert [m.move.type for m in status.active_moves] == ["sway"]
        assert wait_for(lambda: abs(odom_tform_body(robot).y - rest.y) > 0.03, 1.0,
                        period=0.01)  # the body sways sideways (0.1 m)
        assert wait_for(lambda: chor.get_choreography_status()[0].status
                        == Status.STATUS_COMPLETED_SEQUENCE, 3.0)
        done = odom_tform_body(robot)
        assert math.hypot(done.x - rest.x, done.y - rest.y) < 0.01  # back to its pose

        standing = {j.name: j.position.value for j in
                    state_of(robot).kinematic_state.joint_states}
        chor.execute_choreography("long_routine", time.time(), 0)

        def legs_stepping():
            now = state_of(robot).kinematic_state.joint_states
            return max(abs(j.position.value - standing[j.name]) for j in now
                       if j.name.endswith(".kn")) > 0.05

        assert wait_for(legs_stepping, 3.0)  # the step and turn lift the feet in turn
        assert wait_for(lambda: chor.get_choreography_status()[0].current_slice > 6, 3.0)
        turned_from = odom_tform_body(robot).rot.to_yaw()
        assert wait_for(lambda: abs(odom_tform_body(robot).rot.to_yaw() - turned_from) > 0.2,
                        3.0)  # the turn (slices 4-12) turns the robot
        commander(robot).robot_command(RobotCommandBuilder.stop_command())
        assert wait_for(lambda: chor.get_choreography_status()[0].status
                        == Status.STATUS_INTERRUPTED, 1.0)
        slice_at_stop = chor.get_choreography_status()[0].current_slice
        assert holds(lambda: chor.get_choreography_status()[0].current_slice == slice_at_stop,
                     0.3)


def test_withheld_license_refuses_choreography(certs_dir):
    with running_sim(certs_dir, withheld_features=("choreography",)) as spot:
        robot = connect(spot)
        with pytest.raises(InvalidRequestError, match="choreography"):
            client(robot).list_all_moves()
        with pytest.raises(InvalidRequestError, match="choreography"):
            client(robot).upload_choreography(sequence("short_sway"))


def test_recorded_state_becomes_an_animation_and_a_dance_is_logged(sim, robot, tmp_path):
    """A manual recording of the robot walking (started, extended by its session id,
    stopped), downloaded in chunks, holds 50 keyframes a second of its joints and its body in
    the animation frame (the footprint where recording began); the SDK turns it into an
    animation file the robot accepts as a move. A choreography is logged by itself."""
    chor = client(robot)
    Log = seq_pb2.DownloadRobotStateLogRequest
    with pytest.raises(NoRecordedInformation):
        chor.download_robot_state_log(Log.LOG_TYPE_MANUAL)
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        start_pose = odom_tform_body(robot)
        session = chor.start_recording_state(1.0).recording_session_id
        assert session > 0
        with pytest.raises(UnknownRecordingSessionId):
            chor.start_recording_state(5.0, session + 1)
        chor.start_recording_state(5.0, session)  # extended: would have ended after 1 s
        started = time.time()
        commander(robot).robot_command(RobotCommandBuilder.synchro_velocity_command(
            v_x=0.5, v_y=0.0, v_rot=0.0), end_time_secs=time.time() + 1.5)
        time.sleep(2.0)  # sleep: past the walk's 1.5 s end (velocity has no feedback)
        chor.stop_recording_state()
        recorded_for = time.time() - started
        walked = odom_tform_body(robot)
        time.sleep(0.3)  # sleep: a span after the stop that the log must not hold
        status, log = chor.download_robot_state_log(Log.LOG_TYPE_MANUAL)
        assert status == seq_pb2.DownloadRobotStateLogResponse.STATUS_OK
        frames = log.key_frames
        assert 50 * recorded_for * 0.8 < len(frames) <= 50 * (recorded_for + 0.5)
        first, last = frames[0].animation_tform_body, frames[-1].animation_tform_body
        assert (first.position.x, first.position.y) == pytest.approx((0.0, 0.0), abs=0.01)
        assert first.position.z == pytest.approx(0.52, abs=0.05)  # the body's standing height
        moved = math.hypot(walked.x - start_pose.x, walked.y - start_pose.y)
        assert moved > 0.4 and last.position.x == pytest.approx(moved, abs=0.05)
        assert frames[-1].joint_angles.fl.knee < -0.5 and frames[-1].foot_contact_state.fl_contact
        cha = chor.choreography_log_to_animation_file("walked", str(tmp_path), False,
                                                      "truncatable")
        animation = convert_animation_file_to_proto(str(tmp_path / cha)).proto
        assert len(animation.animation_keyframes) == len(frames)
        chor.upload_animated_move(animation, "walked")
        assert "walked" in {m.name for m in chor.list_all_moves().moves}

        chor.upload_choreography(sequence("short_sway"))
        chor.execute_choreography("short_sway", time.time(), 0)
        assert wait_for(lambda: chor.get_choreography_status()[0].status
                        == Status.STATUS_COMPLETED_SEQUENCE, 5.0)
        time.sleep(0.2)  # sleep: a span after the dance that the log must not hold
        status, log = chor.download_robot_state_log(Log.LOG_TYPE_LAST_CHOREOGRAPHY)
        sways = [f.animation_tform_body.position.y for f in log.key_frames]
        assert max(sways) - min(sways) > 0.05  # the body swayed sideways (0.1 m)


def test_a_late_physics_step_leaves_no_gap_in_a_state_log():
    """A robot logs at its controller's rate: where a physics step comes 80 ms late, the
    keyframes due meanwhile are there, on the way from the last state to the new one."""
    import numpy as np
    from bosdyn.client.math_helpers import Quat, SE3Pose

    from spot_sim.choreography.state_log import KEYFRAME_PERIOD_NS, Log
    log = Log(SE3Pose(0, 0, 0, Quat()))
    ms = 1_000_000
    for now, x in ((0, 0.0), (20 * ms, 0.02), (100 * ms, 0.10), (105 * ms, 0.105)):
        log.add(now, SE3Pose(x, 0, 0, Quat.from_yaw(x)), np.full(12, x), False, 0)
    stamps = [f.timestamp.ToNanoseconds() for f in log.frames]
    assert stamps == [i * KEYFRAME_PERIOD_NS for i in range(6)]  # 0 .. 100 ms, none at 105
    xs = [f.animation_tform_body.position.x for f in log.frames]
    assert xs == pytest.approx([0.0, 0.02, 0.04, 0.06, 0.08, 0.10])
    knees = [f.joint_angles.fl.knee for f in log.frames]
    assert knees == pytest.approx(xs)
    log.add(2_000 * ms, SE3Pose(0, 0, 0, Quat()), np.zeros(12), False, 0)  # a clock jump
    assert len(log.frames) == 7 and log.frames[-1].timestamp.ToNanoseconds() == 2_000 * ms
