"""End to end: dock/undock and mission actions through ROS -> driver -> gRPC -> simulated Spot
(which starts sitting on dock 520)."""

import signal
import time

import pytest
from bosdyn.api.mission import mission_pb2, nodes_pb2
from bosdyn.client.robot_command import RobotCommandBuilder
from geometry_msgs.msg import PoseStamped
from google.protobuf import text_format
from ros_harness import driver_world
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from conftest import holds, part, wait_for
from spot_msgs.action import Dock, Mission, Trajectory, Undock
from spot_msgs.msg import BatteryStateArray, DockState, MissionStatus, WorldObjectArray
from spot_msgs.srv import AnswerQuestion
from spot_sim.body.legs import Legs
from spot_sim.missions.compiler import child_nodes

State = mission_pb2.State
PAUSE_WINDOW = 1.5


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    best_effort = {"reliable": False}
    with driver_world(tmp_path_factory, "docking_mission_test_client",
                      sim={"start_docked_id": 520},
                      params={"mission_pause_window": PAUSE_WINDOW, "docking_state_rate": 5.0,
                              # An in-process robot stalled 3.3 s under a full run's load
                              # (stop 52's CI): link loss is not what these tests check
                              # (test_core_resilience_e2e does).
                              "link_timeout": 5.0},
                      subscriptions=(("/status/docking", DockState, {"latched": True}),
                                     ("/world_objects", WorldObjectArray, best_effort),
                                     ("/tf", TFMessage),
                                     ("/status/battery", BatteryStateArray, best_effort),
                                     ("/status/mission", MissionStatus, best_effort)),
                      first="/status/docking", ready=("claim",)) as world:
        yield world


def docking_status(ros) -> int:
    return ros.latest("/status/docking").status


def test_starts_docked_and_sees_its_dock(world):
    _sim, _driver, ros = world
    state = ros.latest("/status/docking")
    assert (state.status, state.dock_id, state.status_name) == (
        DockState.STATUS_DOCKED, 520, "DOCK_STATUS_DOCKED")
    assert state.power_status == DockState.POWER_CONNECTED
    assert ros.wait_for(lambda: ros.latest("/world_objects") is not None
                        and len(ros.latest("/world_objects").objects) == 2, timeout=10)
    objects = {o.frame_id: o for o in ros.latest("/world_objects").objects}
    assert set(objects) == {"dock_520", "fiducial_520"}
    assert objects["dock_520"].type == "dock" and objects["dock_520"].fiducial_id == 520
    dock = objects["dock_520"].pose
    assert dock.header.frame_id == "odom"
    assert (dock.pose.position.x, dock.pose.position.y) == pytest.approx((-2.0, -1.5), abs=1e-3)
    assert objects["fiducial_520"].pose.pose.position.z == pytest.approx(0.45, abs=1e-3)

    def dock_on_tf():
        return any(t.child_frame_id == "dock_520" and t.header.frame_id == "odom"
                   for msg in ros.received("/tf") for t in msg.transforms)

    assert ros.wait_for(dock_on_tf, timeout=5)


def test_dock_refused_without_power_and_for_unknown_ids(world):
    sim, _driver, ros = world
    commands_before = sim.docking.accepted()
    result = ros.run_action(Dock, "/dock", Dock.Goal(dock_id=520))  # motors are still off
    assert not result.success and "not powered on" in result.message
    assert ros.call(Trigger, "/power_on").success
    result = ros.run_action(Dock, "/dock", Dock.Goal(dock_id=999))
    assert not result.success
    assert "unknown dock id 999" in result.message
    result = ros.run_action(Dock, "/dock", Dock.Goal(dock_id=521))  # a real dock, out of view
    assert not result.success and "not in view" in result.message
    assert sim.docking.accepted() == commands_before  # none reached the robot's plan


def test_undock_walk_away_and_dock_again(world):
    sim, _driver, ros = world
    assert ros.call(Trigger, "/power_on").success
    feedback = []
    client = ros.action_client(Undock, "/undock")
    handle = ros.wait_future(client.send_goal_async(
        Undock.Goal(), feedback_callback=lambda msg: feedback.append(msg.feedback)))
    assert handle.accepted
    # Goal policy REJECT: no other docking goal while one runs; nothing reaches the robot.
    result_future = handle.get_result_async()
    # the undock command is under way (an early end says why it is not)
    assert ros.wait_for(lambda: feedback or result_future.done(), timeout=10)
    assert feedback, result_future.result().result.message
    before = sim.commands.count()
    second = ros.wait_future(ros.action_client(Dock, "/dock").send_goal_async(
        Dock.Goal(dock_id=520)))
    assert not second.accepted
    assert sim.commands.count() == before
    result = ros.wait_future(result_future, timeout=60).result
    assert result.success, result.message
    assert result.status == "STATUS_AT_PREP_POSE"
    assert next(f.status for f in feedback) == "STATUS_IN_PROGRESS"
    assert ros.wait_for(lambda: docking_status(ros) == DockState.STATUS_UNDOCKED, timeout=3)
    goal = Trajectory.Goal(target_pose=PoseStamped())
    goal.target_pose.header.frame_id = "odom"
    goal.target_pose.pose.position.x, goal.target_pose.pose.position.y = 0.5, 0.5
    goal.target_pose.pose.orientation.w = 1.0
    walked = ros.run_action(Trajectory, "/trajectory", goal)
    assert walked.success, walked.message
    feedback = []
    result = ros.run_action(Dock, "/dock", Dock.Goal(dock_id=520), feedback=feedback)
    assert result.success, result.message
    assert result.status == "STATUS_DOCKED"
    statuses = [f.status for f in feedback]
    assert statuses[0] == "STATUS_IN_PROGRESS" and statuses[-1] == "STATUS_DOCKED"
    assert ros.wait_for(lambda: docking_status(ros) == DockState.STATUS_DOCKED, timeout=3)
    assert sim.robot.odom_body().x == pytest.approx(-2.0, abs=0.05)

    def battery():
        return ros.latest("/status/battery").battery_states[0]

    first = battery().charge_percentage
    assert ros.wait_for(lambda: battery().charge_percentage > first + 0.05, timeout=10)
    assert battery().status == battery().STATUS_CHARGING


def _write(path, root: nodes_pb2.Node, text: bool = True) -> str:
    if text:
        path.write_text(text_format.MessageToString(root))
    else:
        path.write_bytes(root.SerializeToString())
    return str(path)


def _node(name: str, **fields) -> nodes_pb2.Node:
    node = nodes_pb2.Node(name=name)
    for key, value in fields.items():
        getattr(node, key).CopyFrom(value)
    return node


def _sequence(name: str, *children) -> nodes_pb2.Node:
    return _node(name, sequence=nodes_pb2.Sequence(children=children))


def _command(name: str, command) -> nodes_pb2.Node:
    return _node(name, bosdyn_robot_command=nodes_pb2.BosdynRobotCommand(command=command))


def _packed(node: nodes_pb2.Node) -> nodes_pb2.Node:
    """The same tree with every implementation packed in ``impl`` (as saved missions are)."""
    which = node.WhichOneof("type")
    spec = getattr(node, which)
    for child in child_nodes(spec):
        _packed(child)
    spec = type(spec).FromString(spec.SerializeToString())
    node.impl.Pack(spec)
    return node


@pytest.mark.parametrize("encoding", ["typed", "impl"])
def test_mission_with_a_prompt_answered_over_ros(world, tmp_path, encoding):
    sim, _driver, ros = world
    assert ros.call(Trigger, "/power_on").success  # the mission's commands need motor power
    prompt = nodes_pb2.Prompt(text="Sit down now?", source="answer",
                              options=[nodes_pb2.Prompt.Option(text="yes", answer_code=1),
                                       nodes_pb2.Prompt.Option(text="no", answer_code=0)])
    root = _sequence("stand, sleep, ask, sit",
                     _command("stand", RobotCommandBuilder.synchro_stand_command()),
                     _node("sleep", sleep=nodes_pb2.Sleep(seconds=0.5)),
                     _node("ask", prompt=prompt),
                     _command("sit", RobotCommandBuilder.synchro_sit_command()))
    if encoding == "impl":
        root = _packed(root)
        assert root.WhichOneof("type") == "impl"
    goal = Mission.Goal(mission_file=_write(tmp_path / "mission.txt", root),
                        max_linear_velocity=0.5)
    client = ros.action_client(Mission, "/mission")
    feedback = []
    handle = ros.wait_future(client.send_goal_async(
        goal, feedback_callback=lambda msg: feedback.append(msg.feedback)))
    assert handle.accepted
    result_future = handle.get_result_async()
    assert ros.wait_for(lambda: feedback and feedback[-1].questions, timeout=20), feedback[-3:]
    assert "ask" in feedback[-1].running_nodes
    assert sim.robot.standing
    question = feedback[-1].questions[0]
    assert question.text == "Sit down now?" and list(question.option_codes) == [1, 0]
    wrong = ros.call(AnswerQuestion, "/mission/answer_question",
                     AnswerQuestion.Request(question_id=question.id + 100, code=1))
    assert not wrong.success and "no open question" in wrong.message
    wrong = ros.call(AnswerQuestion, "/mission/answer_question",
                     AnswerQuestion.Request(question_id=question.id, code=7))
    assert not wrong.success and "not an answer" in wrong.message
    answer = ros.call(AnswerQuestion, "/mission/answer_question",
                      AnswerQuestion.Request(question_id=question.id, code=1))
    assert answer.success, answer.message
    result = ros.wait_future(result_future, timeout=30).result
    assert result.success, result.message
    assert result.status == "STATUS_SUCCESS" and not result.failed_nodes
    assert not part(sim.robot, Legs).posture.standing
    assert "STATUS_RUNNING" in {f.status for f in feedback}
    assert ros.wait_for(lambda: ros.latest("/status/mission") is not None
                        and ros.latest("/status/mission").status == MissionStatus.STATUS_SUCCESS)


def test_bad_mission_files_fail_before_anything_is_loaded(world, tmp_path):
    sim, _driver, ros = world
    loads = dict(sim.mission.calls)
    missing = ros.run_action(Mission, "/mission", Mission.Goal(mission_file=str(tmp_path / "none")))
    assert not missing.success and "not found" in missing.message
    corrupt = tmp_path / "corrupt.bin"
    corrupt.write_bytes(b"\xff\x00\x13garbage\x99" * 10)
    result = ros.run_action(Mission, "/mission", Mission.Goal(mission_file=str(corrupt)))
    assert not result.success and "neither a binary nor a text-format" in result.message
    bad_speed = Mission.Goal(mission_file=str(corrupt), max_linear_velocity=float("nan"))
    assert "finite" in ros.run_action(Mission, "/mission", bad_speed).message
    assert sim.mission.calls == loads


def test_unsupported_node_fails_at_load_with_its_name(world, tmp_path):
    _sim, _driver, ros = world
    camera = _node("photo of the gauge")
    camera.spot_cam_named_position.named_position = "gauge"  # refused: see the README
    root = _sequence("inspection", _node("wait", sleep=nodes_pb2.Sleep(seconds=0.1)), camera)
    result = ros.run_action(Mission, "/mission",
                 Mission.Goal(mission_file=_write(tmp_path / "m.bin", root, text=False)))
    assert not result.success
    assert len(result.failed_nodes) == 1 and "photo of the gauge" in result.failed_nodes[0]
    assert "SpotCamNamedPosition" in result.failed_nodes[0]
    assert "photo of the gauge" in result.message


def test_large_mission_loads_through_the_chunked_rpc(world, tmp_path):
    sim, _driver, ros = world
    before = sim.mission.calls.get("LoadMissionAsChunks2", 0)
    root = _sequence("big", _node("wait", sleep=nodes_pb2.Sleep(seconds=0.1)))
    root.user_data.bytestring = bytes(range(256)) * (17 * 1024)  # 4.25 MiB
    assert root.ByteSize() > 4 * 1024 * 1024
    result = ros.run_action(Mission, "/mission",
                 Mission.Goal(mission_file=_write(tmp_path / "big.bin", root, text=False)))
    assert result.success, result.message
    assert sim.mission.calls["LoadMissionAsChunks2"] == before + 1
    assert sim.mission.runner.root_proto.user_data.bytestring == root.user_data.bytestring


def test_pause_resume_stop_services(world, tmp_path):
    sim, _driver, ros = world
    root = _sequence("long", _node("wait", sleep=nodes_pb2.Sleep(seconds=30)))
    client = ros.action_client(Mission, "/mission")
    handle = ros.wait_future(client.send_goal_async(
        Mission.Goal(mission_file=_write(tmp_path / "long.txt", root))))
    result_future = handle.get_result_async()
    runner = sim.mission.runner
    assert ros.wait_for(lambda: runner.status == State.STATUS_RUNNING, timeout=10)
    second = ros.wait_future(client.send_goal_async(
        Mission.Goal(mission_file=_write(tmp_path / "long.txt", root))))
    assert not second.accepted  # one mission at a time
    assert ros.call(Trigger, "/mission/pause").success
    # past a renewal, paused all along: the driver must not resume it
    assert holds(lambda: runner.status == State.STATUS_PAUSED, 2 * PAUSE_WINDOW / 3 + 0.3)
    assert ros.call(Trigger, "/mission/resume").success
    assert runner.status == State.STATUS_RUNNING
    assert wait_for(lambda: runner.tick_counter > 5)  # ticked on, for restart to reset
    ticks = runner.tick_counter
    restarted = ros.call(Trigger, "/mission/restart")
    assert restarted.success, restarted.message
    assert runner.status == State.STATUS_RUNNING and runner.tick_counter < ticks
    assert ros.call(Trigger, "/mission/stop").success
    result = ros.wait_future(result_future, timeout=10).result
    assert not result.success and result.status == "STATUS_STOPPED"
    assert not ros.call(Trigger, "/mission/resume").success  # no goal active


def test_killed_driver_leaves_the_mission_paused(world, tmp_path):
    sim, driver, ros = world
    root = _sequence("long", _node("wait", sleep=nodes_pb2.Sleep(seconds=60)))
    client = ros.action_client(Mission, "/mission")
    handle = ros.wait_future(client.send_goal_async(
        Mission.Goal(mission_file=_write(tmp_path / "long.txt", root))))
    assert handle.accepted
    runner = sim.mission.runner
    assert ros.wait_for(lambda: runner.status == State.STATUS_RUNNING, timeout=10)
    assert holds(lambda: runner.status == State.STATUS_RUNNING, PAUSE_WINDOW)  # renewed
    driver.process.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    assert ros.wait_for(lambda: runner.status == State.STATUS_PAUSED, timeout=PAUSE_WINDOW + 2)
    assert time.monotonic() - killed <= PAUSE_WINDOW + 0.5
