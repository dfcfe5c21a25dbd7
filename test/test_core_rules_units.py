"""Small pure modules of several capabilities, without ROS nodes or a robot: the choreography
messages, rendered tool configuration, Trigger callbacks, camera names, the shutdown request,
the arm tasks' judgement of feedback, and the trajectory's distance to its goal."""

import math
import signal
import threading
from pathlib import Path

import pytest
from bosdyn.api import arm_command_pb2, geometry_pb2, synchronized_command_pb2
from bosdyn.api.spot import choreography_sequence_pb2

from spot_driver.body.commander import Se2Goal
from spot_driver.body.trajectory import remaining
from spot_driver.choreography import conversions as chor
from spot_driver.choreography.specs import Bounds, Move
from spot_driver.description.config_files import rendered_file
from spot_driver.errors import CommandError
from spot_driver.manipulation import tasks
from spot_driver.nodes.triggers import trigger_callback
from spot_driver.perception.cameras import UnknownCameraError, camera_sources
from spot_driver.shutdown import ShutdownRequest

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


def test_rendered_file_holds_the_rendering_for_the_prefix(tmp_path):
    template = tmp_path / "tool.yaml"
    template.write_text("frame: body\n")
    path = rendered_file(str(template), lambda text, prefix: text.replace("body",
                                                                          prefix + "body"),
                         "spot1/", ".yaml")
    assert Path(path).read_text() == "frame: spot1/body\n" and path.endswith(".yaml")
    Path(path).unlink()


class _Logger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def warning(self, line: str) -> None:
        self.lines.append(line)


class _Response:
    success, message = False, ""


def test_trigger_callback_reports_success_and_the_reason_of_a_failure():
    logger = _Logger()
    ok = trigger_callback(logger, "stand", lambda: "standing")(None, _Response())
    assert (ok.success, ok.message, logger.lines) == (True, "standing", [])

    def refuse() -> str:
        raise CommandError("not powered on; call 'power_on' first")

    refused = trigger_callback(logger, "stand", refuse)(None, _Response())
    assert (refused.success, refused.message) == (False, "not powered on; call 'power_on' "
                                                  "first")
    assert logger.lines == ["stand: not powered on; call 'power_on' first"]


def test_camera_sources_by_name():
    front = camera_sources("frontleft")
    assert (front.visual, front.depth) == ("frontleft_fisheye_image", "frontleft_depth")
    assert camera_sources("hand", color=True).visual == "hand_color_image"
    assert camera_sources("hand").visual == "hand_image"
    with pytest.raises(UnknownCameraError, match="unknown camera 'nosuch'; Spot's cameras are"):
        camera_sources("nosuch")


def test_the_first_signal_requests_shutdown_and_later_ones_are_ignored():
    repeats: list[str] = []
    request = ShutdownRequest(on_repeat=repeats.append)
    request._handle(signal.SIGTERM, None)
    request._handle(signal.SIGINT, None)
    assert request.is_set() and request.signal_name == "SIGTERM" and repeats == ["SIGINT"]
    other = ShutdownRequest()
    threading.Timer(0.05, other.request).start()
    assert other.wait(10.0) and other.signal_name == ""


def _arm_feedback(status: int, move_status: int):
    fb = synchronized_command_pb2.SynchronizedCommand.Feedback()
    fb.arm_command_feedback.status = status
    fb.arm_command_feedback.arm_joint_move_feedback.status = move_status
    return fb


def test_arm_joint_move_judged_from_the_robots_feedback():
    processing = tasks.PROCESSING
    Move = arm_command_pb2.ArmJointMoveCommand.Feedback
    running = tasks.judge_joint_move(_arm_feedback(processing, Move.STATUS_IN_PROGRESS))
    assert not running.done
    done = tasks.judge_joint_move(_arm_feedback(processing, Move.STATUS_COMPLETE))
    assert done.done and done.ok and done.message == "reached the joint target"
    stalled = tasks.judge_joint_move(_arm_feedback(processing, Move.STATUS_STALLED))
    assert stalled.done and not stalled.ok and stalled.message.startswith("joint move failed")


def test_trajectory_remaining_distance_and_heading():
    snapshot = geometry_pb2.FrameTreeSnapshot()
    edge = snapshot.child_to_parent_edge_map["body"]
    edge.parent_frame_name = "odom"
    edge.parent_tform_child.position.x = 1.0
    edge.parent_tform_child.rotation.w = 1.0
    snapshot.child_to_parent_edge_map["odom"].parent_frame_name = ""
    distance, angle = remaining(snapshot, Se2Goal(4.0, 4.0, math.pi / 2, "odom"))
    assert distance == pytest.approx(5.0) and angle == pytest.approx(math.pi / 2)
    unknown = remaining(snapshot, Se2Goal(0.0, 0.0, 0.0, "nowhere"))
    assert all(math.isnan(v) for v in unknown)


def test_inverse_kinematics_requests_are_checked_and_answers_read():
    import math

    from bosdyn.api import geometry_pb2
    from bosdyn.api.spot import inverse_kinematics_pb2
    from bosdyn.client.math_helpers import Quat, SE3Pose

    from spot_driver.errors import CommandError
    from spot_driver.manipulation import inverse_kinematics as ik

    snapshot = geometry_pb2.FrameTreeSnapshot()
    snapshot.child_to_parent_edge_map["odom"].SetInParent()
    body = snapshot.child_to_parent_edge_map["body"]
    body.parent_frame_name = "odom"
    body.parent_tform_child.CopyFrom(SE3Pose(1.0, 2.0, 0.5, Quat()).to_proto())
    target = ik.checked_pose((0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0), "target")
    request = ik.build_request(snapshot, "body", target, None, from_ready=True)
    assert request.root_frame_name == "odom"
    assert request.scene_tform_task.position.x == 1.0 and request.scene_tform_task.position.y == 2.0
    assert request.nominal_arm_configuration == request.ARM_CONFIG_READY
    assert not request.HasField("wrist_mounted_tool")
    with pytest.raises(CommandError, match="unknown frame 'hand'"):
        ik.build_request(snapshot, "hand", target, None, False)
    for bad in ((math.nan, 0, 0, 1, 0, 0, 0), (0, 0, 0, 0.5, 0, 0, 0)):
        with pytest.raises(CommandError):
            ik.checked_pose(bad, "target")
    response = inverse_kinematics_pb2.InverseKinematicsResponse(
        status=inverse_kinematics_pb2.InverseKinematicsResponse.STATUS_NO_SOLUTION_FOUND)
    joint = response.robot_configuration.joint_states.add(name="arm0.sh0")
    joint.position.value = 0.25
    answer = ik.solution(response)
    assert (answer.reachable, answer.status, answer.joints) == (
        False, "STATUS_NO_SOLUTION_FOUND", {"arm0.sh0": 0.25})
