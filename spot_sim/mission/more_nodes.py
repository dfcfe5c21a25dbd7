"""Mission nodes beyond the core set: Switch, ParallelAnd, RestartWhenPaused, robot state
and behavior faults, blackboard formatting and dates, and mission text.

They follow the start/tick/halt protocol of ``spot_sim.mission.nodes.Node``.
"""

import datetime
import re

from bosdyn.api import robot_state_pb2

from spot_sim.mission.blackboard import BlackboardError, evaluate
from spot_sim.mission.nodes import ERROR, FAILURE, RUNNING, SUCCESS, MissionNodeError, Node

_FIELD = re.compile(r"\{([^{}:]+)(:[^{}]*)?\}")


def format_from_blackboard(text: str, blackboard) -> str:
    """``{name}`` / ``{name.field:.2f}`` replaced by blackboard values (FormatBlackboard)."""

    def replace(match: re.Match) -> str:
        value = blackboard.read(match.group(1).strip())
        spec = (match.group(2) or ":")[1:]
        try:
            return format(value, spec)
        except (TypeError, ValueError) as exc:
            raise MissionNodeError(f"cannot format {match.group(0)}: {exc}") from exc

    return _FIELD.sub(replace, text)


# ----------------------------------------------------------------------- composites
class Switch(Node):
    """Runs the child chosen by an integer pivot; a child switched away from restarts."""

    def __init__(self, node_id, name, parameters, cases: dict, default, spec):
        super().__init__(node_id, name, parameters)
        self.cases, self.default, self.spec = cases, default, spec
        self.active = None

    def children(self):
        return [c for c in (*self.cases.values(), self.default) if c is not None]

    def _choose(self, ctx):
        pivot = evaluate(self.spec.pivot_value, ctx.blackboard, self.parameters)
        if isinstance(pivot, bool) or not isinstance(pivot, int):
            raise MissionNodeError(f"switch pivot {pivot!r} is not an integer")
        return self.cases.get(pivot, self.default)

    def start(self, ctx):
        self.active = self._choose(ctx)

    def update(self, ctx):
        if self.spec.always_restart:
            chosen = self._choose(ctx)
            if chosen is not self.active and self.active is not None:
                self.active.halt(ctx)
            self.active = chosen
        if self.active is None:
            raise MissionNodeError("switch: no child for the pivot and no default child")
        return self.active.tick(ctx)


class ParallelAnd(Node):
    """Ticks every child each tick until all have finished (or one fails, unless
    ``finish_every_node``); an error ends it at once."""

    def __init__(self, node_id, name, parameters, kids, finish_every_node: bool):
        super().__init__(node_id, name, parameters)
        self.kids, self.finish_every_node = kids, finish_every_node
        self.results: dict[int, int] = {}

    def children(self):
        return self.kids

    def start(self, ctx):
        self.results = {}

    def update(self, ctx):
        for index, child in enumerate(self.kids):
            if index in self.results:
                continue
            result = child.tick(ctx)
            if result == RUNNING:
                continue
            self.results[index] = result
            if result == ERROR or (result == FAILURE and not self.finish_every_node):
                self._halt_others(ctx)
                return result
        if len(self.results) < len(self.kids):
            return RUNNING
        return FAILURE if FAILURE in self.results.values() else SUCCESS

    def _halt_others(self, ctx):
        for child in self.kids:
            child.halt(ctx)


class RestartWhenPaused(Node):
    """Its child, started afresh when the mission resumes after a pause."""

    def __init__(self, node_id, name, parameters, child):
        super().__init__(node_id, name, parameters)
        self.child = child

    def children(self):
        return [self.child]

    def halt(self, ctx):
        super().halt(ctx)
        self.child.forget()

    def update(self, ctx):
        return self.child.tick(ctx)


# ----------------------------------------------------------------------- leaves
class BosdynRobotState(Node):
    """Puts the robot's state in the blackboard (``state_name``) for its child."""

    def __init__(self, node_id, name, parameters, child, state_name: str):
        super().__init__(node_id, name, parameters)
        self.child, self.state_name, self.scope = child, state_name or "state", {}

    def children(self):
        return [self.child] if self.child is not None else []

    def update(self, ctx):
        self.scope[self.state_name] = ctx.robot.robot_state()
        if self.child is None:
            return SUCCESS
        with ctx.blackboard.scope(self.scope):
            return self.child.tick(ctx)


class ClearBehaviorFaults(Node):
    """Success when there is no behavior fault or all were cleared; failure when one is not
    clearable. Counts of cleared faults by cause go to the named blackboard variables."""

    _CAUSES = {robot_state_pb2.BehaviorFault.CAUSE_FALL: "cleared_cause_fall_blackboard_name",
               robot_state_pb2.BehaviorFault.CAUSE_HARDWARE:
                   "cleared_cause_hardware_blackboard_name",
               robot_state_pb2.BehaviorFault.CAUSE_LEASE_TIMEOUT:
                   "cleared_cause_lease_timeout_blackboard_name"}

    def __init__(self, node_id, name, parameters, spec):
        super().__init__(node_id, name, parameters)
        self.spec = spec

    def update(self, ctx):
        if self.spec.robot_state_blackboard_name:
            state = ctx.blackboard.read(self.spec.robot_state_blackboard_name)
        else:
            state = ctx.robot.robot_state()
        faults = list(state.behavior_fault_state.faults)
        counts = dict.fromkeys(self._CAUSES, 0)
        result = SUCCESS
        for fault in faults:
            if fault.status != robot_state_pb2.BehaviorFault.STATUS_CLEARABLE or \
                    not ctx.robot.clear_behavior_fault(fault.behavior_fault_id, ctx.lease("body")):
                result = FAILURE
                continue
            if fault.cause in counts:
                counts[fault.cause] += 1
        for cause, field_name in self._CAUSES.items():
            if getattr(self.spec, field_name):
                ctx.blackboard.write(getattr(self.spec, field_name), counts[cause])
        return result


class FormatBlackboard(Node):
    def __init__(self, node_id, name, parameters, key: str, text: str):
        super().__init__(node_id, name, parameters)
        self.key, self.text = key, text

    def update(self, ctx):
        try:
            ctx.blackboard.write(self.key, format_from_blackboard(self.text, ctx.blackboard))
        except BlackboardError as exc:
            raise MissionNodeError(str(exc)) from exc
        return SUCCESS


class DateToBlackboard(Node):
    """The robot's current date and time (ISO 8601, UTC), or a Timestamp."""

    def __init__(self, node_id, name, parameters, key: str, as_timestamp: bool):
        super().__init__(node_id, name, parameters)
        self.key, self.as_timestamp = key, as_timestamp

    def update(self, ctx):
        now_ns = ctx.clock.now_nsec()
        if self.as_timestamp:
            value = ctx.timestamp(now_ns)
        else:
            value = datetime.datetime.fromtimestamp(now_ns / 1e9, datetime.UTC).isoformat()
        ctx.blackboard.write(self.key, value)
        return SUCCESS


class CreateMissionText(Node):
    """Shows a text (blackboard-formatted) in the mission state while its child runs."""

    def __init__(self, node_id, name, parameters, child, spec):
        super().__init__(node_id, name, parameters)
        self.child, self.spec = child, spec

    def children(self):
        return [self.child] if self.child is not None else []

    def update(self, ctx):
        ctx.show_text(self, format_from_blackboard(self.spec.mission_text, ctx.blackboard),
                      self.spec.severity)
        if self.child is None:
            return SUCCESS
        return self.child.tick(ctx)

    def finish(self, ctx):
        ctx.hide_text(self)
