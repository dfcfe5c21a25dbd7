"""A protobuf message a ROS goal or request carries in one of two forms, serialized bytes or
protobuf text format (for writing by hand), and the checks any such message gets before it
is sent: finite numbers, known frames. Pure."""

import math
from collections.abc import Iterator

from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError, Message

from spot_driver.core.errors import CommandError

_FLOATS = (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT)


def parse_one_form(message: Message, serialized: bytes, text: str,
                   fields: tuple[str, str]) -> Message:
    """``message`` filled from exactly one of ``serialized`` or ``text`` (named ``fields``
    in the ROS interface); CommandError with the parser's reason otherwise."""
    name = message.DESCRIPTOR.full_name
    if bool(serialized) == bool(text.strip()):
        raise CommandError(f"give the {name.rsplit('.', 1)[-1]} in exactly one of "
                           f"'{fields[0]}' (serialized {name}) or '{fields[1]}' (protobuf "
                           f"text format)")
    try:
        if serialized:
            message.ParseFromString(bytes(serialized))
        else:
            text_format.Parse(text, message)
    except (DecodeError, text_format.ParseError) as exc:
        field = fields[0] if serialized else fields[1]
        raise CommandError(f"{field} is not a {name}: {exc}") from exc
    return message


def check_values(message: Message, frames: set[str]) -> None:
    """CommandError for a non-finite number anywhere in ``message`` or a string field
    naming a frame (``*frame*``) that is not in ``frames``."""
    for path, value in _leaves(message, ""):
        if isinstance(value, float) and not math.isfinite(value):
            raise CommandError(f"{path} is {value}: every value must be finite")
        if isinstance(value, str) and value and value not in frames:
            raise CommandError(f"{path}: unknown frame {value!r}; the robot knows "
                               f"{', '.join(sorted(frames))}")


def _leaves(message: Message, path: str) -> Iterator[tuple[str, object]]:
    """(path, value) of every float field, and of every string field naming a frame."""
    for field, value in message.ListFields():
        where = f"{path}.{field.name}" if path else field.name
        if _is_map(field):
            kind = field.message_type.fields_by_name["value"]
            items = [(f"{where}[{key!r}]", item) for key, item in value.items()]
        else:
            kind = field
            items = [(where, item) for item in (value if _repeated(field) else [value])]
        for at, item in items:
            if kind.type == FieldDescriptor.TYPE_MESSAGE:
                yield from _leaves(item, at)
            elif kind.type in _FLOATS:
                yield at, float(item)
            elif kind.type == FieldDescriptor.TYPE_STRING and "frame" in field.name:
                yield at, item


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and \
        field.message_type.GetOptions().map_entry


def _repeated(field: FieldDescriptor) -> bool:
    flag = getattr(field, "is_repeated", None)  # protobuf >= 5; older ones have only label
    return bool(flag) if flag is not None else field.label == FieldDescriptor.LABEL_REPEATED
