"""Choreography pieces of the driver that need no robot: reading sequence and animation
files, the robot's move specifications and the check of a sequence against them, the status
and feedback messages."""

import math
from pathlib import Path

import pytest
from bosdyn.api.spot import choreography_sequence_pb2
from bosdyn.api.spot import choreography_sequence_pb2 as seq_pb2

from spot_driver.choreography import conversions as chor
from spot_driver.choreography.files import read_animation, read_sequence
from spot_driver.choreography.specs import Bounds, Move, check_sequence, length_slices, parse_moves
from spot_driver.core.errors import CommandError

DATA = Path(__file__).parent / "data" / "choreography"


def specs():
    response = seq_pb2.ListAllMovesResponse(move_param_config=(
        "# comment\n"
        "sway horizontal default=0.08 min=-0.15 max=0.15\n"
        "rotate_body rotation.yaw default=0.3 min=-0.5 max=0.5\n"
        "ghost x default=0 min=0 max=1\n"
        "sway broken default=x min=0 max=1\n"))
    response.moves.add(name="sway", move_length_slices=2, is_extendable=True,
                       min_move_length_slices=1, max_move_length_slices=16, controls_body=True)
    response.moves.add(name="rotate_body", move_length_slices=4, controls_body=True)
    response.moves.add(name="sit", move_length_slices=8, is_extendable=True,
                       min_move_length_slices=1, max_move_length_slices=1024, min_time=3.0,
                       controls_legs=True, controls_body=True)
    return parse_moves(response)


def test_parse_moves_reads_bounds_and_tracks():
    moves = specs()
    assert set(moves) == {"sway", "rotate_body", "sit"}
    assert moves["sway"].parameters["horizontal"].maximum == 0.15
    assert "broken" not in moves["sway"].parameters
    assert moves["sway"].controls == ["body"]


def test_check_sequence_names_move_parameter_value_and_range():
    moves = specs()
    assert check_sequence(read_sequence(str(DATA / "short_sway.csq")), moves) == []
    bad = read_sequence(str(DATA / "out_of_range.csq"))
    (problem,) = check_sequence(bad, moves)
    assert problem == ("move 0 (sway, slice 0): parameter horizontal = 0.5 is outside the "
                       "allowed range [-0.15, 0.15]")
    bad.moves.add(type="moonwalk", start_slice=4)
    bad.moves.add(type="rotate_body", start_slice=8, requested_slices=6)
    nan = bad.moves.add(type="sway", start_slice=12)
    nan.sway_params.horizontal.value = float("nan")
    bad.slices_per_minute = 0
    problems = check_sequence(bad, moves)
    assert "slices_per_minute must be a positive number, not 0.0" in problems
    assert "move 1 (moonwalk, slice 4): the robot has no move 'moonwalk'" in problems
    assert ("move 2 (rotate_body, slice 8): requested_slices 6 is outside the allowed range "
            "[4, 4]") in problems
    assert any("move 3 (sway, slice 12): parameter horizontal = nan" in p for p in problems)
    assert length_slices(read_sequence(str(DATA / "short_sway.csq")), moves) == 8


def test_check_sequence_knows_moves_that_need_time():
    moves = specs()
    quick = seq_pb2.ChoreographySequence(name="quick", slices_per_minute=480)
    quick.moves.add(type="sit", requested_slices=23)
    assert check_sequence(quick, moves) == [
        "move 0 (sit, slice 0): sit needs at least 3 s, 24 slices at 480 slices per minute"]
    quick.moves[0].requested_slices = 24
    assert check_sequence(quick, moves) == []


def test_read_sequence_formats_and_errors(tmp_path):
    text = read_sequence(str(DATA / "long_routine.csq"))
    assert text.name == "long_routine" and len(text.moves) == 25
    binary = tmp_path / "dance.bin"
    binary.write_bytes(text.SerializeToString())
    assert read_sequence(str(binary), name="renamed").name == "renamed"
    unnamed = seq_pb2.ChoreographySequence(slices_per_minute=480)
    unnamed.moves.add(type="sway")
    (tmp_path / "from_file.csq").write_text(str(unnamed))
    assert read_sequence(str(tmp_path / "from_file.csq")).name == "from_file"
    with pytest.raises(CommandError, match="not found"):
        read_sequence(str(tmp_path / "absent.csq"))
    (tmp_path / "junk.csq").write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(CommandError, match="neither a text-format nor a binary"):
        read_sequence(str(tmp_path / "junk.csq"))
    (tmp_path / "empty.csq").write_text('name: "empty"\nslices_per_minute: 480\n')
    with pytest.raises(CommandError, match="has no moves"):
        read_sequence(str(tmp_path / "empty.csq"))


def test_read_animation(tmp_path):
    animation = read_animation(str(DATA / "head_bob.cha"))
    assert animation.name == "head_bob" and len(animation.animation_keyframes) == 5
    (tmp_path / "bad.cha").write_text("controls body\n\nno parameters\n\nwobble\n1\n")
    with pytest.raises(CommandError, match="cannot read animation"):
        read_animation(str(tmp_path / "bad.cha"))


def test_state_recording_requests_are_checked_before_the_robot_is_asked(tmp_path):
    from bosdyn.choreography.client.animation_file_to_proto import OPTIONS_KEYWORDS_TO_FUNCTION

    from spot_driver.choreography import recording

    assert recording.check_duration(5.0) == 5.0
    for seconds in (0.0, -1.0, math.nan, math.inf, 301.0):
        with pytest.raises(CommandError, match="duration must be within"):
            recording.check_duration(seconds)
    assert recording.check_name("walk_1-a") == "walk_1-a"
    for name in ("", "../up", "a b", "x" * 65):
        with pytest.raises(CommandError, match="must be 1-64 letters"):
            recording.check_name(name)
    assert set(recording.FLAG_OPTIONS) <= set(OPTIONS_KEYWORDS_TO_FUNCTION)  # the SDK reads them
    assert recording.check_options(["truncatable", "neutral_start"]) == \
        ["truncatable", "neutral_start"]
    with pytest.raises(CommandError, match="unknown animation option 'bpm'"):
        recording.check_options(["bpm"])
    assert recording.target_file("", "walk") is None
    assert recording.target_file(str(tmp_path), "walk") == tmp_path / "walk.cha"
    (tmp_path / "walk.cha").write_text("kept")
    with pytest.raises(CommandError, match="exists"):
        recording.target_file(str(tmp_path), "walk")
    with pytest.raises(CommandError, match="does not exist"):
        recording.target_file(str(tmp_path / "nowhere"), "walk")
    assert (tmp_path / "walk.cha").read_text() == "kept"


Status = choreography_sequence_pb2.ChoreographyStatusResponse


def test_choreography_status_and_feedback():
    status = Status(status=Status.STATUS_DANCING, execution_id=7, sequence_name="twirl",
                    current_slice=10.0, sequence_slices=70, sequence_slices_per_minute=120.0)
    status.active_moves.add().move.type = "rotate_body"
    msg = chor.status_msg(status, stamp=chor.ChoreographyStatus().header.stamp)
    assert (msg.status, msg.execution_id, msg.active_moves) == ("STATUS_DANCING", 7,
                                                               ["rotate_body"])
    feedback = chor.feedback(status)
    assert feedback.time_to_end == pytest.approx(30.0)  # 60 slices at 120 per minute
    status.status = 999  # a status a newer robot may add: named by its number
    assert chor.feedback(status).status == "999"
    status.sequence_slices_per_minute = 0.0
    assert chor.feedback(status).time_to_end == 0.0


def test_choreography_move_lists_its_parameters():
    info = choreography_sequence_pb2.MoveInfo(name="sway", move_length_slices=4,
                                              controls_legs=True)
    info.exit_state = choreography_sequence_pb2.MoveInfo.TRANSITION_STATE_STAND
    move = Move(info, {"sway.amplitude": Bounds(default=0.1, minimum=0.0, maximum=0.3)})
    msg = chor.move_msg(move)
    assert (msg.name, msg.length_slices, msg.exit_state) == ("sway", 4,
                                                             "TRANSITION_STATE_STAND")
    assert list(msg.controls) == ["legs"]
    assert [(p.name, p.minimum, p.default_value, p.maximum) for p in msg.parameters] == [
        ("sway.amplitude", 0.0, 0.1, 0.3)]
