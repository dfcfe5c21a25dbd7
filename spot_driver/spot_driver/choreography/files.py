"""Choreography files as users export them from Choreographer: sequences (``.csq``, the
text format of ``bosdyn.api.spot.ChoreographySequence``, or its binary form) and keyframed
animations (``.cha``, converted by the SDK's own reader, or a binary ``Animation``)."""


from bosdyn.api.spot import choreography_sequence_pb2
from bosdyn.choreography.client.animation_file_to_proto import convert_animation_file_to_proto
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from spot_driver.core.errors import CommandError
from spot_driver.core.request_files import request_file

MAX_FILE_BYTES = 64 * 1024 * 1024


def read_sequence(path: str, name: str = "") -> choreography_sequence_pb2.ChoreographySequence:
    """A sequence from a text-format or binary file; ``name`` replaces the file's name."""
    file = request_file(path, "choreography", "path", MAX_FILE_BYTES)
    data = file.read_bytes()
    sequence = choreography_sequence_pb2.ChoreographySequence()
    try:
        text_format.Parse(data.decode("utf-8"), sequence)
    except (UnicodeDecodeError, text_format.ParseError) as text_error:
        sequence.Clear()
        try:
            sequence.ParseFromString(data)
        except DecodeError:
            raise CommandError(f"{str(file)!r} is neither a text-format nor a binary "
                               f"ChoreographySequence ({text_error})") from None
    if name:
        sequence.name = name
    if not sequence.name:
        sequence.name = file.stem
    if not sequence.moves:
        raise CommandError(f"choreography {str(file)!r} has no moves")
    return sequence


def read_animation(path: str) -> choreography_sequence_pb2.Animation:
    """An animation from a Choreographer ``.cha`` file or a binary Animation."""
    file = request_file(path, "animation", "path", MAX_FILE_BYTES)
    if file.suffix == ".cha":
        try:
            return convert_animation_file_to_proto(str(file)).proto
        except Exception as exc:  # the SDK's reader raises several kinds for a bad file
            raise CommandError(f"cannot read animation {str(file)!r}: {exc}") from None
    try:
        animation = choreography_sequence_pb2.Animation.FromString(file.read_bytes())
    except DecodeError:
        raise CommandError(f"{str(file)!r} is neither a .cha file nor a binary Animation"
                           ) from None
    if not animation.name:
        animation.name = file.stem
    return animation
