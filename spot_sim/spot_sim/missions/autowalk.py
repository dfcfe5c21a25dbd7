"""Compile an Autowalk (``walks.proto``) into a mission behaviour tree for the mission service.

The tree is a Sequence of the walk's elements (skipped ones left out). Each element is a
Sequence of its target (BosdynNavigateTo, BosdynNavigateRoute or BosdynGraphNavLocalize) and
its action (Sleep, a DataAcquisition capture grouped under the walk's name, or the action's
own mission node). A failure behaviour's ``retry_count``
wraps the part in a Retry, ``proceed_if_able`` in a Selector that succeeds anyway; the other
behaviours (safe power off, return to start) are not simulated: they are warnings and the
failure ends the walk. Playback ``continuous`` repeats the walk forever, ``periodic`` repeats it
``repetitions`` times with ``interval`` between starts. The first entry of ``docks`` adds
navigating to its prep waypoint and docking at the end.

Action wrappers: ``robot_body_pose`` (the tablet records it on inspection points) stands the
robot with that body pose around the action and back to a neutral stand after it;
``robot_body_sit`` sits for the action and stands again. Not supported here, named per
element in the answer: remote gRPC and choreography actions, and the other
wrappers (arm pointing, Spot CAM, gripper).
"""

from dataclasses import dataclass, field

from bosdyn.api import robot_command_pb2
from bosdyn.api.autowalk import autowalk_pb2, walks_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.api.mission import nodes_pb2, util_pb2
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2
from bosdyn.client.robot_command import RobotCommandBuilder

GRAPH_NAV_SERVICE = "graph-nav-service"
_UNSUPPORTED_ACTIONS = {
    "remote_grpc": "remote mission service actions in Autowalk are not simulated (a "
                   "mission's RemoteGrpc node is)",
    "execute_choreography": "choreography actions in walks are not simulated",
}


SIMULATED_WRAPPERS = ("robot_body_pose", "robot_body_sit")


@dataclass
class CompiledWalk:
    root: nodes_pb2.Node | None
    identifiers: list[autowalk_pb2.ElementIdentifiers] = field(default_factory=list)
    failed: dict[int, autowalk_pb2.FailedElement] = field(default_factory=dict)


def _node(name: str, user_data_id: str = "", **typed) -> nodes_pb2.Node:
    node = nodes_pb2.Node(name=name, **typed)
    if user_data_id:
        node.user_data.CopyFrom(util_pb2.UserData(id=user_data_id))
    return node


def _target(element: walks_pb2.Element, name: str, uid: str) -> nodes_pb2.Node | None:
    target = element.target
    which = target.WhichOneof("target")
    if which == "navigate_to":
        spec = nodes_pb2.BosdynNavigateTo(
            service_name=GRAPH_NAV_SERVICE,
            destination_waypoint_id=target.navigate_to.destination_waypoint_id,
            travel_params=target.navigate_to.travel_params)
        return _node(f"{name}: navigate", uid, bosdyn_navigate_to=spec)
    if which == "navigate_route":
        spec = nodes_pb2.BosdynNavigateRoute(service_name=GRAPH_NAV_SERVICE,
                                             route=target.navigate_route.route,
                                             travel_params=target.navigate_route.travel_params)
        return _node(f"{name}: navigate route", uid, bosdyn_navigate_route=spec)
    if which == "relocalize":
        spec = nodes_pb2.BosdynGraphNavLocalize(
            service_name=GRAPH_NAV_SERVICE,
            localization_request=target.relocalize.set_localization_request)
        return _node(f"{name}: relocalize", uid, bosdyn_graph_nav_localize=spec)
    return None


def _capture(action: walks_pb2.Action.DataAcquisition, name: str, uid: str,
             group: str) -> nodes_pb2.Node:
    """A DataAcquisition node: the walk's name as the capture group and the element's as the
    action, unless the request names its own."""
    spec = nodes_pb2.DataAcquisition(service_name="data-acquisition",
                                     completion_behavior=action.completion_behavior or
                                     nodes_pb2.DataAcquisition.COMPLETE_AFTER_SAVED)
    spec.request.CopyFrom(action.acquire_data_request)
    ids = spec.request.action_id
    ids.group_name, ids.action_name = ids.group_name or group, ids.action_name or name
    return _node(f"{name}: capture", uid, data_acquisition=spec)


def _action(element: walks_pb2.Element, name: str, uid: str, errors: list[str],
            group: str = "autowalk") -> nodes_pb2.Node | None:
    which = element.action.WhichOneof("action")
    if which is None:
        return None
    if which == "data_acquisition":
        return _capture(element.action.data_acquisition, name, uid, group)
    if which == "sleep":
        seconds = element.action.sleep.duration.ToNanoseconds() / 1e9
        return _node(f"{name}: sleep", uid, sleep=nodes_pb2.Sleep(seconds=seconds))
    if which == "node":
        node = nodes_pb2.Node()
        node.CopyFrom(element.action.node)
        node.user_data.id = node.user_data.id or uid
        return node
    errors.append(_UNSUPPORTED_ACTIONS.get(which, f"action {which!r} is not supported"))
    return None


def _command(name: str, command: robot_command_pb2.RobotCommand) -> nodes_pb2.Node:
    return _node(name, bosdyn_robot_command=nodes_pb2.BosdynRobotCommand(command=command))


def _wrapped(action: nodes_pb2.Node, wrapper: walks_pb2.ActionWrapper,
             name: str) -> nodes_pb2.Node:
    """The action inside its wrappers: the body posed (or sat) while it runs, then a neutral
    stand. The action keeps its own node (and user data id)."""
    before, after = [], []
    if wrapper.HasField("robot_body_sit"):
        before.append(_command(f"{name}: sit", RobotCommandBuilder.synchro_sit_command()))
        after.append(_command(f"{name}: stand", RobotCommandBuilder.synchro_stand_command()))
    elif wrapper.HasField("robot_body_pose"):
        params = spot_command_pb2.MobilityParams()
        params.body_control.base_offset_rt_footprint.points.add().pose.CopyFrom(
            wrapper.robot_body_pose.target_tform_body)
        before.append(_command(f"{name}: body pose",
                               RobotCommandBuilder.synchro_stand_command(params=params)))
        after.append(_command(f"{name}: neutral stand",
                              RobotCommandBuilder.synchro_stand_command()))
    if not before:
        return action
    return _node(f"{name}: wrapped action",
                 sequence=nodes_pb2.Sequence(children=[*before, action, *after]))


def _with_failure(node: nodes_pb2.Node, behavior: walks_pb2.FailureBehavior,
                  warnings: list[str], part: str) -> nodes_pb2.Node:
    which = behavior.WhichOneof("default_behavior")
    if behavior.retry_count > 0:
        node = _node(f"{node.name} (retry)", retry=nodes_pb2.Retry(
            max_attempts=behavior.retry_count + 1, child=node))
    if which == "proceed_if_able":
        success = _node("proceed", constant_result=nodes_pb2.ConstantResult(
            result=util_pb2.RESULT_SUCCESS))
        node = _node(f"{node.name} (proceed if able)",
                     selector=nodes_pb2.Selector(children=[node, success]))
    elif which is not None:
        warnings.append(f"{part} failure behaviour {which!r} is not simulated: a failure "
                        f"ends the walk")
    return node


def compile_walk(walk: walks_pb2.Walk, warnings_are_errors: bool = False) -> CompiledWalk:
    """The walk as a mission tree; ``root`` is None when any element failed."""
    out = CompiledWalk(None)
    children = []
    for index, element in enumerate(walk.elements):
        if element.is_skipped:
            continue
        node, ids, failed = _compile_element(element, index, warnings_are_errors,
                                             walk.mission_name or "autowalk")
        if failed is not None:
            out.failed[index] = failed
        if node is not None:
            children.append(node)
            out.identifiers.append(ids)
    if not children and not out.failed:
        out.failed[0] = autowalk_pb2.FailedElement(errors=["the walk has no elements to play"])
    if any(f.errors for f in out.failed.values()):
        return out
    children.extend(_docking(walk))
    body = _node(walk.mission_name or "autowalk", sequence=nodes_pb2.Sequence(children=children))
    out.root = _playback(walk.playback_mode, body)
    return out


def _compile_element(element: walks_pb2.Element, index: int, warnings_are_errors: bool,
                     group: str = "autowalk") -> tuple:
    """(node, ElementIdentifiers, FailedElement) of one element: node None when it failed,
    FailedElement None when it compiled without a word."""
    name = element.name or f"element {index}"
    errors: list[str] = []
    warnings: list[str] = []
    ids = autowalk_pb2.ElementIdentifiers()
    nav_uid, action_uid, root_uid = (f"walk-{index}-navigation", f"walk-{index}-action",
                                     f"walk-{index}-root")
    target = _target(element, name, nav_uid)
    if target is None:
        errors.append("the element has no target")
    wrappers = [f.name for f in element.action_wrapper.DESCRIPTOR.fields
                if element.action_wrapper.HasField(f.name)]
    errors += [f"action wrapper {wrapper!r} is not simulated" for wrapper in wrappers
               if wrapper not in SIMULATED_WRAPPERS]
    action = _action(element, name, action_uid, errors, group)
    action_id = action.user_data.id if action is not None else ""
    if action is not None and not errors:
        action = _wrapped(action, element.action_wrapper, name)
    if errors or (warnings_are_errors and warnings):
        return None, ids, autowalk_pb2.FailedElement(errors=errors, warnings=warnings)
    parts = [_with_failure(target, element.target_failure_behavior, warnings, "target")]
    ids.navigation_id.user_data_id = nav_uid
    if action is not None:
        parts.append(_with_failure(action, element.action_failure_behavior, warnings, "action"))
        ids.action_id.user_data_id = action_id
    if warnings and warnings_are_errors:
        return None, ids, autowalk_pb2.FailedElement(errors=warnings)
    failed = autowalk_pb2.FailedElement(warnings=warnings) if warnings else None
    ids.root_id.user_data_id = root_uid
    return (_node(name, root_uid, sequence=nodes_pb2.Sequence(children=parts)), ids, failed)


def _docking(walk: walks_pb2.Walk) -> list[nodes_pb2.Node]:
    if not walk.docks or walk.docks[0].disable_end:
        return []
    dock = walk.docks[0]
    steps = []
    prep = _target(walks_pb2.Element(target=dock.target_prep_pose), "dock", "")
    if prep is not None:
        steps.append(prep)
    steps.append(_node(f"dock at {dock.dock_id}", dock=nodes_pb2.Dock(
        docking_station_id=dock.dock_id, prep_pose_behavior=docking_pb2.PREP_POSE_USE_POSE)))
    return [_node("return to dock", sequence=nodes_pb2.Sequence(children=steps))]


def _playback(mode: walks_pb2.PlaybackMode, body: nodes_pb2.Node) -> nodes_pb2.Node:
    which = mode.WhichOneof("mode")
    if which == "continuous":
        return _node("repeat walk", repeat=nodes_pb2.Repeat(max_starts=-1, child=body,
                                                            respect_child_failure=True))
    if which == "periodic":
        pause = _node("interval", sleep=nodes_pb2.Sleep(
            seconds=mode.periodic.interval.ToNanoseconds() / 1e9))
        once = _node("walk then wait", sequence=nodes_pb2.Sequence(children=[body, pause]))
        return _node("repeat walk", repeat=nodes_pb2.Repeat(
            max_starts=mode.periodic.repetitions or -1, child=once, respect_child_failure=True))
    return body
