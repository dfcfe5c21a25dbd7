"""The arm without a robot: joint names in any form and order, trajectory pieces that cover
every point, tolerances, validation and interpolation, a joint move judged from the robot's
feedback, inverse-kinematics requests checked and answers read."""

import itertools
import math

import numpy as np
import pytest
from bosdyn.api import arm_command_pb2, synchronized_command_pb2
from hypothesis import given
from hypothesis import strategies as st

from spot_driver.manipulation import arm_trajectory as at
from spot_driver.manipulation import tasks

ARM_URDF = ["arm_sh0", "arm_sh1", "arm_el0", "arm_el1", "arm_wr0", "arm_wr1"]

def test_joint_order_accepts_urdf_robot_and_prefixed_names_in_any_order():
    assert at.joint_order(list(reversed(ARM_URDF))) == [5, 4, 3, 2, 1, 0]
    assert at.joint_order([n.replace("arm_", "arm0.") for n in ARM_URDF]) == list(range(6))
    assert at.joint_order(["spot1/" + n for n in ARM_URDF], "spot1/") == list(range(6))
    for names, text in ((ARM_URDF[:5], "missing"), ([*ARM_URDF[:5], "x"], "unknown"),
                        ([*ARM_URDF, "arm_sh0"], "repeat"), ([*ARM_URDF, "arm_f1x"], "gripper")):
        with pytest.raises(at.TrajectoryError, match=text) as error:
            at.joint_order(names)
        assert error.value.code == at.INVALID_JOINTS

@given(st.integers(1, 2000), st.integers(2, 300))
def test_segments_cover_every_point_and_share_their_boundaries(count, size):
    pieces = at.segments(count, size)
    assert pieces[0][0] == 0 and pieces[-1][1] == count
    assert all(0 < end - start <= size for start, end in pieces)
    for (_, end), (start, _) in itertools.pairwise(pieces):
        assert start == end - 1  # the next piece starts at the last point of this one

def test_tolerances_defaults_overrides_and_removal():
    tol = at.Tolerances.from_goal([("arm_el0", 0.1)], [("arm_sh0", -1), ("arm0.wr1", 0.5)],
                                  0.0, 0.02, 1.0)
    assert tol.path[2] == 0.1 and math.isinf(tol.path[0])
    assert math.isinf(tol.goal[0]) and tol.goal[5] == 0.5 and tol.goal[1] == 0.02
    assert tol.goal_time == 1.0
    error = np.zeros(6)
    assert at.violation(error, tol.goal) is None
    error[1] = 0.03
    assert "arm_sh1" in at.violation(error, tol.goal)
    with pytest.raises(at.TrajectoryError):
        at.Tolerances.from_goal([], [("arm_sh0", math.nan)], 0.0, 0.02, 1.0)

def test_trajectory_validation_and_interpolation():
    traj = at.arm_trajectory(ARM_URDF, [0.0, 1.0], [[0, -1, 1, 0, 0, 0], [1, -1, 1, 0, 0, 0]],
                             [[], []])
    assert traj.desired(0.5)[0] == pytest.approx(0.5)
    assert traj.velocities is None
    with pytest.raises(at.TrajectoryError, match="velocities"):
        at.arm_trajectory(ARM_URDF, [0.0, 1.0], [[0, -1, 1, 0, 0, 0]] * 2, [[0] * 6, []])
    with pytest.raises(at.TrajectoryError, match="negative"):
        at.arm_trajectory(ARM_URDF, [-1.0], [[0, -1, 1, 0, 0, 0]], [[]])


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


def test_inverse_kinematics_requests_are_checked_and_answers_read():
    import math

    from bosdyn.api import geometry_pb2
    from bosdyn.api.spot import inverse_kinematics_pb2
    from bosdyn.client.math_helpers import Quat, SE3Pose

    from spot_driver.core.errors import CommandError
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
