"""Compile an Autowalk (``walks.proto``) into a mission behaviour tree for the mission service.

The tree is a Sequence of the walk's elements (skipped ones left out). Each element is a
Sequence of its target (BosdynNavigateTo, BosdynNavigateRoute or BosdynGraphNavLocalize) and
its action (Sleep, or the action's own mission node). A failure behaviour's ``retry_count``
wraps the part in a Retry, ``proceed_if_able`` in a Selector that succeeds anyway; the other
behaviours (safe power off, return to start) are not simulated: they are warnings and the
failure ends the walk. Playback ``continuous`` repeats the walk forever, ``periodic`` repeats it
``repetitions`` times with ``interval`` between starts. The first entry of ``docks`` adds
navigating to its prep waypoint and docking at the end.

Not supported here, named per element in the answer: data acquisition, remote gRPC and
choreography actions, and action wrappers (arm pointing, Spot CAM, body pose).
"""

from dataclasses import dataclass, field

from bosdyn.api.autowalk import autowalk_pb2, walks_pb2
from bosdyn.api.docking import docking_pb2
from bosdyn.api.mission import nodes_pb2, util_pb2

GRAPH_NAV_SERVICE = "graph-nav-service"
_UNSUPPORTED_ACTIONS = {
    "data_acquisition": "data acquisition actions are not simulated",
    "remote_grpc": "remote mission services are not simulated",
    "execute_choreography": "choreography actions in walks are not simulated",
}


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


def _action(element: walks_pb2.Element, name: str, uid: str, errors: list[str]
            ) -> nodes_pb2.Node | None:
    which = element.action.WhichOneof("action")
    if which is None:
        return None
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
        name = element.name or f"element {index}"
        errors: list[str] = []
        warnings: list[str] = []
        ids = autowalk_pb2.ElementIdentifiers()
        nav_uid, action_uid, root_uid = (f"walk-{index}-navigation", f"walk-{index}-action",
                                         f"walk-{index}-root")
        target = _target(element, name, nav_uid)
        if target is None:
            errors.append("the element has no target")
        if any(element.action_wrapper.HasField(f.name)
               for f in element.action_wrapper.DESCRIPTOR.fields):
            errors.append("action wrappers (body pose, arm pointing, Spot CAM) are not "
                          "supported")
        action = _action(element, name, action_uid, errors)
        if errors or (warnings_are_errors and warnings):
            out.failed[index] = autowalk_pb2.FailedElement(errors=errors, warnings=warnings)
            continue
        parts = [_with_failure(target, element.target_failure_behavior, warnings, "target")]
        ids.navigation_id.user_data_id = nav_uid
        if action is not None:
            parts.append(_with_failure(action, element.action_failure_behavior, warnings,
                                       "action"))
            ids.action_id.user_data_id = action.user_data.id
        if warnings:
            if warnings_are_errors:
                out.failed[index] = autowalk_pb2.FailedElement(errors=warnings)
                continue
            out.failed[index] = autowalk_pb2.FailedElement(warnings=warnings)
        children.append(_node(name, root_uid, sequence=nodes_pb2.Sequence(children=parts)))
        ids.root_id.user_data_id = root_uid
        out.identifiers.append(ids)
    if not children and not out.failed:
        out.failed[0] = autowalk_pb2.FailedElement(errors=["the walk has no elements to play"])
    if any(f.errors for f in out.failed.values()):
        return out
    children.extend(_docking(walk))
    body = _node(walk.mission_name or "autowalk", sequence=nodes_pb2.Sequence(children=children))
    out.root = _playback(walk.playback_mode, body)
    return out


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
