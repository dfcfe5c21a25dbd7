"""The simulated mission service as SDK programs use it: every node type built the way saved
missions and SDK programs build them (``Node.impl.Pack``), node references, parameters and
overrides, the replay loop of the SDK's mission tools, questions answered by a second client,
and the state machine (load -> NONE, play -> RUNNING, no renewal -> PAUSED, SUCCESS/FAILURE,
stop -> STOPPED, a new load replacing a running mission)."""

import time

import pytest
from bosdyn.api import (
    data_acquisition_store_pb2,
    power_pb2,
    robot_state_pb2,
    service_customization_pb2,
)
from bosdyn.api.docking import docking_pb2
from bosdyn.api.mission import mission_pb2, nodes_pb2, util_pb2
from bosdyn.client.robot_command import RobotCommandBuilder
from bosdyn.mission.client import CustomParamsError, MissionClient, ValidationError
from test_body_sim import operated, wait_for

from conftest import connect, holds, running_sim
from spot_sim.missions.compiler import REFUSED

State = mission_pb2.State
FINAL = {State.STATUS_SUCCESS, State.STATUS_FAILURE, State.STATUS_ERROR}


def packed(name: str, spec, **node_fields) -> nodes_pb2.Node:
    """A node with its implementation packed in ``impl``, as saved missions carry it."""
    node = nodes_pb2.Node(name=name, **node_fields)
    node.impl.Pack(spec)
    return node


def sleep(name: str, seconds: float) -> nodes_pb2.Node:
    return packed(name, nodes_pb2.Sleep(seconds=seconds))


def result(name: str, value: int) -> nodes_pb2.Node:
    return packed(name, nodes_pb2.ConstantResult(result=value))


def sequence(name: str, *children) -> nodes_pb2.Node:
    return packed(name, nodes_pb2.Sequence(children=children))


def compare(name: str, var: str, operation: int, **const) -> nodes_pb2.Node:
    spec = nodes_pb2.Condition(operation=operation)
    spec.lhs.var.name = var
    for key, value in const.items():
        setattr(spec.rhs.const, key, value)
    return packed(name, spec)


def set_var(name: str, key: str, **const) -> nodes_pb2.Node:
    spec = nodes_pb2.SetBlackboard()
    kv = spec.blackboard_variables.add(key=key)
    for field, value in const.items():
        setattr(kv.value.constant, field, value)
    return packed(name, spec)


def define(name: str, child, **variables) -> nodes_pb2.Node:
    spec = nodes_pb2.DefineBlackboard(child=child)
    for key, value in variables.items():
        constant = spec.blackboard_variables.add(key=key).value.constant
        if isinstance(value, str):
            constant.string_value = value
        elif isinstance(value, float):
            constant.float_value = value
        else:
            constant.int_value = value
    return packed(name, spec)


def command(name: str, robot_command) -> nodes_pb2.Node:
    return packed(name, nodes_pb2.BosdynRobotCommand(command=robot_command))


def power_on() -> nodes_pb2.Node:
    return packed("power on", nodes_pb2.BosdynPowerRequest(
        request=power_pb2.PowerCommandRequest.REQUEST_ON))


def leases(robot):
    return [robot.lease_wallet.get_lease()]


def run(robot, root, expected: int, timeout: float = 15.0) -> State:
    """Load ``root``, then play it as the SDK's mission replay loop does, until it ends."""
    client = robot.ensure_client(MissionClient.default_service_name)
    client.load_mission(root, leases=leases(robot))
    state = client.get_state()
    deadline = time.monotonic() + timeout
    while state.status in (State.STATUS_NONE, State.STATUS_RUNNING):
        assert time.monotonic() < deadline, state
        client.play_mission(time.time() + 3.0, leases=leases(robot))
        time.sleep(0.05)
        state = client.get_state()
    assert state.status == expected, (State.Status.Name(state.status), state.error,
                                      root.name)
    return state


# ---------------------------------------------------------------------------------- types
def _switch():
    spec = nodes_pb2.Switch()
    spec.pivot_value.runtime_var.name = "pick"
    spec.int_children[1].CopyFrom(result("one", util_pb2.RESULT_FAILURE))
    spec.int_children[2].CopyFrom(result("two", util_pb2.RESULT_SUCCESS))
    spec.default_child.CopyFrom(result("default", util_pb2.RESULT_FAILURE))
    return define("pick two", packed("switch", spec), pick=2)


def _parallel_and():
    spec = nodes_pb2.ParallelAnd(children=[sleep("a", 0.2), sleep("b", 0.4)])
    return packed("parallel and", spec)


def _repeat():
    spec = nodes_pb2.Repeat(max_starts=3, start_counter_state_name="i",
                            child=sleep("short", 0.01))
    return packed("repeat", spec)


def _retry():
    return packed("retry", nodes_pb2.Retry(max_attempts=3,
                                           child=result("fails", util_pb2.RESULT_FAILURE)))


def _for_duration():
    spec = nodes_pb2.ForDuration(child=sleep("too long", 10),
                                 timeout_child=result("timeout", util_pb2.RESULT_SUCCESS))
    spec.duration.FromMilliseconds(300)
    return packed("for duration", spec)


def _simple_parallel():
    return packed("simple parallel", nodes_pb2.SimpleParallel(
        primary=sleep("primary", 0.2), secondary=sleep("secondary", 10)))


def _selector():
    return packed("selector", nodes_pb2.Selector(children=[
        result("fails", util_pb2.RESULT_FAILURE), result("succeeds", util_pb2.RESULT_SUCCESS)]))


def _restart_when_paused():
    return packed("restart when paused",
                  nodes_pb2.RestartWhenPaused(child=sleep("inner", 0.2)))


def _format_blackboard():
    spec = nodes_pb2.FormatBlackboard(key="out", format="loop {n} at {x:.1f}")
    check = compare("formatted", "out", nodes_pb2.Condition.COMPARE_EQ,
                    string_value="loop 3 at 2.5")
    return define("vars", sequence("format then check", packed("format", spec), check),
                  n=3, x=2.5, out="")


def _date_to_blackboard():
    check = compare("a date", "today", nodes_pb2.Condition.COMPARE_GT, string_value="2000")
    return define("vars", sequence(
        "date then check", packed("date", nodes_pb2.DateToBlackboard(key="today")), check),
        today="")


def _robot_state():
    check = compare("battery known", "robot.power_state.locomotion_charge_percentage.value",
                    nodes_pb2.Condition.COMPARE_GT, float_value=1.0)
    return packed("robot state", nodes_pb2.BosdynRobotState(state_name="robot", child=check))


def _clear_behavior_faults():
    return packed("clear faults", nodes_pb2.ClearBehaviorFaults(
        cleared_cause_fall_blackboard_name="falls"))


def _mission_text():
    return packed("text", nodes_pb2.CreateMissionText(mission_text="walking",
                                                      child=sleep("while shown", 0.1)))


def _retain_lease():
    return packed("retain", nodes_pb2.RetainLease())


def _stand_then_sit():
    return sequence("posture", power_on(),
                    command("stand", RobotCommandBuilder.synchro_stand_command()),
                    command("sit", RobotCommandBuilder.synchro_sit_command()))


def _dock_state():
    check = compare("undocked", "dock.status", nodes_pb2.Condition.COMPARE_EQ,
                    int_value=docking_pb2.DockState.DOCK_STATUS_UNDOCKED)
    return packed("dock state", nodes_pb2.BosdynDockState(state_name="dock", child=check))


def _set_and_check():
    return define("vars", sequence(
        "set then check", set_var("set", "x", int_value=7),
        compare("x is 7", "x", nodes_pb2.Condition.COMPARE_EQ, int_value=7)), x=0)


def _capture(group_format: str = "round-{n}", captures=("robot-state",)):
    spec = nodes_pb2.DataAcquisition(group_name_format=group_format,
                                     action_name_format="gauge",
                                     completion_behavior=nodes_pb2.DataAcquisition
                                     .COMPLETE_AFTER_SAVED)
    for name in captures:
        spec.request.acquisition_requests.data_captures.add(name=name)
    return define("vars", packed("capture", spec), n=3)


SUPPORTED = {
    "sequence": (lambda: sequence("seq", sleep("s", 0.05)), State.STATUS_SUCCESS),
    "selector": (_selector, State.STATUS_SUCCESS),
    "switch": (_switch, State.STATUS_SUCCESS),
    "parallel_and": (_parallel_and, State.STATUS_SUCCESS),
    "repeat": (_repeat, State.STATUS_SUCCESS),
    "retry": (_retry, State.STATUS_FAILURE),
    "for_duration": (_for_duration, State.STATUS_SUCCESS),
    "simple_parallel": (_simple_parallel, State.STATUS_SUCCESS),
    "restart_when_paused": (_restart_when_paused, State.STATUS_SUCCESS),
    "condition+set_blackboard+define_blackboard": (_set_and_check, State.STATUS_SUCCESS),
    "format_blackboard": (_format_blackboard, State.STATUS_SUCCESS),
    "date_to_blackboard": (_date_to_blackboard, State.STATUS_SUCCESS),
    "constant_result": (lambda: result("fail", util_pb2.RESULT_FAILURE),
                        State.STATUS_FAILURE),
    "sleep": (lambda: sleep("nap", 0.1), State.STATUS_SUCCESS),
    "create_mission_text": (_mission_text, State.STATUS_SUCCESS),
    "retain_lease": (_retain_lease, State.STATUS_SUCCESS),
    "bosdyn_robot_state": (_robot_state, State.STATUS_SUCCESS),
    "clear_behavior_faults": (_clear_behavior_faults, State.STATUS_SUCCESS),
    "bosdyn_power_request+bosdyn_robot_command": (_stand_then_sit, State.STATUS_SUCCESS),
    "bosdyn_dock_state": (_dock_state, State.STATUS_SUCCESS),
    "data_acquisition": (_capture, State.STATUS_SUCCESS),
}


@pytest.mark.parametrize("kind", sorted(SUPPORTED))
def test_each_node_type_packed_in_impl_plays_to_its_outcome(sim, robot, kind):
    build, expected = SUPPORTED[kind]
    with operated(robot):
        run(robot, build(), expected)


def test_typed_and_packed_encodings_compile_to_the_same_tree(sim, robot):
    typed = nodes_pb2.Node(name="root")
    typed.sequence.children.add(name="nap").sleep.seconds = 0.05
    client = robot.ensure_client(MissionClient.default_service_name)
    with operated(robot):
        typed_info = client.load_mission(typed, leases=leases(robot)).mission_info
        packed_info = client.load_mission(sequence("root", sleep("nap", 0.05)),
                                          leases=leases(robot)).mission_info
    assert typed_info.root.name == packed_info.root.name == "root"
    assert [c.name for c in typed_info.root.children] == \
        [c.name for c in packed_info.root.children] == ["nap"]


@pytest.mark.parametrize("field_name", sorted(REFUSED))
def test_node_types_the_simulator_cannot_run_are_refused_at_load_with_their_name(
        sim, robot, field_name):
    field = nodes_pb2.Node.DESCRIPTOR.fields_by_name.get(field_name)
    type_name = field.message_type.name if field is not None else "BosdynNavigateToAnchor"
    message = getattr(nodes_pb2, type_name)()
    root = sequence("root", sleep("fine", 0.1), packed("cannot run", message))
    client = robot.ensure_client(MissionClient.default_service_name)
    with operated(robot), pytest.raises(ValidationError) as raised:
        client.load_mission(root, leases=leases(robot))
    (failed,) = raised.value.failed_nodes
    assert failed.name == "cannot run"
    assert message.DESCRIPTOR.name in failed.error
    assert REFUSED[field_name] in failed.error


def test_impl_of_a_non_mission_type_is_refused(sim, robot):
    root = packed("not a node", robot_state_pb2.RobotState())
    client = robot.ensure_client(MissionClient.default_service_name)
    with operated(robot), pytest.raises(ValidationError) as raised:
        client.load_mission(root, leases=leases(robot))
    assert "bosdyn.api.RobotState" in raised.value.failed_nodes[0].error


# ------------------------------------------------------------------ references, parameters
def test_node_reference_uses_the_referenced_node(sim, robot):
    shared = set_var("count", "n", int_value=5)
    shared.reference_id = "set-n"
    again = nodes_pb2.Node(name="again", node_reference="set-n")
    check = compare("n is 5", "n", nodes_pb2.Condition.COMPARE_EQ, int_value=5)
    with operated(robot):
        run(robot, define("vars", sequence("root", shared, again, check), n=0),
            State.STATUS_SUCCESS)
        dangling = sequence("root", nodes_pb2.Node(name="dangling", node_reference="nope"))
        client = robot.ensure_client(MissionClient.default_service_name)
        with pytest.raises(ValidationError) as raised:
            client.load_mission(dangling, leases=leases(robot))
        assert "'nope'" in raised.value.failed_nodes[0].error


def test_parameters_and_overrides_write_into_node_fields(sim, robot):
    nap = sleep("nap", 60.0)  # overridden to 0.2 s through a parameter
    override = nap.overrides.add(key="seconds")
    override.value.parameter.name = "nap_time"
    nap.parameters.add(name="nap_time", type=util_pb2.VariableDeclaration.TYPE_FLOAT)
    root = sequence("root", nap)
    root.parameter_values.add(key="nap_time").value.constant.float_value = 0.2
    with operated(robot):
        started = time.monotonic()
        run(robot, root, State.STATUS_SUCCESS, timeout=10)
        assert time.monotonic() - started < 5
        bad = sleep("nap", 0.1)
        bad.parameters.add(name="undefined", type=util_pb2.VariableDeclaration.TYPE_FLOAT)
        client = robot.ensure_client(MissionClient.default_service_name)
        with pytest.raises(ValidationError) as raised:
            client.load_mission(sequence("root", bad), leases=leases(robot))
        assert "'undefined'" in raised.value.failed_nodes[0].error
        wrong = sleep("nap", 0.1)
        wrong.overrides.add(key="no_such_field").value.constant.float_value = 1.0
        with pytest.raises(ValidationError):
            client.load_mission(wrong, leases=leases(robot))


# ---------------------------------------------------------------------------------- states
def test_state_machine_as_sdk_programs_see_it(sim, robot):
    client = robot.ensure_client(MissionClient.default_service_name)
    walk = nodes_pb2.ForDuration(
        child=command("walk", RobotCommandBuilder.synchro_velocity_command(0.2, 0, 0)),
        timeout_child=result("done", util_pb2.RESULT_SUCCESS))
    walk.duration.FromSeconds(2)
    root = sequence("walk a bit", power_on(),
                    command("stand", RobotCommandBuilder.synchro_stand_command()),
                    packed("walk 2 s", walk))
    with operated(robot):
        assert client.get_state().status == State.STATUS_NONE  # nothing loaded
        client.load_mission(root, leases=leases(robot))
        assert client.get_state().status == State.STATUS_NONE  # loaded, not started
        client.play_mission(time.time() + 1.5, leases=leases(robot))
        assert client.get_state().status == State.STATUS_RUNNING
        assert wait_for(lambda: client.get_state().status == State.STATUS_PAUSED, 5)
        paused_at = client.get_state().tick_counter
        assert holds(lambda: client.get_state().tick_counter == paused_at, 0.3)  # no ticks
        run_state = None
        while run_state is None or run_state.status == State.STATUS_RUNNING:
            client.play_mission(time.time() + 1.5, leases=leases(robot))
            time.sleep(0.1)
            run_state = client.get_state()
        assert run_state.status == State.STATUS_SUCCESS, run_state
        history = client.get_state(lower_tick_bound=0).history
        assert history[0].tick_counter == run_state.tick_counter  # newest first
        assert {s.id for tick in history for s in tick.node_states}

        client.load_mission(sequence("long", sleep("long", 30)), leases=leases(robot))
        client.play_mission(time.time() + 10, leases=leases(robot))
        assert client.get_state().status == State.STATUS_RUNNING
        first_id = client.get_state().mission_id
        client.load_mission(sequence("replacement", sleep("short", 0.1)), leases=leases(robot))
        replaced = client.get_state()
        assert replaced.mission_id == first_id + 1
        assert replaced.status == State.STATUS_NONE and replaced.tick_counter == 0
        assert client.get_mission().root.name == "replacement"

        client.play_mission(time.time() + 10, leases=leases(robot))
        client.load_mission(sequence("long", sleep("long", 30)), leases=leases(robot))
        client.play_mission(time.time() + 10, leases=leases(robot))
        client.stop_mission()
        assert client.get_state().status == State.STATUS_STOPPED


def test_failure_and_error_outcomes(sim, robot):
    missing_var = compare("reads nothing", "undefined", nodes_pb2.Condition.COMPARE_EQ,
                          int_value=1)
    with operated(robot):
        run(robot, sequence("fails", result("no", util_pb2.RESULT_FAILURE)),
            State.STATUS_FAILURE)
        state = run(robot, sequence("errs", missing_var), State.STATUS_ERROR)
        assert "undefined" in state.error


def test_prompt_answered_by_a_second_client(sim, robot):
    prompt = nodes_pb2.Prompt(text="Open the door?", source="answer")
    prompt.options.add(text="yes", answer_code=1)
    prompt.options.add(text="no", answer_code=0)
    prompt.child.CopyFrom(compare("said yes", "answer", nodes_pb2.Condition.COMPARE_EQ,
                                  int_value=1))
    operator = connect(sim)  # the tablet: another client, no lease
    tablet = operator.ensure_client(MissionClient.default_service_name)
    client = robot.ensure_client(MissionClient.default_service_name)
    with operated(robot):
        client.load_mission(packed("ask", prompt), leases=leases(robot))
        client.play_mission(time.time() + 10, leases=leases(robot))
        assert wait_for(lambda: tablet.get_state().questions, 5)
        (question,) = tablet.get_state().questions
        assert question.text == "Open the door?"
        tablet.answer_question(question.id, 1)
        while client.get_state().status in (State.STATUS_NONE, State.STATUS_RUNNING):
            client.play_mission(time.time() + 3, leases=leases(robot))
            time.sleep(0.05)
        state = client.get_state()
        assert state.status == State.STATUS_SUCCESS, state
        assert state.answered_questions[0].accepted_answer_code == 1
    operator.time_sync.stop()


def custom_params_prompt() -> nodes_pb2.Node:
    """The SDK's mission_question_answerer example's second prompt: a bool custom param
    'question', its answer read by a Condition as <source>.values["question"]..."""
    prompt = nodes_pb2.Prompt(text="Custom param question:", source="custom_answer",
                              for_autonomous_processing=True)
    spec = prompt.custom_params.specs["question"]
    spec.spec.bool_spec.SetInParent()
    spec.ui_info.display_name = "Question"
    condition = nodes_pb2.Condition(operation=nodes_pb2.Condition.COMPARE_EQ)
    condition.lhs.const.bool_value = True
    condition.rhs.var.name = 'custom_answer.values["question"].bool_value.value'
    condition.rhs.var.type = util_pb2.VariableDeclaration.TYPE_BOOL
    prompt.child.CopyFrom(packed("check the answer", condition))
    return packed("ask a custom param question", prompt)


@pytest.mark.parametrize("answer,expected", [(True, State.STATUS_SUCCESS),
                                             (False, State.STATUS_FAILURE)])
def test_prompt_with_custom_params_answered_as_the_sdk_example_does(sim, robot, answer,
                                                                     expected):
    client = robot.ensure_client(MissionClient.default_service_name)
    with operated(robot):
        client.load_mission(custom_params_prompt(), leases=leases(robot))
        client.play_mission(time.time() + 10, leases=leases(robot))
        assert wait_for(lambda: client.get_state().questions, 5)
        (question,) = client.get_state().questions
        assert question.HasField("custom_params") and not question.options
        wrong = service_customization_pb2.DictParam()
        wrong.values["question"].string_value.value = "yes"  # not the bool the spec asks
        with pytest.raises(CustomParamsError):
            client.answer_question(question.id, None, wrong)
        assert client.get_state().questions  # still open
        values = service_customization_pb2.DictParam()
        values.values["question"].bool_value.value = answer
        client.answer_question(question.id, None, values)
        while client.get_state().status in (State.STATUS_NONE, State.STATUS_RUNNING):
            client.play_mission(time.time() + 3, leases=leases(robot))
            time.sleep(0.05)
        state = client.get_state()
        assert state.status == expected, state
        assert state.answered_questions[0].custom_params.values["question"].bool_value.value \
            == answer


def test_mission_text_is_shown_while_its_node_runs(sim, robot):
    text = nodes_pb2.CreateMissionText(mission_text="charging {n}",
                                       child=sleep("shown", 1.0))
    client = robot.ensure_client(MissionClient.default_service_name)
    with operated(robot):
        client.load_mission(define("vars", packed("text", text), n=2), leases=leases(robot))
        client.play_mission(time.time() + 10, leases=leases(robot))
        assert wait_for(lambda: [t.text for t in client.get_state().active_mission_text] ==
                        ["charging 2"], 3)
        assert wait_for(lambda: client.get_state().status == State.STATUS_SUCCESS, 5)
        assert not client.get_state().active_mission_text


def test_a_data_acquisition_node_stores_its_captures_under_the_formatted_names(sim, robot):
    store = sim.captures
    before = store.max_id()
    with operated(robot):
        run(robot, _capture(captures=("robot-state", "basic-position-data")),
            State.STATUS_SUCCESS)
    stored = store.query(data_acquisition_store_pb2.QueryParameters(include_data=True))
    new = [r.data_id for r in stored if r.data_id.id > before]
    assert sorted(d.channel for d in new) == ["basic-position-data", "robot-state"]
    assert {(d.action_id.group_name, d.action_id.action_name) for d in new} == {
        ("round-3", "gauge")}


def test_a_data_acquisition_node_of_a_capture_the_robot_lacks_errors(sim, robot):
    with operated(robot):
        state = run(robot, _capture(captures=("thermal-drone",)), State.STATUS_ERROR)
    assert "thermal-drone" in str(state)


def _spot_cam_round():
    led = nodes_pb2.SpotCamLed()
    led.brightnesses[0] = 0.5
    ptz = nodes_pb2.SpotCamPtz()
    ptz.ptz_position.ptz.name = "mech"
    ptz.ptz_position.pan.value, ptz.ptz_position.tilt.value = 90.0, 10.0
    ptz.ptz_position.zoom.value = 2.0
    store = nodes_pb2.SpotCamStoreMedia(tag="valve 9")
    store.camera.name = "ptz"
    return sequence("inspect", packed("lights", led), packed("point", ptz),
                    packed("autofocus", nodes_pb2.SpotCamResetAutofocus()),
                    packed("store", store))


def test_spot_cam_nodes_drive_the_spot_cam(certs_dir):
    with running_sim(certs_dir, has_spot_cam=True) as spot:
        robot = connect(spot)
        try:
            with operated(robot):
                run(robot, _spot_cam_round(), State.STATUS_SUCCESS)
        finally:
            robot.time_sync.stop()
        assert spot.spot_cam.lights.get()[0] == 0.5
        heads = spot.spot_cam.heads
        assert wait_for(lambda: heads.position("mech", spot.clock.now_nsec()).pan == 90.0, 10)
        assert heads.lens_initializations == 1
        points = spot.spot_cam.media_log.points()
        assert [p.tag for p in points] == ["valve 9"]


def test_spot_cam_nodes_error_on_a_robot_without_one(sim, robot):
    with operated(robot):
        state = run(robot, _spot_cam_round(), State.STATUS_ERROR)
    assert "this robot has no Spot CAM payload" in str(state)
