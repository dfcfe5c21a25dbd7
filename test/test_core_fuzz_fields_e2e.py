"""Every field of every service the driver offers, one at a time, with the values that break
code that does not check: NaN, +-inf and 1e308 in floating-point fields, 2**31 in integer
fields (the largest value where the type cannot hold it), empty and 100,000-character
strings, an unknown frame in every ``frame_id``, and 100,000-element sequences, against a
simulated Spot with an arm and a Spot CAM, the robot claimed, powered and standing.

Each case is judged (``judge``): the caller gets an answer; a refusal names the field (its
name or the name of a field holding it) or a field the request left empty, unless the robot
itself refused the command (it was carried out), the untouched request is refused for a reason
of its own and the case repeats it, or the robot's state refuses it whatever the field holds
(``STATE_REFUSALS``); nothing is a crash (``errors.INTERNAL``). Every
command the robot received over the run is valid (``CommandLog.problems``), and the driver is
still up. Every action's goal is fuzzed the same way: a goal the driver refuses ends aborted
at once with its reason, judged as a service's refusal; one still running after
``REFUSAL_S`` was accepted (carried out) and is cancelled. Services and actions are found in
the running graph, so one added later is fuzzed too; the command topics have their own
properties in ``test_core_fuzz_e2e.py``."""

import copy
import math
import tempfile
from collections.abc import Iterator

import pytest
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import Pose, PoseStamped
from nav_msgs.msg import Odometry
from ros_harness import DriverProcess, RosClient
from rosidl_runtime_py.utilities import get_action, get_service
from std_srvs.srv import Trigger

from conftest import PASSWORD, USERNAME, running_sim
from spot_driver.core.errors import INTERNAL

FLOATS = (math.nan, math.inf, -math.inf, 1e308)
# the largest integer each type holds, or 2**31 where it holds that
INTEGERS = {"int8": 127, "uint8": 255, "int16": 2**15 - 1, "uint16": 2**16 - 1,
            "int32": 2**31 - 1, "uint32": 2**31, "int64": 2**31, "uint64": 2**31}
LONG = 100_000
REFUSAL_S = 0.5  # a goal the driver refuses ends within this (checked before anything is sent)
# What this robot answers whatever the field holds: it has no capture or map stored (a
# download with nothing to download; a robot that has both is exercised by the capability's
# own tests)
STATE_REFUSALS = {"/data_acquisition/download": "no stored captures match",
                  "/graph_nav/download_map": "the robot has no map to download",
                  "/graph_nav/navigate_route": "the robot has no map; upload or record one "
                                               "first"}
SKIPPED_TYPES = {"std_srvs/srv/Trigger", "std_srvs/srv/Empty"}  # no field to fuzz
SKIPPED_SUFFIXES = ("/describe_parameters", "/get_parameter_types", "/get_parameters",
                    "/list_parameters", "/set_parameters", "/set_parameters_atomically",
                    "/get_type_description")


def _pose(frame: str, x: float, y: float, z: float) -> PoseStamped:
    msg = PoseStamped(pose=Pose())
    msg.header.frame_id = frame
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = x, y, z
    msg.pose.orientation.w = 1.0
    return msg


def valid_bases(directory: str) -> dict:
    """Requests each service carries out, where the default request is refused because of a
    field other than the one fuzzed (an empty frame, a zero zoom): a mutation is then judged
    against a request that would otherwise pass."""
    def fill(**values):
        def build(request):
            for name, value in values.items():
                setattr(request, name, copy.deepcopy(value))  # each request its own
            return request
        return build

    return {
        "/arm/inverse_kinematics": fill(target_pose=_pose("body", 0.7, 0.0, 0.3),
                                        wrist_tform_tool=_pose("", 0.0, 0.0, 0.0).pose),
        "/world_objects/add_nogo_region": fill(name="fuzz", pose=_pose("odom", 3.0, 3.0, 0.0),
                                               length=0.5, width=0.5),
        "/spot_cam/set_ptz_position": fill(name="mech", zoom=1.0),
        "/locomotion_mode": fill(locomotion_hint=1),
        "/stairs_mode": fill(stairs_mode=1),
        "/spot_cam/set_ir_colormap": fill(colormap="jet", min_celsius=0.0, max_celsius=40.0),
        "/choreography/start_recording_state": fill(duration=1.0),
    }


def _unchanged(request):
    return request


def leaves(msg, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every leaf field of ``msg``: its path and its ROS type."""
    for name, ros_type in msg.get_fields_and_field_types().items():
        value = getattr(msg, name)
        if hasattr(value, "get_fields_and_field_types"):
            yield from leaves(value, (*path, name))
        else:
            yield (*path, name), ros_type


def values_for(path: tuple[str, ...], ros_type: str) -> list:
    """The values a field of ``ros_type`` at ``path`` is fuzzed with."""
    if ros_type in ("double", "float"):
        return list(FLOATS)
    if ros_type in INTEGERS:
        return [INTEGERS[ros_type]]
    if ros_type == "string":
        out = ["", "x" * LONG]
        return [*out, "no_such_frame"] if path[-1] == "frame_id" else out
    if ros_type.startswith("sequence<") and ros_type.endswith(">"):
        inner = ros_type[len("sequence<"):-1]
        if inner in ("double", "float"):
            return [[math.nan], [0.0] * LONG]
        if inner in INTEGERS:
            return [[0] * LONG]
        if inner == "string":
            return [[""], ["x"] * 10_000]
    return []


def put(request, path: tuple[str, ...], value) -> None:
    holder = request
    for name in path[:-1]:
        holder = getattr(holder, name)
    setattr(holder, path[-1], value)


def names_the_field(message: str, path: tuple[str, ...]) -> bool:
    """Whether ``message`` names the field or a field holding it (``linear.x`` counts for
    ``velocity_limit.linear.x``; ``velocity limit`` for ``velocity_limit``)."""
    text = message.lower()
    return any(name.lower() in text or name.replace("_", " ").lower() in text
               for name in path if name not in ("data", "x", "y", "z", "w")) or \
        ".".join(path[-2:]).lower() in text or \
        (path[-1] in ("x", "y", "z", "w") and f"{path[-1]}," in text) or \
        (path[-1] in ("data",) and "data" in text.split())


def empty_fields(request) -> list[str]:
    """The request's top-level fields left empty (an empty string or sequence)."""
    return [field for field in request.get_fields_and_field_types()
            if isinstance(getattr(request, field), str | list | bytes)
            and len(getattr(request, field)) == 0]


def judge(name: str, path: tuple[str, ...], value, answer, base, empty=()) -> str:
    """"" if the case passes, else what is wrong. ``empty``: the request's fields left empty
    (a refusal naming one of them names what is missing)."""
    if answer is None:
        return f"{name} {'.'.join(path)}: no answer"
    message = getattr(answer, "message", "")
    if message.startswith(INTERNAL):
        return f"{name} {'.'.join(path)}={str(value)[:20]}: a crash: {message[:200]}"
    if getattr(answer, "success", True):
        return ""  # carried out
    if names_the_field(message, path) or any(names_the_field(message, (field,))
                                             for field in empty):
        return ""
    if message.startswith(("the robot refused", "robot refused")):
        return ""  # carried out: the robot itself answered the command
    if STATE_REFUSALS.get(name) == message:
        return ""
    if base is not None and not getattr(base, "success", True) and message == base.message:
        return ""  # refused for the untouched request's own reason
    return f"{name} {'.'.join(path)}={str(value)[:20]}: the refusal does not name the field: " \
           f"{message[:200]!r}"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs"), has_arm=True, has_spot_cam=True) as sim:
        ros = RosClient("fuzz_fields_client")
        driver = DriverProcess(sim, tmp_path_factory.mktemp("logs") / "driver.log",
                               USERNAME, PASSWORD,
                               # a loaded machine's stall must not read as an outage in the
                               # middle of a case (outage detection is test_core_resilience_e2e's)
                               params={"auto_claim": "true", "link_timeout": 5.0})
        try:
            ros.subscribe("/odometry", Odometry)
            assert ros.wait_for(lambda: ros.latest("/odometry") is not None, 30), \
                driver.output()[-3000:]
            assert ros.wait_for(lambda: sim.robot.leases.owner_of("body") is not None, 20)
            for service in ("/power_on", "/stand"):
                answer = ros.call(Trigger, service)
                assert answer.success, (service, answer.message)
            yield sim, ros, driver
        finally:
            ros.close()
            driver.stop()


def test_every_field_of_every_service_is_refused_by_name_or_carried_out(world):
    sim, ros, driver = world
    offered = sorted((name, types[0]) for name, types in ros.node.get_service_names_and_types()
                     if "/_action/" not in name and not name.endswith(SKIPPED_SUFFIXES)
                     and types[0] not in SKIPPED_TYPES and not name.startswith("/fuzz"))
    assert len(offered) > 30, offered  # the driver's services, found in the graph
    bases = valid_bases(tempfile.mkdtemp(prefix="fuzz_fields_"))
    failures, cases = [], 0
    for name, type_name in offered:
        srv = get_service(type_name)

        def base_request(srv=srv, name=name):
            return bases.get(name, _unchanged)(srv.Request())

        base = ros.call(srv, name, base_request(), timeout=30)
        if name in bases:
            assert getattr(base, "success", True), (name, base.message)  # the base is valid
        for path, ros_type in leaves(srv.Request()):
            for value in values_for(path, ros_type):
                request = base_request()
                put(request, path, value)
                cases += 1
                try:
                    answer = ros.call(srv, name, request, timeout=30)
                except AssertionError:
                    answer = None
                problem = judge(name, path, value, answer, base, empty_fields(request))
                if problem:
                    failures.append(problem)
    assert cases > 200, cases
    check_run(sim, driver, failures)


def check_run(sim, driver, failures: list[str]) -> None:
    """No case failed, the driver is still up, and every command the robot received was
    valid."""
    assert not failures, "\n".join(failures)
    assert driver.process.poll() is None, driver.output()[-3000:]
    problems = sim.commands.problems(sim.clock.now_nsec())
    assert not problems, problems[:5]


def run_goal(ros, action_type, name: str, goal, driver_log):
    """Send ``goal``: its result if it ended within REFUSAL_S (an answer with ``success`` and
    ``message``: the result's ``message`` or ``error_string``, or for a result with neither,
    control_msgs' GripperCommand, the reason the driver logged), else None after cancelling it
    (carried out). Rejected: the rejection."""
    client = ros.action_client(action_type, name)
    handle = ros.wait_future(client.send_goal_async(goal), timeout=30)
    if not handle.accepted:
        return _Answer(False, "rejected")
    result = handle.get_result_async()
    if ros.wait_for(result.done, REFUSAL_S, period=0.01):
        answer = result.result()
        ended = answer.result
        message = getattr(ended, "message", None) or getattr(ended, "error_string", None)
        if message is None:
            logged = [line for line in driver_log().splitlines() if f"{name[1:]}: " in line]
            message = logged[-1] if logged else ""
        return _Answer(answer.status == GoalStatus.STATUS_SUCCEEDED, message)
    ros.wait_future(handle.cancel_goal_async(), timeout=30)
    ros.wait_future(result, timeout=60)  # the slot is free for the next goal
    return None


class _Answer:
    def __init__(self, success: bool, message: str) -> None:
        self.success, self.message = success, message


def test_every_field_of_every_action_goal_is_refused_by_name_or_carried_out(world):
    sim, ros, driver = world
    offered = sorted({(name.split("/_action/")[0], types[0].replace("_SendGoal", ""))
                      for name, types in ros.node.get_service_names_and_types()
                      if name.endswith("/_action/send_goal")})
    assert len(offered) > 15, offered
    failures, cases = [], 0
    for name, type_name in offered:
        action_type = get_action(type_name)
        base = run_goal(ros, action_type, name, action_type.Goal(), driver.output)
        for path, ros_type in leaves(action_type.Goal()):
            for value in values_for(path, ros_type):
                goal = action_type.Goal()
                put(goal, path, value)
                cases += 1
                answer = run_goal(ros, action_type, name, goal, driver.output)
                if answer is None:
                    continue  # accepted and running: carried out (cancelled)
                problem = judge(name, path, value, answer, base, empty_fields(goal))
                if problem:
                    failures.append(problem)
    assert cases > 100, cases
    check_run(sim, driver, failures)


def test_the_judge_fails_a_crash_an_unnamed_refusal_and_a_lost_answer():
    """No robot needed: what judge passes and what it fails."""
    path = ("velocity_limit", "linear", "x")
    assert judge("s", path, math.nan, _Answer(False, "velocity limits must be finite"), None) == ""
    assert judge("s", path, math.nan, _Answer(True, "done"), None) == ""
    assert "crash" in judge("s", path, math.nan, _Answer(False, f"{INTERNAL}: ValueError: x"),
                            None)
    assert "does not name" in judge("s", ("name",), "", _Answer(False, "unknown 'x'"),
                                    _Answer(True, ""))
    assert judge("s", ("name",), "", _Answer(False, "no recording"),
                 _Answer(False, "no recording")) == ""  # the base's own reason
    assert "no answer" in judge("s", path, 1.0, None, None)
