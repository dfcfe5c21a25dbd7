"""Mission nodes that read and write the blackboard: define, set, condition, constant
results, formatted text, dates and mission text.

Each follows the start/tick/halt protocol of ``spot_sim.missions.nodes.Node``.
"""

import datetime
import operator
import re

from bosdyn.api.mission import nodes_pb2

from spot_sim.missions.blackboard import BlackboardError, evaluate, from_constant
from spot_sim.missions.nodes import FAILURE, SUCCESS, MissionNodeError, Node

COMPARE = {
    nodes_pb2.Condition.COMPARE_EQ: operator.eq, nodes_pb2.Condition.COMPARE_NE: operator.ne,
    nodes_pb2.Condition.COMPARE_LT: operator.lt, nodes_pb2.Condition.COMPARE_GT: operator.gt,
    nodes_pb2.Condition.COMPARE_LE: operator.le, nodes_pb2.Condition.COMPARE_GE: operator.ge,
}


class DefineBlackboard(Node):
    def __init__(self, node_id, name, parameters, child, variables):
        super().__init__(node_id, name, parameters)
        self.child, self.variables, self.scope = child, variables, {}

    def children(self):
        return [self.child]

    def start(self, ctx):
        self.scope = {}
        for kv in self.variables:
            self.scope[kv.key] = evaluate(kv.value, ctx.blackboard, self.parameters)

    def update(self, ctx):
        with ctx.blackboard.scope(self.scope):
            return self.child.tick(ctx)


# ----------------------------------------------------------------------- leaves
class ConstantResult(Node):
    def __init__(self, node_id, name, parameters, result):
        super().__init__(node_id, name, parameters)
        self.result = result

    def update(self, ctx):
        return self.result


class SetBlackboard(Node):
    def __init__(self, node_id, name, parameters, variables):
        super().__init__(node_id, name, parameters)
        self.variables = variables

    def update(self, ctx):
        values = [(kv.key, evaluate(kv.value, ctx.blackboard, self.parameters))
                  for kv in self.variables]  # evaluate all first: nothing changes on an error
        for key, value in values:
            ctx.blackboard.write(key, value)
        return SUCCESS


class Condition(Node):
    def __init__(self, node_id, name, parameters, spec: nodes_pb2.Condition):
        super().__init__(node_id, name, parameters)
        self.spec = spec

    def _operand(self, operand, ctx):
        if operand.WhichOneof("type") == "var":
            return ctx.blackboard.read(operand.var.name)
        return from_constant(operand.const)

    def update(self, ctx):
        lhs, rhs = self._operand(self.spec.lhs, ctx), self._operand(self.spec.rhs, ctx)
        try:
            return SUCCESS if COMPARE[self.spec.operation](lhs, rhs) else FAILURE
        except TypeError as exc:
            raise MissionNodeError(f"cannot compare {lhs!r} with {rhs!r}") from exc


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
