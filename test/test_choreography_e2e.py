"""End to end: choreography through ROS -> driver -> gRPC -> simulated Spot: the move list
with its specifications, uploads of Choreographer files (a long routine using many move
types, an animation), a refused out-of-range sequence that never reaches the robot, a dance
executed with feedback to its end while the body moves in /tf, and a cancel mid-dance."""

import math
import time
from pathlib import Path

import pytest
from geometry_msgs.msg import Twist
from ros_harness import burst, driver_world, odom_tform
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from conftest import holds, part, wait_for
from spot_msgs.action import ExecuteChoreography
from spot_msgs.msg import ChoreographyStatus
from spot_msgs.srv import (
    ListChoreographyMoves,
    ListChoreographySequences,
    RecordedStateToAnimation,
    StartRecordingState,
    UploadAnimation,
    UploadChoreography,
)
from spot_sim.body.base import Base

DATA = Path(__file__).parent / "data" / "choreography"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with driver_world(tmp_path_factory, "choreography_test_client",
                      params={"choreography_status_rate": 10.0, "enable_perception": False,
                              # a 15 s dance must not end on a loaded CI machine's 2 s stall
                              # of the in-process robot (outage detection is
                              # test_core_resilience_e2e's)
                              "link_timeout": 5.0},
                      subscriptions=(("/status/choreography", ChoreographyStatus),
                                     ("/tf", TFMessage),
                                     ("/tf_static", TFMessage, {"latched": True})),
                      first="/status/choreography",
                      ready=("claim", "power_on", "stand")) as world:
        yield world


def upload(ros, file: str, **fields):
    return ros.call(UploadChoreography, "/choreography/upload",
                    UploadChoreography.Request(path=str(DATA / file), **fields))


def dance(ros, goal, feedback, cancel_when=None, timeout=60.0):
    client = ros.action_client(ExecuteChoreography, "/choreography/execute")
    handle = ros.wait_future(client.send_goal_async(
        goal, feedback_callback=lambda msg: feedback.append(msg.feedback)))
    assert handle.accepted
    if cancel_when is not None:
        assert ros.wait_for(lambda: feedback and cancel_when(feedback[-1]), timeout=30)
        ros.wait_future(handle.cancel_goal_async())
    return ros.wait_future(handle.get_result_async(), timeout=timeout).result


def test_moves_listed_with_their_specifications(world):
    _sim, _driver, ros = world
    response = ros.call(ListChoreographyMoves, "/choreography/list_moves")
    assert response.success, response.message
    moves = {m.name: m for m in response.moves}
    assert len(moves) >= 20
    sway = {p.name: p for p in moves["sway"].parameters}
    assert (sway["horizontal"].minimum, sway["horizontal"].maximum) == (-0.15, 0.15)
    assert moves["sit"].exit_state == "TRANSITION_STATE_SIT"
    assert moves["turn_2step"].controls == ["legs"]


def test_out_of_range_sequence_refused_before_upload(world):
    sim, _driver, ros = world
    refused = upload(ros, "out_of_range.csq")
    assert not refused.success
    assert ("move 0 (sway, slice 0): parameter horizontal = 0.5 is outside the allowed range "
            "[-0.15, 0.15]") in refused.message, refused.message
    assert "out_of_range" not in sim.choreography.sequences  # nothing reached the robot
    missing = upload(ros, "no_such_file.csq")
    assert not missing.success and "not found" in missing.message
    garbage = DATA.parent / "garbage.csq"
    garbage.write_bytes(b"\xff\xfe not a sequence")
    try:
        bad = ros.call(UploadChoreography, "/choreography/upload",
                       UploadChoreography.Request(path=str(garbage)))
    finally:
        garbage.unlink()
    assert not bad.success and "neither a text-format nor a binary" in bad.message


def test_upload_sequences_and_an_animation(world):
    sim, _driver, ros = world
    for name in ("long_routine.csq", "short_sway.csq"):
        response = upload(ros, name)
        assert response.success and not response.warnings, response.message
    renamed = upload(ros, "short_sway.csq", name="encore")
    assert renamed.success and renamed.name == "encore"
    listed = ros.call(ListChoreographySequences, "/choreography/list_sequences")
    assert {"long_routine", "short_sway", "encore"} <= set(listed.names)
    animation = ros.call(UploadAnimation, "/choreography/upload_animation",
                         UploadAnimation.Request(path=str(DATA / "head_bob.cha")))
    assert animation.success and animation.name == "head_bob", animation.message
    moves = ros.call(ListChoreographyMoves, "/choreography/list_moves").moves
    assert "head_bob" in {m.name for m in moves}
    assert len(sim.choreography.sequences["long_routine"].moves) == 25


def test_dance_to_the_end_with_feedback_while_the_body_moves(world):
    _sim, _driver, ros = world
    tf_before = len(ros.received("/tf"))
    feedback = []
    result = dance(ros, ExecuteChoreography.Goal(sequence_name="long_routine", start_delay=0.5),
                   feedback)
    assert result.success, result.message
    assert result.status == "STATUS_COMPLETED_SEQUENCE"
    statuses = [f.status for f in feedback]
    assert statuses[0] == "STATUS_WAITING_FOR_START_TIME" and "STATUS_DANCING" in statuses
    danced = {move for f in feedback for move in f.executing_moves}
    assert len(danced) >= 12 and {"sway", "turn_2step", "jump", "sit", "stand_up"} <= danced
    times = [f.time_to_end for f in feedback if f.status == "STATUS_DANCING"]
    assert times[0] > times[-1] and times[0] == pytest.approx(116 * 60 / 480, abs=0.6)
    poses = [(t.transform.translation.z, t.transform.rotation.z)
             for msg in ros.received("/tf")[tf_before:] for t in msg.transforms
             if t.child_frame_id == "body"]
    heights = [z for z, _ in poses]
    assert max(heights) - min(heights) > 0.05  # swaying, twerking, sitting...
    assert len({round(q, 3) for _, q in poses}) > 20  # turning and rotating
    assert ros.wait_for(lambda: any(
        s.status == "STATUS_COMPLETED_SEQUENCE" and s.sequence_name == "long_routine"
        for s in ros.received("/status/choreography")[-10:]), timeout=2)


def test_cancel_mid_dance_stops_it(world):
    _sim, _driver, ros = world
    feedback = []
    result = dance(ros, ExecuteChoreography.Goal(sequence_name="long_routine"), feedback,
                   cancel_when=lambda f: f.current_slice > 10)
    assert "canceled" in result.message
    assert ros.wait_for(lambda: ros.latest("/status/choreography").status
                        == "STATUS_INTERRUPTED", timeout=2)
    stopped = ros.latest("/status/choreography").current_slice
    assert stopped < 20
    before = odom_tform(ros, "body")

    def still() -> bool:
        after = odom_tform(ros, "body")
        return math.hypot(after.x - before.x, after.y - before.y) < 0.01 \
            and ros.latest("/status/choreography").current_slice == stopped
    assert holds(still, 0.5)


def test_unknown_sequence_and_bad_start_refused(world):
    sim, _driver, ros = world
    executions = sim.choreography._executions
    result = dance(ros, ExecuteChoreography.Goal(sequence_name="nope"), [])
    assert not result.success and "unknown sequence name 'nope'" in result.message
    result = dance(ros, ExecuteChoreography.Goal(sequence_name="short_sway",
                                                 start_slice=float("nan")), [])
    assert not result.success and "start_slice" in result.message
    assert sim.choreography._executions == executions


def test_a_burst_of_callers_is_answered(world):
    _sim, _driver, ros = world
    responses, elapsed = burst(ros, ListChoreographySequences, "/choreography/list_sequences",
                               100, 20.0)
    assert all(r is not None and r.success and "long_routine" in r.names for r in responses)
    assert elapsed < 10.0, elapsed


def test_recorded_state_becomes_an_animation_the_robot_lists_as_a_move(world, tmp_path):
    """Recording the robot walking by cmd_vel (started, a wrong session refused, stopped),
    turned into a Choreographer animation by the SDK's converter: written, uploaded, listed
    as a move. Bad requests are refused with the reason and change nothing."""
    sim, _driver, ros = world
    to_animation = "/choreography/recorded_state_to_animation"
    nothing = ros.call(RecordedStateToAnimation, to_animation,
                       RecordedStateToAnimation.Request(name="nothing"))
    assert not nothing.success and "no recording" in nothing.message, nothing.message
    start = "/choreography/start_recording_state"
    too_long = ros.call(StartRecordingState, start, StartRecordingState.Request(duration=400.0))
    assert not too_long.success and "duration must be within" in too_long.message
    started = ros.call(StartRecordingState, start, StartRecordingState.Request(duration=5.0))
    assert started.success and started.status == "STATUS_OK", started.message
    wrong = ros.call(StartRecordingState, start, StartRecordingState.Request(
        duration=5.0, continue_session_id=started.recording_session_id + 7))
    assert not wrong.success and "STATUS_UNKNOWN_RECORDING_SESSION_ID" in wrong.message
    publisher = ros.publisher(Twist, "/cmd_vel", 10)
    try:
        forward = Twist()
        forward.linear.x = 0.4
        for _ in range(20):
            publisher.publish(forward)
            time.sleep(0.05)  # sleep: cmd_vel at 20 Hz, as a teleop sends it
    finally:
        ros.node.destroy_publisher(publisher)
    assert wait_for(lambda: part(sim.robot, Base).still, 3.0)  # the walk recorded to its end
    stopped = ros.call(Trigger, "/choreography/stop_recording_state")
    assert stopped.success, stopped.message
    for request, reason in ((RecordedStateToAnimation.Request(name="../up"), "must be 1-64"),
                            (RecordedStateToAnimation.Request(name="walked", options=["bpm"]),
                             "unknown animation option 'bpm'")):
        refused = ros.call(RecordedStateToAnimation, to_animation, request)
        assert not refused.success and reason in refused.message, refused.message
    made = ros.call(RecordedStateToAnimation, to_animation, RecordedStateToAnimation.Request(
        name="walked", options=["truncatable"], directory=str(tmp_path), upload=True))
    assert made.success, made.message
    assert made.path == str(tmp_path / "walked.cha")
    assert (tmp_path / "walked.cha").read_text() == made.animation
    assert "truncatable" in made.animation.splitlines()
    assert made.keyframes > 50 and made.duration == pytest.approx(made.keyframes / 50, rel=0.1)
    moves = ros.call(ListChoreographyMoves, "/choreography/list_moves")
    assert "walked" in {m.name for m in moves.moves}
