"""A protobuf message a ROS goal or request carries in one of two forms: serialized bytes,
or protobuf text format (for writing by hand). Pure."""

from google.protobuf import text_format
from google.protobuf.message import DecodeError, Message

from spot_driver.errors import CommandError


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
        raise CommandError(f"not a {name}: {exc}") from exc
    return message
