"""The simulated robot's docking, world-object and mission services through the unmodified SDK
(``bosdyn-client`` docking / world-object clients and ``bosdyn-mission``'s MissionClient)."""

import time

import pytest
from bosdyn.api import power_pb2, world_object_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.api.mission import mission_pb2, nodes_pb2, util_pb2
from bosdyn.client.docking import DockingClient, blocking_dock_robot, blocking_undock
from bosdyn.client.exceptions import ResponseError
from bosdyn.client.frame_helpers import VISION_FRAME_NAME, get_a_tform_b
from bosdyn.client.lease import LeaseClient
from bosdyn.client.math_helpers import Quat, SE3Pose
from bosdyn.client.power import power_on_motors
from bosdyn.client.robot_command import RobotCommandBuilder, blocking_stand
from bosdyn.client.world_object import WorldObjectClient
from bosdyn.mission.client import InvalidAnswerCode, MissionClient, ValidationError
from test_body_sim import commander, odom_tform_body, operated, state_of, wait_for

from conftest import connect, part, running_sim
from spot_sim.body.battery import Battery
from spot_sim.body.legs import Legs

State = mission_pb2.State


@pytest.fixture
def docked_sim(certs_dir):
    with running_sim(certs_dir, start_docked_id=520) as spot:
        yield spot


def _dock_state(robot):
    return robot.ensure_client(DockingClient.default_service_name).get_docking_state()


def test_docking_config_and_world_objects_in_view(sim, robot):
    client = robot.ensure_client(DockingClient.default_service_name)
    (config,) = client.get_docking_config()
    assert (config.id_start, config.id_end, config.type) == (
        520, 539, docking_pb2.DOCK_TYPE_SPOT_DOCK)
    objects = robot.ensure_client(WorldObjectClient.default_service_name).list_world_objects(
        object_type=[world_object_pb2.WORLD_OBJECT_DOCK]).world_objects
    assert [o.dock_properties.dock_id for o in objects] == [520]  # 521 is out of view
    dock = objects[0]
    vision_tform_dock = get_a_tform_b(dock.transforms_snapshot, VISION_FRAME_NAME, "dock_520")
    assert vision_tform_dock.x == pytest.approx(-2.0, abs=1e-6)
    assert vision_tform_dock.y == pytest.approx(-1.5, abs=1e-6)
    tags = robot.ensure_client(WorldObjectClient.default_service_name).list_world_objects(
        object_type=[world_object_pb2.WORLD_OBJECT_APRILTAG]).world_objects
    assert tags[0].apriltag_properties.tag_id == 520
    assert _dock_state(robot).status == docking_pb2.DockState.DOCK_STATUS_UNDOCKED



def _nogo(frame_tform_box: SE3Pose, frame: str = VISION_FRAME_NAME, lifetime_s: float = 60.0):
    """A wall 0.2 m deep and 4 m wide."""
    obj = world_object_pb2.WorldObject(name="wall")
    obj.object_lifetime.FromNanoseconds(int(lifetime_s * 1e9))
    box = obj.nogo_region_properties.box
    box.frame_name = frame
    box.box.size.x, box.box.size.y = 0.2, 4.0
    box.frame_name_tform_box.CopyFrom(frame_tform_box.to_proto())
    return obj


def test_world_object_mutations_and_nogo_regions_through_the_sdk(sim, robot):
    """Add, list, change, expire and delete user objects; perceived objects stay the robot's.
    (Walks stopping at a region: test_body_e2e and test_docking_world_objects_units.)"""
    robot.time_sync.wait_for_sync()  # the SDK converts the objects' times to the robot's
    objects = robot.ensure_client(WorldObjectClient.default_service_name)
    Request, Response = (world_object_pb2.MutateWorldObjectRequest,
                         world_object_pb2.MutateWorldObjectResponse)

    def mutate(action, obj):
        return objects.mutate_world_objects(Request(mutation=Request.Mutation(
            action=action, object=obj)))

    vision_tform_body = get_a_tform_b(state_of(robot).kinematic_state.transforms_snapshot,
                                      VISION_FRAME_NAME, "body")
    ahead = SE3Pose(1.5, 0.0, 0.0, Quat())
    wall = _nogo(vision_tform_body * ahead)
    added = mutate(Request.ACTION_ADD, wall)
    assert added.status == Response.STATUS_OK
    nogo = [world_object_pb2.WORLD_OBJECT_USER_NOGO]
    assert [o.id for o in objects.list_world_objects(object_type=nogo).world_objects] == \
        [added.mutated_object_id]
    assert mutate(Request.ACTION_ADD, _nogo(ahead, frame="body")).status == \
        Response.STATUS_INVALID_WORLD_OBJECT  # only vision or odom
    dock = objects.list_world_objects(
        object_type=[world_object_pb2.WORLD_OBJECT_DOCK]).world_objects[0]
    assert mutate(Request.ACTION_DELETE, dock).status == Response.STATUS_NO_PERMISSION
    assert mutate(Request.ACTION_DELETE, world_object_pb2.WorldObject(id=424242)).status == \
        Response.STATUS_INVALID_MUTATION_ID
    brief = _nogo(SE3Pose(50.0, 0.0, 0.0, Quat()), lifetime_s=0.5)
    brief_id = mutate(Request.ACTION_ADD, brief).mutated_object_id
    assert wait_for(lambda: brief_id not in {
        o.id for o in objects.list_world_objects(object_type=nogo).world_objects}, 3.0)
    wall.id = added.mutated_object_id
    wall.nogo_region_properties.disable_body_obstacle_generation = True
    assert mutate(Request.ACTION_CHANGE, wall).status == Response.STATUS_OK
    (changed,) = objects.list_world_objects(object_type=nogo).world_objects
    assert changed.nogo_region_properties.disable_body_obstacle_generation
    assert mutate(Request.ACTION_DELETE, wall).status == Response.STATUS_OK
    assert objects.list_world_objects(object_type=nogo).world_objects == []

def test_undock_then_dock_charges_the_battery(docked_sim):
    robot = connect(docked_sim)
    state = _dock_state(robot)
    assert (state.status, state.dock_id) == (docking_pb2.DockState.DOCK_STATUS_DOCKED, 520)
    assert state.power_status == docking_pb2.DockState.LINK_STATUS_CONNECTED
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        blocking_undock(robot, timeout=20)
        assert _dock_state(robot).status == docking_pb2.DockState.DOCK_STATUS_UNDOCKED
        assert odom_tform_body(robot).x == pytest.approx(-1.0, abs=0.05)
        blocking_dock_robot(robot, 520, timeout=30)
        battery = part(docked_sim.robot, Battery).percent
        state = _dock_state(robot)
        assert (state.status, state.dock_id) == (docking_pb2.DockState.DOCK_STATUS_DOCKED, 520)
        assert odom_tform_body(robot).x == pytest.approx(-2.0, abs=0.05)
        assert not part(docked_sim.robot, Legs).posture.standing  # sits on the dock
        assert wait_for(lambda: part(docked_sim.robot, Battery).percent > battery, 3.0)  # charging


def test_docking_refusals(sim, robot):
    client = robot.ensure_client(DockingClient.default_service_name)
    with operated(robot):
        clock = robot.time_sync.endpoint.clock_identifier
        end = robot.time_sync.robot_timestamp_from_local_secs(time.time() + 20)
        with pytest.raises(ResponseError, match="NOT_AVAILABLE"):  # motors off
            client.docking_command(520, clock, end)
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        with pytest.raises(ResponseError, match="DOCK_NOT_FOUND"):
            client.docking_command(599, clock, end)
        with pytest.raises(ResponseError, match="DOCK_NOT_FOUND"):  # out of view
            client.docking_command(521, clock, end)
        with pytest.raises(ResponseError, match="NOT_DOCKED"):
            client.docking_command(0, clock, end, docking_pb2.PREP_POSE_UNDOCK)
    assert sim.docking.state().status not in (docking_pb2.DockState.DOCK_STATUS_DOCKING,
                                              docking_pb2.DockState.DOCK_STATUS_UNDOCKING)


def _sequence(name, *children, always_restart=False):
    node = nodes_pb2.Node(name=name)
    node.sequence.always_restart = always_restart
    node.sequence.children.extend(children)
    return node


def _command_node(name, command):
    node = nodes_pb2.Node(name=name)
    node.bosdyn_robot_command.command.CopyFrom(command)
    return node


def _prompt_node(name, text, source="answer"):
    node = nodes_pb2.Node(name=name)
    node.prompt.text, node.prompt.source = text, source
    node.prompt.options.add(text="go", answer_code=1)
    node.prompt.options.add(text="abort", answer_code=2)
    return node


def _sleep_node(name, seconds):
    node = nodes_pb2.Node(name=name)
    node.sleep.seconds = seconds
    return node


def _leases(robot):
    return [robot.lease_wallet.get_lease()]


def _mission_client(robot):
    return robot.ensure_client(MissionClient.default_service_name)


def _wait_status(client, statuses, timeout=15.0):
    assert wait_for(lambda: client.get_state().status in statuses, timeout=timeout), \
        client.get_state()
    return client.get_state()


def test_mission_stand_sleep_prompt_sit(sim, robot):
    power = nodes_pb2.Node(name="power on")
    power.bosdyn_power_request.request = power_pb2.PowerCommandRequest.REQUEST_ON
    check = nodes_pb2.Node(name="answered go")
    check.condition.lhs.var.name = "answer"
    check.condition.rhs.const.int_value = 1
    check.condition.operation = nodes_pb2.Condition.COMPARE_EQ
    prompt = _prompt_node("ask", "Continue?")
    prompt.prompt.child.CopyFrom(check)
    stand = _command_node("stand", RobotCommandBuilder.synchro_stand_command())
    root = _sequence("root", power, stand, _sleep_node("wait", 0.3), prompt,
                     _command_node("sit", RobotCommandBuilder.synchro_sit_command()))
    client = _mission_client(robot)
    with operated(robot):
        info = client.load_mission(root, leases=[robot.lease_wallet.get_lease()])
        assert info.mission_info.root.name == "root"
        assert [c.name for c in info.mission_info.root.children][:3] == \
            ["power on", "stand", "wait"]
        client.play_mission(time.time() + 30, leases=_leases(robot))
        assert wait_for(lambda: client.get_state().questions, timeout=15), client.get_state()
        assert sim.robot.standing
        (question,) = client.get_state().questions
        assert question.text == "Continue?"
        with pytest.raises(InvalidAnswerCode):
            client.answer_question(question.id, 7)  # not an option
        client.answer_question(question.id, 1)
        state = _wait_status(client, {State.STATUS_SUCCESS, State.STATUS_FAILURE,
                                      State.STATUS_ERROR})
        assert state.status == State.STATUS_SUCCESS, state
        assert not part(sim.robot, Legs).posture.standing
        assert state.answered_questions[0].accepted_answer_code == 1


def test_mission_pauses_when_pause_time_passes_and_resumes(sim, robot):
    walk = RobotCommandBuilder.synchro_velocity_command(0.3, 0.0, 0.0)
    node = nodes_pb2.Node(name="walk for 3 s")
    node.for_duration.duration.seconds = 3
    node.for_duration.child.CopyFrom(_command_node("walk", walk))
    node.for_duration.timeout_child.constant_result.result = util_pb2.RESULT_SUCCESS
    client = _mission_client(robot)
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        client.load_mission(node, leases=_leases(robot))
        client.play_mission(time.time() + 1.0, leases=_leases(robot))
        _wait_status(client, {State.STATUS_PAUSED}, timeout=5)
        assert wait_for(lambda: sim.robot.velocity().x == 0.0, timeout=2)
        moved = odom_tform_body(robot).x
        assert moved > 0.05
        client.play_mission(time.time() + 10.0, leases=_leases(robot))
        state = _wait_status(client, {State.STATUS_SUCCESS}, timeout=10)
        assert state.status == State.STATUS_SUCCESS
        assert odom_tform_body(robot).x > moved + 0.2


def test_mission_with_unsupported_node_fails_at_load(sim, robot):
    bad = nodes_pb2.Node(name="take a picture")
    bad.spot_cam_named_position.named_position = "x"
    root = _sequence("root", _sleep_node("wait", 0.1), bad)
    client = _mission_client(robot)
    with operated(robot), pytest.raises(ValidationError) as raised:
        client.load_mission(root, leases=_leases(robot))
    (failed,) = raised.value.failed_nodes
    assert failed.name == "take a picture"
    assert "SpotCamNamedPosition" in failed.impl_typename
    assert client.get_state().status == State.STATUS_NONE  # nothing loaded


def test_large_mission_loads_as_chunks(sim, robot):
    root = _sequence("big", _sleep_node("wait", 0.0))
    root.user_data.bytestring = b"\x01" * (5 * 1024 * 1024)
    client = _mission_client(robot)
    with operated(robot):
        response = client.load_mission_as_chunks2(root, leases=_leases(robot))
    assert response.status == mission_pb2.LoadMissionResponse.STATUS_OK
    assert sim.mission.calls["LoadMissionAsChunks2"] == 1
    assert client.get_mission().root.user_data.bytestring == root.user_data.bytestring


def test_tree_semantics_selector_retry_repeat_blackboard(sim, robot):
    counter = nodes_pb2.Node(name="count")
    kv = counter.set_blackboard.blackboard_variables.add(key="n")
    kv.value.runtime_var.name = "i"
    repeat = nodes_pb2.Node(name="repeat")
    repeat.repeat.max_starts = 3
    repeat.repeat.start_counter_state_name = "i"
    repeat.repeat.child.CopyFrom(counter)
    check = nodes_pb2.Node(name="n is 2")
    check.condition.lhs.var.name = "n"
    check.condition.rhs.const.int_value = 2
    check.condition.operation = nodes_pb2.Condition.COMPARE_EQ
    fail = nodes_pb2.Node(name="fail")
    fail.constant_result.result = util_pb2.RESULT_FAILURE
    selector = nodes_pb2.Node(name="select")
    selector.selector.children.extend([fail, check])
    define = nodes_pb2.Node(name="define")
    define.define_blackboard.blackboard_variables.add(key="n").value.constant.int_value = -1
    define.define_blackboard.child.CopyFrom(_sequence("body", repeat, selector))
    retry = nodes_pb2.Node(name="retry")
    retry.retry.max_attempts = 2
    retry.retry.child.CopyFrom(fail)
    parallel = nodes_pb2.Node(name="parallel")
    parallel.simple_parallel.primary.CopyFrom(_sleep_node("primary", 0.2))
    parallel.simple_parallel.secondary.CopyFrom(_sleep_node("secondary", 5.0))
    client = _mission_client(robot)
    with operated(robot):
        for root, expected in ((define, State.STATUS_SUCCESS), (retry, State.STATUS_FAILURE),
                               (parallel, State.STATUS_SUCCESS)):
            client.load_mission(root, leases=_leases(robot))
            client.play_mission(time.time() + 10, leases=_leases(robot))
            state = _wait_status(client, {State.STATUS_SUCCESS, State.STATUS_FAILURE,
                                          State.STATUS_ERROR}, timeout=5)
            assert state.status == expected, (root.name, state)
        history = client.get_state(past_ticks=100).history
        assert len(history) >= 2


def test_mission_stop_and_dock_node(docked_sim):
    robot = connect(docked_sim)
    undock = nodes_pb2.Node(name="undock")
    undock.dock.docking_station_id = 520
    undock.dock.prep_pose_behavior = docking_pb2.PREP_POSE_UNDOCK
    dock = nodes_pb2.Node(name="dock")
    dock.dock.docking_station_id = 520
    dock_state = nodes_pb2.Node(name="docked?")
    dock_state.bosdyn_dock_state.state_name = "dock"
    is_docked = dock_state.bosdyn_dock_state.child.condition
    is_docked.lhs.var.name = "dock.status"
    is_docked.rhs.const.int_value = docking_pb2.DockState.DOCK_STATUS_DOCKED
    is_docked.operation = nodes_pb2.Condition.COMPARE_EQ
    power = nodes_pb2.Node(name="power on")
    power.bosdyn_power_request.request = power_pb2.PowerCommandRequest.REQUEST_ON
    root = _sequence("round trip", power, undock, dock, dock_state)
    client = _mission_client(robot)
    with operated(robot):
        client.load_mission(root, leases=_leases(robot))
        client.play_mission(time.time() + 60, leases=_leases(robot))
        state = _wait_status(client, {State.STATUS_SUCCESS, State.STATUS_FAILURE,
                                      State.STATUS_ERROR}, timeout=40)
        assert state.status == State.STATUS_SUCCESS, state
        assert _dock_state(robot).status == docking_pb2.DockState.DOCK_STATUS_DOCKED
        client.restart_mission(time.time() + 60, leases=_leases(robot))
        _wait_status(client, {State.STATUS_RUNNING})
        client.stop_mission()
        assert client.get_state().status == State.STATUS_STOPPED
        lease = robot.ensure_client(LeaseClient.default_service_name)
        assert lease.list_leases()
        assert state_of(robot)
