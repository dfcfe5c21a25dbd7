"""Units of docking and missions that need no robot: file reading, play settings and the
proto -> ROS conversions."""

import math

import pytest
from bosdyn.api import world_object_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.api.mission import mission_pb2, nodes_pb2, util_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose
from google.protobuf import text_format

from spot_driver.core.errors import CommandError
from spot_driver.docking import conversions as docking_msgs
from spot_driver.missions import conversions as mission_msgs
from spot_driver.missions.session import play_settings, read_mission_file
from spot_msgs.msg import DockState, WorldObject


def _mission() -> nodes_pb2.Node:
    root = nodes_pb2.Node(name="root")
    root.sequence.children.add(name="nap").sleep.seconds = 1.5
    return root


@pytest.mark.parametrize("text", [True, False])
def test_read_mission_file_text_and_binary(tmp_path, text):
    path = tmp_path / "m"
    if text:
        path.write_text(text_format.MessageToString(_mission()))
    else:
        path.write_bytes(_mission().SerializeToString())
    assert read_mission_file(str(path)) == _mission()


@pytest.mark.parametrize("content, message", [
    (b"", "holds no mission node"),
    (b"sequence { children { bogus_field: 1 } }", "neither a binary nor a text-format"),
    (b"\xff\xff\xff\xff", "neither a binary nor a text-format"),
])
def test_read_mission_file_refuses_bad_content(tmp_path, content, message):
    path = tmp_path / "bad"
    path.write_bytes(content)
    with pytest.raises(CommandError, match=message):
        read_mission_file(str(path))


def test_read_mission_file_refuses_missing(tmp_path):
    with pytest.raises(CommandError, match="not found"):
        read_mission_file(str(tmp_path / "absent"))
    with pytest.raises(CommandError, match="no mission file"):
        read_mission_file("")


def test_play_settings():
    settings = play_settings(0.5, 0.0, True, False, 2)
    assert settings.velocity_limit.max_vel.linear.x == 0.5
    assert settings.velocity_limit.min_vel.linear.x == -0.5
    assert settings.velocity_limit.max_vel.angular >= 100  # unlimited beyond the robot's
    assert settings.disable_directed_exploration and settings.ground_clutter_mode == 2
    assert not play_settings(0.0, 0.0, False, False, 0).HasField("velocity_limit")
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(CommandError, match="finite, non-negative"):
            play_settings(bad, 0.0, False, False, 0)
    with pytest.raises(CommandError, match="ground_clutter_mode"):
        play_settings(0.0, 0.0, False, False, 9)


def test_mission_status_names_running_nodes_and_questions():
    info = mission_pb2.MissionInfo(id=3, root=mission_pb2.NodeInfo(
        id=1, name="root", children=[mission_pb2.NodeInfo(id=2, name="ask"),
                                     mission_pb2.NodeInfo(id=3, name="sit")]))
    names = mission_msgs.node_names(info)
    assert names == {1: "root", 2: "ask", 3: "sit"}
    state = mission_pb2.State(status=mission_pb2.State.STATUS_RUNNING, mission_id=3,
                              tick_counter=9)
    old = state.history.add(tick_counter=8)
    old.node_states.add(id=3, result=util_pb2.RESULT_RUNNING)
    newest = state.history.add(tick_counter=9)
    newest.node_states.add(id=2, result=util_pb2.RESULT_RUNNING)
    newest.node_states.add(id=1, result=util_pb2.RESULT_RUNNING)
    newest.node_states.add(id=3, result=util_pb2.RESULT_SUCCESS)
    question = state.questions.add(id=7, text="Go?", source="answer")
    question.options.add(text="yes", answer_code=1)
    msg = mission_msgs.mission_status(state, names, None)
    assert msg.status_name == "STATUS_RUNNING" and msg.tick_counter == 9
    assert msg.running_nodes == ["ask", "root"]
    assert msg.questions[0].id == 7 and list(msg.questions[0].option_codes) == [1]
    assert mission_msgs.running_nodes(mission_pb2.State(), names) == []


def test_dock_state_message():
    state = docking_pb2.DockState(status=docking_pb2.DockState.DOCK_STATUS_DOCKED, dock_id=520,
                                  dock_type=docking_pb2.DOCK_TYPE_SPOT_DOCK,
                                  power_status=docking_pb2.DockState.LINK_STATUS_CONNECTED)
    msg = docking_msgs.dock_state(state, None)
    assert (msg.status, msg.status_name, msg.dock_id) == (DockState.STATUS_DOCKED,
                                                          "DOCK_STATUS_DOCKED", 520)
    assert msg.dock_type == DockState.DOCK_TYPE_SPOT_DOCK
    assert msg.power_status == DockState.POWER_CONNECTED


def test_world_objects_are_expressed_in_tf_root():
    obj = world_object_pb2.WorldObject(id=5, name="dock")
    obj.dock_properties.dock_id = 520
    obj.dock_properties.frame_name_dock = "dock_520"
    snapshot = obj.transforms_snapshot
    odom_tform_body = SE3Pose(1.0, 0.0, 0.5, Quat.from_yaw(math.pi / 2))
    vision_tform_dock = SE3Pose(0.0, 2.0, 0.0, Quat())
    for child, parent, pose in (("body", "", None), ("odom", "body", odom_tform_body.inverse()),
                                ("vision", "body", odom_tform_body.inverse()),
                                ("dock_520", "vision", vision_tform_dock)):
        edge = snapshot.child_to_parent_edge_map[child]
        edge.parent_frame_name = parent
        if pose is not None:
            edge.parent_tform_child.CopyFrom(pose.to_proto())
    tag = world_object_pb2.WorldObject(id=6, name="no frames")
    tag.apriltag_properties.tag_id = 1
    tag.apriltag_properties.frame_name_fiducial = "fiducial_1"  # not in its snapshot
    array, transforms = docking_msgs.world_objects([obj, tag], "odom", 0, "spot/")
    (msg,) = array.objects
    assert (msg.type, msg.fiducial_id, msg.frame_id) == (WorldObject.TYPE_DOCK, 520,
                                                        "spot/dock_520")
    assert msg.pose.header.frame_id == "spot/odom"
    assert (msg.pose.pose.position.x, msg.pose.pose.position.y) == pytest.approx((0.0, 2.0))
    (transform,) = transforms
    assert (transform.header.frame_id, transform.child_frame_id) == ("spot/odom",
                                                                      "spot/dock_520")
