"""The mission blackboard: scoped variables and the evaluation of ``Value`` protos.

Variables hold Python values (bool, int, float, str, Timestamp) or protobuf messages; a
runtime variable named ``a.b.c`` reads field ``b.c`` of the message stored as ``a``, as the
robot's blackboard does (``robot.power_state.motor_power_state``), and ``a.values["k"].c``
reads entry ``k`` of a map field (a custom-params answer: ``answer.values["q"].bool_value``).
"""

import re
from collections.abc import Iterator
from contextlib import contextmanager

from bosdyn.api.mission import util_pb2
from google.protobuf.message import Message

_PATH_PART = re.compile(r'(\w+)(?:\["([^"]*)"\])?')


class BlackboardError(Exception):
    """A variable that does not exist or a value that cannot be evaluated."""


class Blackboard:
    """A stack of scopes; lookups search from the innermost scope outwards."""

    def __init__(self) -> None:
        self._scopes: list[dict] = [{}]

    @contextmanager
    def scope(self, variables: dict) -> Iterator[None]:
        """Make ``variables`` (a dict the caller keeps) the innermost scope while inside."""
        self._scopes.append(variables)
        try:
            yield
        finally:
            self._scopes.pop()

    def _find(self, name: str) -> dict | None:
        for scope in reversed(self._scopes):
            if name in scope:
                return scope
        return None

    def read(self, name: str):
        head, _, path = name.partition(".")
        scope = self._find(head)
        if scope is None:
            raise BlackboardError(f"blackboard variable {head!r} is not defined")
        value = scope[head]
        for field, key in _PATH_PART.findall(path) if path else ():
            if not isinstance(value, Message) or field not in value.DESCRIPTOR.fields_by_name:
                raise BlackboardError(f"blackboard variable {name!r} has no field {field!r}")
            value = getattr(value, field)
            if key:
                if key not in value:
                    raise BlackboardError(f"blackboard variable {name!r} has no entry {key!r}")
                value = value[key]
        return value

    def write(self, name: str, value) -> None:
        """Set an existing variable where it is defined; a new one goes to the global scope."""
        scope = self._find(name)
        (scope if scope is not None else self._scopes[0])[name] = value

    def snapshot(self) -> list[util_pb2.KeyValue]:
        """Every visible scalar variable, for GetState's blackboard reports."""
        merged: dict = {}
        for scope in self._scopes:
            merged.update(scope)
        out = []
        for key, value in sorted(merged.items()):
            constant = to_constant(value)
            if constant is not None:
                out.append(util_pb2.KeyValue(key=key, value=util_pb2.Value(constant=constant)))
        return out


def from_constant(constant: util_pb2.ConstantValue):
    which = constant.WhichOneof("value")
    if which is None:
        raise BlackboardError("constant value is empty")
    value = getattr(constant, which)
    if which == "list_value":
        return [from_constant(v) for v in value.values]
    if which == "dict_value":
        return {key: from_constant(v) for key, v in value.values.items()}
    return value


def to_constant(value) -> util_pb2.ConstantValue | None:
    if isinstance(value, bool):
        return util_pb2.ConstantValue(bool_value=value)
    if isinstance(value, int):
        return util_pb2.ConstantValue(int_value=value)
    if isinstance(value, float):
        return util_pb2.ConstantValue(float_value=value)
    if isinstance(value, str):
        return util_pb2.ConstantValue(string_value=value)
    return None


def evaluate(value: util_pb2.Value, blackboard: Blackboard, parameters: dict):
    """The current value of a ``Value``: a constant, a runtime variable or a parameter."""
    which = value.WhichOneof("source")
    if which == "constant":
        return from_constant(value.constant)
    if which == "runtime_var":
        return blackboard.read(value.runtime_var.name)
    if which == "parameter":
        if value.parameter.name not in parameters:
            raise BlackboardError(f"parameter {value.parameter.name!r} is not defined")
        return parameters[value.parameter.name]
    raise BlackboardError("value has no source")
