"""UploadChoreography's checks, as the robot makes them.

Correctable problems are warnings: a parameter outside its bounds (clamped), a length a move
cannot have (set to the nearest it can), a non-extendable move given another length. With
``non_strict_parsing`` the corrected sequence is kept and the warnings returned; without it
any warning rejects the upload. Uncorrectable problems always reject it: no name, a tempo out
of range, an unknown move, parameters of another move, a negative start, an arm or gripper move
on a robot without an arm, two moves on the same track (legs, body, arm, gripper, lights,
audio-visual lights and buzzer) at once, a move whose entrance state the previous leg move
does not leave the robot in. A move shorter than the time it needs at the sequence's tempo
(``sit`` needs 3 s) is lengthened, with a warning.
"""

import math
from dataclasses import dataclass, field

from bosdyn.api.spot import choreography_sequence_pb2

from spot_sim.choreography.catalog import MoveSpec

MIN_SLICES_PER_MINUTE, MAX_SLICES_PER_MINUTE = 4.0, 1200.0
State = choreography_sequence_pb2.MoveInfo.TransitionState


@dataclass
class Checked:
    sequence: choreography_sequence_pb2.ChoreographySequence
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _leaf(message, path: str):
    """(message holding the value, field name) for a dotted path; wrapper types (DoubleValue,
    Int32Value) resolve to their ``value``. None when the path does not exist."""
    *parents, last = path.split(".")
    for part in parents:
        if part not in message.DESCRIPTOR.fields_by_name:
            return None
        message = getattr(message, part)
    fd = message.DESCRIPTOR.fields_by_name.get(last)
    if fd is None:
        return None
    if fd.message_type is not None and "value" in fd.message_type.fields_by_name:
        return message, last, True
    return message, last, False


def read_param(params, path: str) -> float | None:
    """A parameter's set value, or None when it is not set (the default applies)."""
    found = _leaf(params, path)
    if found is None:
        return None
    holder, name, wrapped = found
    if wrapped:
        return getattr(holder, name).value if holder.HasField(name) else None
    return getattr(holder, name)


def write_param(params, path: str, value: float) -> None:
    holder, name, wrapped = _leaf(params, path)
    target = getattr(holder, name) if wrapped else holder
    field_name = "value" if wrapped else name
    fd = target.DESCRIPTOR.fields_by_name[field_name]
    setattr(target, field_name, round(value) if fd.cpp_type <= 4 else value)


def check_sequence(sequence: choreography_sequence_pb2.ChoreographySequence,
                   moves: dict[str, MoveSpec], has_arm: bool = True) -> Checked:
    out = Checked(choreography_sequence_pb2.ChoreographySequence())
    out.sequence.CopyFrom(sequence)
    if not sequence.name:
        out.errors.append("the sequence has no name")
    spm = sequence.slices_per_minute
    if not (math.isfinite(spm) and MIN_SLICES_PER_MINUTE <= spm <= MAX_SLICES_PER_MINUTE):
        out.errors.append(f"slices_per_minute {spm} is outside [{MIN_SLICES_PER_MINUTE:g}, "
                          f"{MAX_SLICES_PER_MINUTE:g}]")
    spans = []
    for index, move in enumerate(out.sequence.moves):
        label = f"move {index} ({move.type or 'no type'})"
        spec = moves.get(move.type)
        if spec is None:
            out.errors.append(f"{label}: unknown move type {move.type!r}")
            continue
        which = move.WhichOneof("params")
        if which is not None and which != spec.params_field:
            out.errors.append(f"{label}: has {which}, but {move.type} takes "
                              f"{spec.params_field or 'no parameters'}")
            continue
        if move.start_slice < 0:
            out.errors.append(f"{label}: start_slice {move.start_slice} is negative")
            continue
        if not has_arm and {"arm", "gripper"} & set(spec.controls):
            out.errors.append(f"{label}: {move.type} moves the arm and this robot has none")
            continue
        length = _fit_length(move, spec, spm, label, out)
        if which is not None:
            _clamp_parameters(getattr(move, which), spec, label, out)
        spans.append((move.start_slice, move.start_slice + length, spec, label))
    _check_tracks(spans, out)
    _check_states(spans, sequence.entrance_state or State.TRANSITION_STATE_STAND, out)
    return out


def _fit_length(move, spec: MoveSpec, spm: float, label: str, out: Checked) -> int:
    """The move's length in slices: one it can have, and long enough at ``spm``; a changed
    length is written to the move with a warning."""
    length = spec.length(move.requested_slices)
    if move.requested_slices and move.requested_slices != length:
        out.warnings.append(
            f"{label}: requested_slices {move.requested_slices} is not a length "
            f"{move.type} can have ({_lengths(spec)}); using {length}")
        move.requested_slices = length
    needed = spec.min_slices_at(spm) if math.isfinite(spm) and spm > 0 else 0
    if length < needed:
        out.warnings.append(
            f"{label}: {move.type} needs at least {spec.min_seconds:g} s, {needed} slices "
            f"at {spm:g} slices per minute; using {needed}")
        length = move.requested_slices = needed
    return length


def _clamp_parameters(params, spec: MoveSpec, label: str, out: Checked) -> None:
    """Clamp each parameter outside its range into it (a non-finite one to its default),
    with a warning."""
    for param in spec.parameters.values():
        value = read_param(params, param.path)
        if value is None or param.contains(value):
            continue
        fixed = min(max(value, param.minimum), param.maximum) \
            if math.isfinite(value) else param.default
        out.warnings.append(
            f"{label}: parameter {param.path} = {value:g} is outside "
            f"[{param.minimum:g}, {param.maximum:g}]; using {fixed:g}")
        write_param(params, param.path, fixed)


def _lengths(spec: MoveSpec) -> str:
    if spec.extendable:
        return f"{spec.min_slices}-{spec.max_slices} slices"
    return f"exactly {spec.slices} slices"


def _check_tracks(spans, out: Checked) -> None:
    for i, (start, end, spec, label) in enumerate(spans):
        for other_start, other_end, other, other_label in spans[i + 1:]:
            shared = set(spec.controls) & set(other.controls)
            if shared and start < other_end and other_start < end:
                out.errors.append(f"{label} and {other_label} both control "
                                  f"{', '.join(sorted(shared))} during slices "
                                  f"{max(start, other_start)}-{min(end, other_end)}")


def _check_states(spans, state: int, out: Checked) -> None:
    for _start, _end, spec, label in sorted((s for s in spans if "legs" in s[2].controls),
                                            key=lambda s: s[0]):
        if state not in spec.entrance:
            names = ", ".join(State.Name(s) for s in spec.entrance)
            out.errors.append(f"{label}: starts from {names}, but the robot is in "
                              f"{State.Name(state)}")
        state = spec.exit
