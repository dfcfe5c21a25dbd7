"""Choreography moves and status as ROS messages (pure functions)."""

from bosdyn.api.spot import choreography_sequence_pb2

from spot_msgs.action import ExecuteChoreography
from spot_msgs.msg import ChoreographyMove, ChoreographyParameter, ChoreographyStatus

Status = choreography_sequence_pb2.ChoreographyStatusResponse
State = choreography_sequence_pb2.MoveInfo.TransitionState


def move_msg(move) -> ChoreographyMove:
    """A move of the robot's specifications (``info``, ``controls``, ``parameters``)."""
    info = move.info
    return ChoreographyMove(
        name=info.name, length_slices=info.move_length_slices, extendable=info.is_extendable,
        min_slices=info.min_move_length_slices, max_slices=info.max_move_length_slices,
        controls=move.controls, entrance_states=[State.Name(s) for s in info.entrance_states],
        exit_state=State.Name(info.exit_state),
        parameters=[ChoreographyParameter(name=path, default_value=b.default,
                                          minimum=b.minimum, maximum=b.maximum)
                    for path, b in move.parameters.items()])


def status_msg(status: Status, stamp) -> ChoreographyStatus:
    msg = ChoreographyStatus(
        status=_status_name(status.status), execution_id=status.execution_id,
        sequence_name=status.sequence_name, current_slice=status.current_slice,
        sequence_slices=status.sequence_slices,
        slices_per_minute=status.sequence_slices_per_minute,
        active_moves=[m.move.type for m in status.active_moves])
    msg.header.stamp = stamp
    return msg


def feedback(status: Status) -> ExecuteChoreography.Feedback:
    remaining = max(status.sequence_slices - status.current_slice, 0.0)
    spm = status.sequence_slices_per_minute
    return ExecuteChoreography.Feedback(
        status=_status_name(status.status), executing_moves=[m.move.type
                                                            for m in status.active_moves],
        current_slice=status.current_slice,
        time_to_end=remaining * 60.0 / spm if spm > 0 else 0.0)


def _status_name(status: int) -> str:
    return Status.Status.Name(status) if status in Status.Status.values() else str(status)
