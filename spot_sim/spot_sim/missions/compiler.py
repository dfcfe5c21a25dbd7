"""Compiles a mission's ``Node`` protos into runnable behavior-tree nodes, at load time.

A node's implementation may be a typed field of the ``Node.type`` oneof or packed in ``impl``
(a ``google.protobuf.Any``, as SDK programs and saved missions build them); both give the same
node. ``node_reference`` stands for the node whose ``reference_id`` it names. Parameters
(``parameter_values``) pass down the tree, ``overrides`` write parameter or constant values
into fields of a node's implementation, and declared ``parameters`` must have a value. Every
node that cannot run here is refused at load with its name and the reason, never at run time.
"""

import math
import re
from dataclasses import dataclass, field

from bosdyn.api import power_pb2
from bosdyn.api.mission import mission_pb2, nodes_pb2
from bosdyn.client.service_customization_helpers import (
    InvalidCustomParamSpecError,
    validate_dict_spec,
)

from spot_sim.missions import blackboard_nodes as board
from spot_sim.missions import capture_nodes as capture
from spot_sim.missions import flow_nodes as flow
from spot_sim.missions import graph_nav_nodes as graph_nav
from spot_sim.missions import nodes as core
from spot_sim.missions import parameters
from spot_sim.missions import remote_nodes as remote
from spot_sim.missions import robot_nodes as robot
from spot_sim.missions import spot_cam_nodes as cam
from spot_sim.missions.blackboard import BlackboardError
from spot_sim.missions.parameters import CompileError

_PACKAGE = "bosdyn.api.mission."
_TYPE_FIELDS = {f.message_type.full_name: f.name
                for f in nodes_pb2.Node.DESCRIPTOR.oneofs_by_name["type"].fields
                if f.message_type is not None and f.name != "impl"}
_MOBILITY_KINDS = {"stand_request": "stand", "sit_request": "sit", "stop_request": "stop",
                   "se2_velocity_request": "velocity", "se2_trajectory_request": "trajectory"}
_NO_GRAPH_NAV_STATE = "GraphNav state queries in missions are not simulated"
_NO_DAQ = "this data-acquisition node is not simulated (DataAcquisition is)"
# Node types this robot refuses at load, with the reason (listed in the README).
REFUSED = {
    "bosdyn_graph_nav_state": _NO_GRAPH_NAV_STATE,
    "data_acquisition_on_interruption": _NO_DAQ,
    "data_acquisition_live_data": _NO_DAQ, "store_metadata": _NO_DAQ,
    "bosdyn_query_stored_captures": _NO_DAQ,
    "bosdyn_record_event": "the data buffer (events) is not simulated",
    "bosdyn_record_event_on_interruption": "the data buffer (events) is not simulated",
    "execute_choreography": "choreography in missions is not simulated (use the choreography "
                            "service)",
    "mission_upload_choreography": "choreography in missions is not simulated (use the "
                                   "choreography service)",
    "spot_cam_named_position": "named PTZ positions are not simulated (use SpotCamPtz)",
    "bosdyn_gripper_camera_params_state": "the gripper camera parameters are not simulated",
    "set_gripper_camera_params": "the gripper camera parameters are not simulated",
    "set_grasp_override": "grasp overrides in missions are not simulated",
}


@dataclass
class Compiled:
    """A compiled tree: its root, the NodeInfo tree and the nodes that failed validation."""

    root: core.Node | None
    info: mission_pb2.NodeInfo
    failed: list[mission_pb2.FailedNode] = field(default_factory=list)
    nodes: dict[int, core.Node] = field(default_factory=dict)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def implementation(proto: nodes_pb2.Node):
    """(builder name, implementation message) of a node, either encoding; (None, None) when
    it has none. Raises CompileError for an ``impl`` that is not a mission node type."""
    which = proto.WhichOneof("type")
    if which is None or which == "node_reference":
        return None, None
    if which != "impl":
        return which, getattr(proto, which)
    full_name = proto.impl.type_url.rsplit("/", 1)[-1]
    short = full_name[len(_PACKAGE):] if full_name.startswith(_PACKAGE) else ""
    message_type = nodes_pb2.DESCRIPTOR.message_types_by_name.get(short)
    if message_type is None:
        raise CompileError(f"impl type {full_name or '(empty)'!r} is not a mission node type")
    spec = getattr(nodes_pb2, short)()
    if not proto.impl.Unpack(spec):
        raise CompileError(f"impl of type {full_name!r} cannot be unpacked")
    return _TYPE_FIELDS.get(full_name, _snake(short)), spec


def child_nodes(message) -> list[nodes_pb2.Node]:
    """Every ``Node`` directly inside an implementation message (any field, list or map)."""
    out = []
    for fd in message.DESCRIPTOR.fields:
        if fd.message_type is None:
            continue
        value = getattr(message, fd.name)
        if fd.message_type is nodes_pb2.Node.DESCRIPTOR:
            out.extend(value if fd.is_repeated else [value] if message.HasField(fd.name) else [])
        elif fd.message_type.GetOptions().map_entry and \
                fd.message_type.fields_by_name["value"].message_type is nodes_pb2.Node.DESCRIPTOR:
            out.extend(value.values())
    return out


def _references(root: nodes_pb2.Node) -> dict[str, nodes_pb2.Node]:
    """reference_id -> node, over the whole tree (unreadable impls are skipped here and
    reported when compiled)."""
    found, stack = {}, [root]
    while stack:
        node = stack.pop()
        if node.reference_id:
            found.setdefault(node.reference_id, node)
        try:
            _, spec = implementation(node)
        except CompileError:
            continue
        if spec is not None:
            stack.extend(child_nodes(spec))
    return found


class _Compiler:
    def __init__(self, root: nodes_pb2.Node) -> None:
        self.next_id = 1
        self.failed: list[mission_pb2.FailedNode] = []
        self.nodes: dict[int, core.Node] = {}
        self.references = _references(root)
        self._resolving: list[str] = []

    def fail(self, proto: nodes_pb2.Node, type_name: str, error: str) -> None:
        self.failed.append(mission_pb2.FailedNode(
            name=proto.name, error=f"{proto.name or '(unnamed)'}: {error}",
            impl_typename=f"{_PACKAGE}{type_name}"))

    def compile(self, proto: nodes_pb2.Node, info: mission_pb2.NodeInfo,
                inherited: dict) -> core.Node | None:
        if proto.WhichOneof("type") == "node_reference":
            return self._reference(proto, info, inherited)
        node_id = self.next_id
        self.next_id += 1
        info.id, info.name = node_id, proto.name
        info.user_data.CopyFrom(proto.user_data)
        type_name = "Node"
        try:
            which, spec = implementation(proto)
            if which is None:
                raise CompileError("node has no implementation")
            type_name = spec.DESCRIPTOR.name
            if which in REFUSED:
                raise CompileError(f"node type {type_name!r} is not supported by this robot: "
                                   f"{REFUSED[which]}")
            builder = getattr(self, f"_{which}", None)
            if builder is None:
                raise CompileError(f"node type {type_name!r} is not supported by this robot")
            params = parameters.node_parameters(proto, inherited)
            spec = parameters.overridden(proto, spec, params)
            node = builder(node_id, proto.name, params, spec, info)
        except (CompileError, BlackboardError, ValueError) as exc:
            self.fail(proto, type_name, str(exc))
            return None
        if node is not None:
            self.nodes[node_id] = node
        return node

    def _reference(self, proto, info, inherited):
        target = proto.node_reference
        if target not in self.references:
            self.next_id += 1
            self.fail(proto, "Node", f"node_reference {target!r} names no node's reference_id")
            return None
        if target in self._resolving:
            self.next_id += 1
            self.fail(proto, "Node", f"node_reference {target!r} refers to itself")
            return None
        self._resolving.append(target)
        try:
            return self.compile(self.references[target], info, inherited)
        finally:
            self._resolving.pop()

    def _child(self, spec_child, info, params, required=True):
        if not spec_child.ByteSize():
            if required:
                raise CompileError("child node is missing")
            return None
        return self.compile(spec_child, info.children.add(), params)

    def _kids(self, children, info, params):
        return [self.compile(child, info.children.add(), params) for child in children]

    # ------------------------------------------------------------------ composites
    def _sequence(self, node_id, name, params, spec, info):
        return flow.Sequence(node_id, name, params, self._kids(spec.children, info, params),
                             spec.always_restart)

    def _selector(self, node_id, name, params, spec, info):
        return flow.Selector(node_id, name, params, self._kids(spec.children, info, params),
                             spec.always_restart)

    def _switch(self, node_id, name, params, spec, info):
        if spec.pivot_value.WhichOneof("source") is None:
            raise CompileError("switch pivot_value is not set")
        cases = {key: self.compile(spec.int_children[key], info.children.add(), params)
                 for key in sorted(spec.int_children)}
        default = self._child(spec.default_child, info, params, required=False)
        return flow.Switch(node_id, name, params, cases, default, spec)

    def _parallel_and(self, node_id, name, params, spec, info):
        return flow.ParallelAnd(node_id, name, params, self._kids(spec.children, info, params),
                                spec.finish_every_node)

    def _repeat(self, node_id, name, params, spec, info):
        return flow.Repeat(node_id, name, params, self._child(spec.child, info, params), spec)

    def _retry(self, node_id, name, params, spec, info):
        if spec.max_attempts <= 0:
            raise CompileError("max_attempts must be positive")
        return flow.Retry(node_id, name, params, self._child(spec.child, info, params), spec)

    def _for_duration(self, node_id, name, params, spec, info):
        child = self._child(spec.child, info, params)
        timeout_child = self._child(spec.timeout_child, info, params, required=False)
        return flow.ForDuration(node_id, name, params, child, timeout_child, spec)

    def _simple_parallel(self, node_id, name, params, spec, info):
        primary = self._child(spec.primary, info, params)
        secondary = self._child(spec.secondary, info, params)
        return flow.SimpleParallel(node_id, name, params, primary, secondary, spec)

    def _restart_when_paused(self, node_id, name, params, spec, info):
        return flow.RestartWhenPaused(node_id, name, params,
                                      self._child(spec.child, info, params))

    # ------------------------------------------------------------------ blackboard
    def _condition(self, node_id, name, params, spec, info):
        if spec.operation not in board.COMPARE:
            raise CompileError("comparison operator is not set")
        for side in (spec.lhs, spec.rhs):
            if side.WhichOneof("type") is None:
                raise CompileError("operand is empty")
        return board.Condition(node_id, name, params, spec)

    def _define_blackboard(self, node_id, name, params, spec, info):
        child = self._child(spec.child, info, params)
        return board.DefineBlackboard(node_id, name, params, child,
                                     list(spec.blackboard_variables))

    def _set_blackboard(self, node_id, name, params, spec, info):
        return board.SetBlackboard(node_id, name, params, list(spec.blackboard_variables))

    def _format_blackboard(self, node_id, name, params, spec, info):
        if not spec.key:
            raise CompileError("key is not set")
        return board.FormatBlackboard(node_id, name, params, spec.key, spec.format)

    def _date_to_blackboard(self, node_id, name, params, spec, info):
        if not spec.key:
            raise CompileError("key is not set")
        return board.DateToBlackboard(node_id, name, params, spec.key, spec.write_as_timestamp)

    def _constant_result(self, node_id, name, params, spec, info):
        if spec.result not in (core.SUCCESS, core.FAILURE, core.RUNNING, core.ERROR):
            raise CompileError("result is not set")
        return board.ConstantResult(node_id, name, params, spec.result)

    def _sleep(self, node_id, name, params, spec, info):
        if spec.WhichOneof("duration") != "duration_name_in_blackboard" and (
                not math.isfinite(spec.seconds) or spec.seconds < 0):
            raise CompileError("sleep duration must be a finite, non-negative number")
        return flow.Sleep(node_id, name, params, spec)

    def _prompt(self, node_id, name, params, spec, info):
        which = spec.WhichOneof("answer_spec")
        if which not in (None, "options_list", "custom_params"):
            raise CompileError(f"prompt answer spec {which!r} is not supported")
        if which == "custom_params":
            try:
                validate_dict_spec(spec.custom_params)
            except InvalidCustomParamSpecError as exc:
                raise CompileError(f"prompt custom_params spec is invalid: {exc}") from None
        elif not (spec.options_list.options if which == "options_list" else spec.options):
            raise CompileError("prompt has no options")
        child = self._child(spec.child, info, params, required=False)
        return flow.Prompt(node_id, name, params, child, spec)

    def _create_mission_text(self, node_id, name, params, spec, info):
        child = self._child(spec.child, info, params, required=False)
        return board.CreateMissionText(node_id, name, params, child, spec)

    # ------------------------------------------------------------------ robot
    def _retain_lease(self, node_id, name, params, spec, info):
        return robot.RetainLease(node_id, name, params)

    def _bosdyn_robot_state(self, node_id, name, params, spec, info):
        child = self._child(spec.child, info, params, required=False)
        return robot.BosdynRobotState(node_id, name, params, child, spec.state_name)

    def _clear_behavior_faults(self, node_id, name, params, spec, info):
        return robot.ClearBehaviorFaults(node_id, name, params, spec)

    def _bosdyn_power_request(self, node_id, name, params, spec, info):
        request = power_pb2.PowerCommandRequest
        if spec.request not in (request.REQUEST_ON, request.REQUEST_OFF,
                                request.REQUEST_ON_MOTORS, request.REQUEST_OFF_MOTORS):
            raise CompileError("power request must switch motor power on or off")
        return robot.BosdynPowerRequest(node_id, name, params, power_pb2.PowerCommandRequest(
            request=spec.request))

    def _bosdyn_robot_command(self, node_id, name, params, spec, info):
        command = spec.command
        which = command.WhichOneof("command")
        if which != "synchronized_command":
            raise CompileError(f"robot command {which!r} is not supported in missions")
        sync = command.synchronized_command
        if sync.HasField("arm_command") or sync.HasField("gripper_command"):
            raise CompileError("arm and gripper commands are not supported in missions")
        kind = _MOBILITY_KINDS.get(sync.mobility_command.WhichOneof("command"))
        if kind is None:
            raise CompileError("mobility command must be stand, sit, stop, velocity or "
                               "SE2 trajectory")
        return robot.BosdynRobotCommand(node_id, name, params, command, kind)

    def _data_acquisition(self, node_id, name, params, spec, info):
        if spec.service_name not in ("", "data-acquisition"):
            raise CompileError(f"no data-acquisition service named {spec.service_name!r}")
        requests = spec.request.acquisition_requests
        if not (requests.data_captures or requests.image_captures):
            raise CompileError("the request names nothing to capture")
        if spec.metadata_name_in_blackboard or spec.request_name_in_blackboard:
            raise CompileError("blackboard metadata and request names are not simulated")
        return capture.DataAcquisition(node_id, name, params, spec)

    _spot_cam_ptz = staticmethod(cam.ptz)
    _spot_cam_store_media = staticmethod(cam.store_media)
    _spot_cam_led = staticmethod(cam.led)
    _spot_cam_focus_state = staticmethod(cam.focus_state)
    _spot_cam_reset_autofocus = staticmethod(cam.reset_autofocus)

    def _remote_grpc(self, node_id, name, params, spec, info):
        return remote.RemoteGrpc(node_id, name, params, spec)

    def _dock(self, node_id, name, params, spec, info):
        if spec.WhichOneof("id") is None:
            raise CompileError("dock id is not set")
        return robot.Dock(node_id, name, params, spec)

    def _bosdyn_navigate_to(self, node_id, name, params, spec, info):
        if not spec.destination_waypoint_id:
            raise CompileError("destination_waypoint_id is not set")
        return graph_nav.BosdynNavigate(node_id, name, params, spec, "navigate_to")

    def _bosdyn_navigate_route(self, node_id, name, params, spec, info):
        if not spec.route.waypoint_id:
            raise CompileError("the route has no waypoints")
        return graph_nav.BosdynNavigate(node_id, name, params, spec, "navigate_route")

    def _bosdyn_navigate_to_anchor(self, node_id, name, params, spec, info):
        if not spec.HasField("seed_tform_goal"):
            raise CompileError("seed_tform_goal is not set")
        return graph_nav.BosdynNavigate(node_id, name, params, spec, "navigate_to_anchor")

    def _bosdyn_graph_nav_localize(self, node_id, name, params, spec, info):
        return graph_nav.BosdynGraphNavLocalize(node_id, name, params, spec)

    def _bosdyn_dock_state(self, node_id, name, params, spec, info):
        child = self._child(spec.child, info, params, required=False)
        return robot.BosdynDockState(node_id, name, params, child, spec.state_name)


def compile_tree(root: nodes_pb2.Node) -> Compiled:
    """Build the executable tree; every unsupported or invalid node is listed in ``failed``."""
    compiler = _Compiler(root)
    info = mission_pb2.NodeInfo()
    node = compiler.compile(root, info, {})
    failed = compiler.failed
    return Compiled(node if not failed else None, info, failed, compiler.nodes)
