"""The simulated robot's move catalog danced through the SDK's own ChoreographyClient: the
SDK's upload example dance, arm and gripper moves on an arm robot, kneeling, transitions that
need time, absolute turns in the dance frame, light moves and their reported status."""

import os
import subprocess
import sys
import time

import pytest
from bosdyn.api.spot import choreography_params_pb2 as params_pb2
from bosdyn.api.spot import choreography_sequence_pb2 as seq_pb2
from bosdyn.choreography.client.choreography import ChoreographyClient
from bosdyn.client.exceptions import InvalidRequestError
from bosdyn.client.power import power_on_motors
from bosdyn.client.robot_command import blocking_stand
from google.protobuf import text_format
from test_body_sim import commander, odom_tform_body, operated, state_of, wait_for

from conftest import PASSWORD, SDK_DIR, USERNAME, connect, running_sim

Status = seq_pb2.ChoreographyStatusResponse
SDK_DANCE = "python/examples/upload_choreographed_sequence/default_dance.csq"


def client(robot) -> ChoreographyClient:
    return robot.ensure_client(ChoreographyClient.default_service_name)


def sdk_example_dance() -> seq_pb2.ChoreographySequence:
    """The SDK's upload example dance: from the spot-sdk checkout (conftest.SDK_DIR) if any,
    otherwise the same moves written here (13-slice steps and holds, hind-pair steps, butt
    circles of radius 0.2 about each pivot, an absolute ``turn_2step``)."""
    if SDK_DIR:
        return text_format.Parse((SDK_DIR / SDK_DANCE).read_text(),
                                 seq_pb2.ChoreographySequence())
    seq = seq_pb2.ChoreographySequence(name="Upload Choreography Example",
                                       slices_per_minute=520.0)

    def step(start, slices, foot, second=params_pb2.LEG_NO_LEG, y=0.0, z=0.0):
        move = seq.moves.add(type="step", start_slice=start, requested_slices=slices)
        move.step_params.foot, move.step_params.second_foot = foot, second
        move.step_params.swing_waypoint.y.value = y
        move.step_params.swing_waypoint.z.value = z

    def hold(start, roll, yaw):
        move = seq.moves.add(type="body_hold", start_slice=start, requested_slices=13)
        rotation = move.body_hold_params.rotation
        rotation.roll.value, rotation.pitch.value, rotation.yaw.value = roll, -0.25, yaw
        move.body_hold_params.translation.z.value = 0.08
        move.body_hold_params.entry_slices.value = move.body_hold_params.exit_slices.value = 1

    def circle(start, pivot):
        move = seq.moves.add(type="butt_circle", start_slice=start, requested_slices=20)
        move.butt_circle_params.radius.value = 0.2
        move.butt_circle_params.beats_per_circle.value = 2.0
        move.butt_circle_params.pivot = pivot

    for offset in (0, 35):
        step(offset, 13, params_pb2.LEG_FRONT_LEFT)
        hold(offset, 0.2, -0.3)
        step(offset + 13, 13, params_pb2.LEG_FRONT_RIGHT)
        hold(offset + 13, -0.2, 0.3)
    for start in (26, 30, 61, 65):
        step(start, 4, params_pb2.LEG_HIND_LEFT, params_pb2.LEG_HIND_RIGHT)
    circle(69, params_pb2.PIVOT_FRONT)
    step(78, 8, params_pb2.LEG_FRONT_LEFT, y=0.2, z=0.15)
    circle(89, params_pb2.PIVOT_HIND)
    step(98, 8, params_pb2.LEG_HIND_RIGHT, y=-0.2, z=0.15)
    turn = seq.moves.add(type="turn_2step", start_slice=106, requested_slices=8)
    turn.turn_params.yaw.value = 1e-6
    turn.turn_params.absolute.value = True
    return seq


def ready(robot):
    power_on_motors(robot.ensure_client("power"), timeout_sec=10)
    blocking_stand(commander(robot), timeout_sec=10)


def dance(robot, sequence, timeout: float) -> None:
    chor = client(robot)
    chor.upload_choreography(sequence, non_strict_parsing=False)
    chor.execute_choreography(sequence.name, time.time() + 0.2, 0)
    assert wait_for(lambda: chor.get_choreography_status()[0].status
                    == Status.STATUS_COMPLETED_SEQUENCE, timeout), \
        Status.Status.Name(chor.get_choreography_status()[0].status)


def test_the_sdk_example_dance_and_turns_in_the_dance_frame(sim, robot):
    seq = sdk_example_dance()
    assert not client(robot).upload_choreography(seq, non_strict_parsing=False).warnings
    with operated(robot):
        ready(robot)
        start_yaw = odom_tform_body(robot).rot.to_yaw()
        turns = seq_pb2.ChoreographySequence(name="turns", slices_per_minute=480)
        turns.moves.add(type="turn_2step", start_slice=0).turn_params.yaw.value = 0.8
        back = turns.moves.add(type="turn_2step", start_slice=8).turn_params
        back.yaw_is_absolute.value, back.absolute_yaw.value = True, -0.4
        chor = client(robot)
        chor.upload_choreography(turns)
        chor.execute_choreography("turns", time.time(), 0)
        assert wait_for(lambda: chor.get_choreography_status()[0].current_slice > 8, 3.0)
        assert odom_tform_body(robot).rot.to_yaw() == pytest.approx(start_yaw + 0.8, abs=0.1)
        assert wait_for(lambda: chor.get_choreography_status()[0].status
                        == Status.STATUS_COMPLETED_SEQUENCE, 3.0)
        # -0.4 in the dance frame (the robot's pose when the dance began), not from +0.8
        assert odom_tform_body(robot).rot.to_yaw() == pytest.approx(start_yaw - 0.4, abs=0.05)
        dance(robot, seq, 25.0)  # 114 slices at 520 a minute: 13 s
        # it ends with a turn to yaw 0 of its dance frame: where it began
        assert odom_tform_body(robot).rot.to_yaw() == pytest.approx(start_yaw - 0.4, abs=0.05)


def test_transitions_need_their_time_and_kneel_moves_need_a_kneel(sim, robot):
    chor = client(robot)
    quick = seq_pb2.ChoreographySequence(name="quick_sit", slices_per_minute=480)
    quick.moves.add(type="sit", requested_slices=4)  # 0.5 s
    with pytest.raises(InvalidRequestError) as refused:
        chor.upload_choreography(quick, non_strict_parsing=False)
    assert "sit needs at least 3 s, 24 slices at 480 slices per minute" in \
        refused.value.response.warnings[0]
    assert "using 24" in chor.upload_choreography(quick, non_strict_parsing=True).warnings[0]

    clap = seq_pb2.ChoreographySequence(name="clap_standing", slices_per_minute=480)
    clap.moves.add(type="kneel_clap")
    with pytest.raises(InvalidRequestError) as refused:
        chor.upload_choreography(clap)
    assert "starts from TRANSITION_STATE_KNEEL, but the robot is in TRANSITION_STATE_STAND" \
        in refused.value.response.warnings[0]

    colour = seq_pb2.ChoreographySequence(name="too_red", slices_per_minute=480)
    colour.moves.add(type="set_color").set_color_params.left_color.red.value = 300.0
    with pytest.raises(InvalidRequestError) as refused:
        chor.upload_choreography(colour, non_strict_parsing=False)
    assert "left_color.red = 300 is outside [0, 255]" in refused.value.response.warnings[0]

    arm = seq_pb2.ChoreographySequence(name="no_arm", slices_per_minute=480)
    arm.moves.add(type="unstow")
    with pytest.raises(InvalidRequestError) as refused:
        chor.upload_choreography(arm)
    assert "unstow moves the arm and this robot has none" in refused.value.response.warnings[0]


def test_kneel_routine_with_lights_reported(sim, robot):
    seq = seq_pb2.ChoreographySequence(name="kneel", slices_per_minute=480)
    seq.moves.add(type="stand_to_kneel", start_slice=0, requested_slices=16)
    leg = seq.moves.add(type="kneel_leg_move", start_slice=16, requested_slices=16)
    leg.kneel_leg_move_params.hip_y.value = 1.2
    leg.kneel_leg_move_params.knee.value = -0.6
    seq.moves.add(type="kneel_clap", start_slice=32)
    seq.moves.add(type="kneel_circles", start_slice=36, requested_slices=8)
    seq.moves.add(type="kneel_to_stand", start_slice=44, requested_slices=20)
    light = seq.moves.add(type="ripple_color", start_slice=16, requested_slices=20)
    light.ripple_color_params.main.blue.value = 255.0
    chor = client(robot)
    with operated(robot):
        ready(robot)
        standing = {j.name: j.position.value
                    for j in state_of(robot).kinematic_state.joint_states}
        level_pitch = odom_tform_body(robot).rot.to_pitch()
        chor.upload_choreography(seq)
        chor.execute_choreography("kneel", time.time(), 0)
        assert wait_for(lambda: chor.get_choreography_status()[0].current_slice > 25, 5.0)
        status, _ = chor.get_choreography_status()
        assert {m.move.type for m in status.active_moves} == {"kneel_leg_move", "ripple_color"}
        joints = {j.name: j.position.value for j in state_of(robot).kinematic_state.joint_states}
        assert joints["fl.hy"] == pytest.approx(1.2, abs=0.15)  # the front legs moved
        assert abs(joints["hl.kn"] - standing["hl.kn"]) < 0.05  # the hind legs stay put
        assert odom_tform_body(robot).rot.to_pitch() < level_pitch - 0.2  # kneeling: nose up
        assert wait_for(lambda: chor.get_choreography_status()[0].status
                        == Status.STATUS_COMPLETED_SEQUENCE, 10.0)
        assert odom_tform_body(robot).rot.to_pitch() == pytest.approx(level_pitch, abs=0.02)


@pytest.fixture
def arm_robot(certs_dir):
    with running_sim(certs_dir, has_arm=True) as spot:
        robot = connect(spot)
        yield robot
        robot.time_sync.stop()


def arm_joints(robot) -> dict[str, float]:
    return {j.name: j.position.value for j in state_of(robot).kinematic_state.joint_states
            if j.name.startswith("arm0.")}


def test_arm_moves_move_the_simulated_arm(arm_robot):
    robot = arm_robot
    seq = seq_pb2.ChoreographySequence(name="arm_dance", slices_per_minute=360)
    seq.moves.add(type="unstow", start_slice=0, requested_slices=8)
    move = seq.moves.add(type="arm_move", start_slice=8, requested_slices=8)
    move.arm_move_params.shoulder_0.value = 0.5
    move.arm_move_params.gripper.value = -1.0
    seq.moves.add(type="figure8_move", start_slice=20, requested_slices=8)
    grip = seq.moves.add(type="gripper", start_slice=28, requested_slices=4)
    grip.gripper_params.angle.value = 0.0
    seq.moves.add(type="nod", start_slice=32)
    seq.moves.add(type="stow", start_slice=36, requested_slices=8)
    seq.moves.add(type="sway", start_slice=0, requested_slices=16)  # the body at the same time
    chor = client(robot)
    with operated(robot):
        ready(robot)
        stowed = arm_joints(robot)
        chor.upload_choreography(seq)
        chor.execute_choreography("arm_dance", time.time(), 0)
        slice_of = lambda: chor.get_choreography_status()[0].current_slice  # noqa: E731
        assert wait_for(lambda: slice_of() > 16.5, 6.0, period=0.02)  # arm_move done
        held = arm_joints(robot)
        assert held["arm0.sh0"] == pytest.approx(0.5, abs=0.05)  # arm_move's target
        assert held["arm0.f1x"] == pytest.approx(-1.0, abs=0.05)  # and its gripper angle
        assert wait_for(lambda: slice_of() > 24, 3.0, period=0.02)
        assert max(abs(arm_joints(robot)[n] - held[n]) for n in held) > 0.02  # figure 8
        assert wait_for(lambda: chor.get_choreography_status()[0].status
                        == Status.STATUS_COMPLETED_SEQUENCE, 8.0)
        end = arm_joints(robot)
        assert end["arm0.f1x"] == pytest.approx(0.0, abs=0.05)  # the gripper move closed it
        assert all(end[n] == pytest.approx(stowed[n], abs=0.05) for n in stowed
                   if n != "arm0.f1x")  # stowed again


def test_a_dance_started_sitting_stands_up_first(sim, robot):
    """As the SDK's upload example expects: power on, execute, and the robot gets itself into
    the first move's position."""
    seq = seq_pb2.ChoreographySequence(name="from_sitting", slices_per_minute=480)
    seq.moves.add(type="sway", requested_slices=8)
    chor = client(robot)
    chor.upload_choreography(seq)
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        sitting = odom_tform_body(robot).z
        chor.execute_choreography("from_sitting", time.time() + 1.5, 0)
        assert wait_for(lambda: chor.get_choreography_status()[0].status
                        == Status.STATUS_COMPLETED_SEQUENCE, 6.0)
        assert odom_tform_body(robot).z > sitting + 0.2  # standing


def test_the_sdk_upload_example_runs_unmodified(tmp_path, sdk_examples):
    example = SDK_DIR / SDK_DANCE
    with running_sim(tmp_path / "certs", estop_required=False) as spot:
        env = {**os.environ, "BOSDYN_CLIENT_USERNAME": USERNAME,
               "BOSDYN_CLIENT_PASSWORD": PASSWORD}
        result = subprocess.run(
            [sys.executable, "-m", "spot_sim.sdk_program", "--port", str(spot.port), "--ca",
             str(spot.ca_cert), str(example.with_name("upload_choreographed_sequence.py")),
             "127.0.0.1"], capture_output=True, text=True, timeout=90, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Sequence uploaded" in result.stdout
        dance = spot.choreography.dance
        assert dance is not None and dance.status == Status.STATUS_COMPLETED_SEQUENCE
        assert not spot.robot.powered  # the program powers the robot off at the end
