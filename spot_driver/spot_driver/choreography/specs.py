"""The robot's move specifications (ListAllMoves: each move's length and tracks, and the
``move_param_config`` lines ``<move> <parameter> default=<v> min=<v> max=<v>``) and the check
of a sequence against them, before anything is uploaded (pure functions)."""

import math
import re
from dataclasses import dataclass, field

from bosdyn.api.spot import choreography_sequence_pb2

MoveInfo = choreography_sequence_pb2.MoveInfo
_LINE = re.compile(r"^(\S+)\s+(\S+)\s+default=(\S+)\s+min=(\S+)\s+max=(\S+)\s*$")
TRACKS = ("body", "legs", "arm", "gripper", "lights", "audio_visual_lights",
          "audio_visual_buzzer")


@dataclass(frozen=True)
class Bounds:
    default: float
    minimum: float
    maximum: float


@dataclass
class Move:
    info: MoveInfo
    parameters: dict[str, Bounds] = field(default_factory=dict)

    @property
    def controls(self) -> list[str]:
        return [t for t in TRACKS if getattr(self.info, f"controls_{t}", False)]


def parse_moves(response: choreography_sequence_pb2.ListAllMovesResponse) -> dict[str, Move]:
    """name -> Move, with each move's bounded parameters from ``move_param_config``."""
    moves = {info.name: Move(info) for info in response.moves}
    for line in response.move_param_config.splitlines():
        match = _LINE.match(line.strip())
        if match is None or match.group(1) not in moves:
            continue
        try:
            bounds = Bounds(*(float(match.group(i)) for i in (3, 4, 5)))
        except ValueError:
            continue
        moves[match.group(1)].parameters[match.group(2)] = bounds
    return moves


def _value(params, path: str) -> float | None:
    """A parameter's set value (wrapper types unwrapped), None when not set."""
    *parents, last = path.split(".")
    message = params
    for part in parents:
        if part not in message.DESCRIPTOR.fields_by_name or not message.HasField(part):
            return None
        message = getattr(message, part)
    fd = message.DESCRIPTOR.fields_by_name.get(last)
    if fd is None:
        return None
    if fd.message_type is not None:
        if not message.HasField(last) or "value" not in fd.message_type.fields_by_name:
            return None
        return float(getattr(message, last).value)
    return float(getattr(message, last))


def check_sequence(sequence: choreography_sequence_pb2.ChoreographySequence,
                   moves: dict[str, Move]) -> list[str]:
    """Every problem that would make the robot refuse or change the sequence, as sentences
    naming the move, the parameter, the value and the allowed range. Empty: fine."""
    problems = []
    spm = sequence.slices_per_minute
    if not (math.isfinite(spm) and spm > 0):
        problems.append(f"slices_per_minute must be a positive number, not {spm}")
    for index, move in enumerate(sequence.moves):
        where = f"move {index} ({move.type or 'no type'}, slice {move.start_slice})"
        spec = moves.get(move.type)
        if spec is None:
            problems.append(f"{where}: the robot has no move {move.type!r}")
            continue
        problems += [f"{where}: {problem}" for problem in _move_problems(move, spec, spm)]
    return problems


def _move_problems(move, spec: Move, spm: float) -> list[str]:
    """What the robot would refuse or change in one move of a known type: its start, its
    length at ``spm`` slices per minute, parameters outside their ranges."""
    info = spec.info
    problems = []
    if move.start_slice < 0:
        problems.append("start_slice must not be negative")
    if move.requested_slices:
        low = info.min_move_length_slices if info.is_extendable else info.move_length_slices
        high = info.max_move_length_slices if info.is_extendable else info.move_length_slices
        if not low <= move.requested_slices <= high:
            problems.append(f"requested_slices {move.requested_slices} is outside "
                            f"the allowed range [{low}, {high}]")
    length = move.requested_slices or info.move_length_slices
    if info.min_time > 0 and math.isfinite(spm) and spm > 0 \
            and length * 60.0 / spm < info.min_time - 1e-9:
        problems.append(f"{move.type} needs at least {info.min_time:g} s, "
                        f"{math.ceil(info.min_time * spm / 60.0 - 1e-9)} slices at "
                        f"{spm:g} slices per minute")
    which = move.WhichOneof("params")
    if which is None:
        return problems
    params = getattr(move, which)
    for path, bounds in spec.parameters.items():
        value = _value(params, path)
        if value is not None and not (math.isfinite(value)
                                      and bounds.minimum <= value <= bounds.maximum):
            problems.append(f"parameter {path} = {value:g} is outside the allowed "
                            f"range [{bounds.minimum:g}, {bounds.maximum:g}]")
    return problems


def length_slices(sequence: choreography_sequence_pb2.ChoreographySequence,
                  moves: dict[str, Move]) -> int:
    """The sequence's length in slices (each move's requested or default length)."""
    end = 0
    for move in sequence.moves:
        spec = moves.get(move.type)
        default = spec.info.move_length_slices if spec is not None else 0
        end = max(end, move.start_slice + (move.requested_slices or default))
    return end
