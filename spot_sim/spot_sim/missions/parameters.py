"""A mission node's parameters and overrides, at compile time.

``parameter_values`` pass down the tree (a constant, or a parameter the parent defines);
declared ``parameters`` must have a value. ``overrides`` write a parameter or constant value
into a scalar field of the node's implementation, by dotted path.
"""

from bosdyn.api.mission import nodes_pb2
from google.protobuf import descriptor

from spot_sim.missions.blackboard import from_constant


class CompileError(ValueError):
    """A node that cannot be compiled; the message says why."""


def node_parameters(proto: nodes_pb2.Node, inherited: dict) -> dict:
    """The parameters a node runs with: those it inherits, with its own
    ``parameter_values`` (constants or inherited parameters); every declared one set."""
    params = dict(inherited)
    for kv in proto.parameter_values:
        source = kv.value.WhichOneof("source")
        if source == "constant":
            params[kv.key] = from_constant(kv.value.constant)
        elif source == "parameter":
            if kv.value.parameter.name not in inherited:
                raise CompileError(f"parameter {kv.key!r} refers to undefined parameter "
                                   f"{kv.value.parameter.name!r}")
            params[kv.key] = inherited[kv.value.parameter.name]
        else:
            raise CompileError(f"parameter {kv.key!r} must be a constant or a parameter")
    for declared in proto.parameters:
        if declared.name not in params:
            raise CompileError(f"parameter {declared.name!r} is declared but has no value")
    return params


def overridden(proto: nodes_pb2.Node, spec, params: dict):
    """``spec`` (a node's implementation) with the node's ``overrides`` written into its
    fields; a copy when there are any, the proto stays as loaded."""
    if not proto.overrides:
        return spec
    spec = type(spec).FromString(spec.SerializeToString())  # the proto stays as loaded
    for kv in proto.overrides:
        source = kv.value.WhichOneof("source")
        if source == "constant":
            value = from_constant(kv.value.constant)
        elif source == "parameter" and kv.value.parameter.name in params:
            value = params[kv.value.parameter.name]
        else:
            raise CompileError(f"override {kv.key!r} needs a constant or a defined "
                               f"parameter")
        _set_field(spec, kv.key, value)
    return spec


def _set_field(message, path: str, value) -> None:
    """Write ``value`` (a Python scalar) into the scalar field at dotted ``path``."""
    *parents, last = path.split(".")
    for part in parents:
        fd = message.DESCRIPTOR.fields_by_name.get(part)
        if fd is None or fd.message_type is None or fd.is_repeated:
            raise CompileError(f"override {path!r}: no message field {part!r}")
        message = getattr(message, part)
    fd = message.DESCRIPTOR.fields_by_name.get(last)
    if fd is None or fd.is_repeated:
        raise CompileError(f"override {path!r}: {message.DESCRIPTOR.name} has no field {last!r}")
    if fd.message_type is not None:  # wrappers (DoubleValue, ...) and Duration
        if fd.message_type.full_name == "google.protobuf.Duration" and \
                isinstance(value, (int, float)) and not isinstance(value, bool):
            getattr(message, last).FromNanoseconds(int(value * 1e9))
            return
        inner = fd.message_type.fields_by_name.get("value")
        if inner is None:
            raise CompileError(f"override {path!r}: cannot write a value into a "
                               f"{fd.message_type.name}")
        message, fd, last = getattr(message, last), inner, "value"
    expected = {descriptor.FieldDescriptor.CPPTYPE_BOOL: (bool,),
                descriptor.FieldDescriptor.CPPTYPE_STRING: (str,),
                descriptor.FieldDescriptor.CPPTYPE_DOUBLE: (int, float),
                descriptor.FieldDescriptor.CPPTYPE_FLOAT: (int, float)}.get(fd.cpp_type, (int,))
    if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
        raise CompileError(f"override {path!r}: {value!r} does not fit the field")
    try:
        setattr(message, last, value)
    except (TypeError, ValueError) as exc:
        raise CompileError(f"override {path!r}: {exc}") from exc
