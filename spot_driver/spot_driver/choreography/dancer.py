"""The driver's use of the robot's choreography service: the move specifications (fetched
once, again after an animation upload), checked uploads, execution and status, and stopping a
dance (any mobility command interrupts it: the driver sends stop)."""

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bosdyn.api.spot import choreography_sequence_pb2
from bosdyn.choreography.client.choreography import ChoreographyClient, NoRecordedInformation
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.robot_command import RobotCommandBuilder

from spot_driver.choreography import recording
from spot_driver.choreography.files import read_animation, read_sequence
from spot_driver.choreography.specs import Move, check_sequence, parse_moves
from spot_driver.core.connection import RobotConnection
from spot_driver.core.errors import CommandError
from spot_driver.core.follower import Progress, RobotTask
from spot_driver.core.state_cache import RobotStateCache
from spot_driver.description.hardware import robot_has_arm

Status = choreography_sequence_pb2.ChoreographyStatusResponse
Execute = choreography_sequence_pb2.ExecuteChoreographyResponse
StartRecording = choreography_sequence_pb2.StartRecordingStateResponse
RUNNING = (Status.STATUS_WAITING_FOR_START_TIME, Status.STATUS_DANCING, Status.STATUS_PREPPING,
           Status.STATUS_VALIDATING)
MAX_START_DELAY = 3600.0
START_GRACE_S = 10.0  # a dance that has not started this long after its start time: failed


class ChoreographyRefusedError(CommandError):
    """The check or the robot refused an upload; ``warnings`` lists why."""

    def __init__(self, message: str, warnings: list[str]) -> None:
        super().__init__(message)
        self.warnings = warnings


@dataclass
class RecordedAnimation:
    """A recording turned into an animation: the .cha text, where it was written ("" if
    nowhere), its keyframes and length (s), and the robot's warnings if it was uploaded."""

    text: str
    path: str
    keyframes: int
    duration: float
    warnings: list[str] = field(default_factory=list)


class Choreographer:
    def __init__(self, connection: RobotConnection, cache: RobotStateCache) -> None:
        self._connection, self._cache = connection, cache
        self._moves: dict[str, Move] | None = None

    @property
    def client(self) -> ChoreographyClient:
        return self._connection.client(ChoreographyClient)

    def moves(self, refresh: bool = False) -> dict[str, Move]:
        if self._moves is None or refresh:
            try:
                self._moves = parse_moves(self.client.list_all_moves())
            except sdk_errors.InvalidRequestError as exc:
                raise CommandError(f"choreography refused: "
                                   f"{exc.response.header.error.message}") from None
        return self._moves

    def upload(self, path: str, name: str = "", non_strict: bool = False
               ) -> tuple[str, list[str]]:
        """Check and upload a sequence file; (stored name, the robot's warnings)."""
        sequence = read_sequence(path, name)
        problems = check_sequence(sequence, self.moves())
        if problems:
            raise ChoreographyRefusedError(
                f"{sequence.name!r} not uploaded: " + "; ".join(problems), problems)
        try:
            response = self.client.upload_choreography(sequence, non_strict_parsing=non_strict)
        except sdk_errors.InvalidRequestError as exc:
            warnings = list(getattr(exc.response, "warnings", []))
            raise ChoreographyRefusedError(
                f"the robot refused {sequence.name!r}: " + "; ".join(warnings), warnings
            ) from None
        return sequence.name, list(response.warnings)

    def upload_animation(self, path: str) -> tuple[str, list[str]]:
        animation = read_animation(path)
        try:
            response = self.client.upload_animated_move(animation, "")
        except sdk_errors.ResponseError as exc:
            warnings = list(getattr(exc.response, "warnings", []))
            raise ChoreographyRefusedError(
                f"the robot refused animation {animation.name!r}: " + "; ".join(warnings),
                warnings) from None
        self.moves(refresh=True)
        return animation.name, list(response.warnings)

    # ------------------------------------------------------------------ state recording
    def start_recording(self, seconds: float, session_id: int = 0) -> tuple[str, int]:
        """Start (session 0) or extend a state recording: (the robot's status, session id)."""
        recording.check_duration(seconds)
        try:
            response = self.client.start_recording_state(seconds, session_id)
        except sdk_errors.ResponseError as exc:
            status = getattr(exc.response, "status", 0)
            raise CommandError(f"the robot refused to record: "
                               f"{StartRecording.Status.Name(status)}") from None
        return StartRecording.Status.Name(response.status), response.recording_session_id

    def stop_recording(self) -> None:
        self.client.stop_recording_state()

    def recording_to_animation(self, name: str, options: list[str], directory: str = "",
                               upload: bool = False) -> RecordedAnimation:
        """The manual recording as a Choreographer animation (the SDK's converter), written to
        ``directory`` when given and uploaded when asked."""
        recording.check_name(name)
        recording.check_options(options)
        target = recording.target_file(directory, name)
        with tempfile.TemporaryDirectory() as scratch:
            try:
                written = self.client.choreography_log_to_animation_file(
                    name, scratch, robot_has_arm(self._connection, lambda _: None), list(options))
            except NoRecordedInformation:
                raise CommandError("the robot has no recording: start one with "
                                   "choreography/start_recording_state") from None
            path = Path(scratch) / written
            text = path.read_text()
            frames = read_animation(str(path)).animation_keyframes
            warnings = self.upload_animation(str(path))[1] if upload else []
        if target is not None:
            target.write_text(text)
        duration = frames[-1].time - frames[0].time if frames else 0.0
        return RecordedAnimation(text, str(target or ""), len(frames), duration, warnings)

    def sequences(self) -> list[str]:
        return list(self.client.list_all_sequences().known_sequences)

    def execute(self, name: str, start_slice: float, start_local: float) -> int:
        """Start ``name`` at local time ``start_local`` (s since the epoch)."""
        if not name:
            raise CommandError("no sequence name given")
        if not (start_slice >= 0 and start_slice < 1e6):
            raise CommandError(f"start_slice must be a non-negative number, not {start_slice}")
        if not start_local - time.time() < MAX_START_DELAY:
            raise CommandError(f"the start is more than {MAX_START_DELAY:.0f} s away")
        self._connection.require_lease()
        self._cache.require_ready()
        if name not in self.sequences():
            raise CommandError(f"unknown sequence name {name!r}: upload it first")
        try:
            return self.client.execute_choreography(name, start_local, start_slice).execution_id
        except sdk_errors.LeaseUseError:
            raise
        except sdk_errors.ResponseError as exc:
            status = getattr(exc.response, "status", 0)
            raise CommandError(f"the robot refused to dance: {Execute.Status.Name(status)}"
                               ) from None

    def status(self) -> choreography_sequence_pb2.ChoreographyStatusResponse:
        return self.client.get_choreography_status()[0]

    def stop(self) -> None:
        self._connection.command_client.robot_command(RobotCommandBuilder.stop_command())


def status_name(status: int) -> str:
    return Status.Status.Name(status) if status in Status.Status.values() else str(status)


class DanceTask(RobotTask):
    """One execution of an uploaded sequence, followed until the robot stops dancing it; it
    succeeds at STATUS_COMPLETED_SEQUENCE. Feedback is the robot's ChoreographyStatusResponse
    for this execution."""

    name = "dance"
    timeout = float("inf")  # a dance ends by itself; cancel stops it
    canceled_message = "canceled: the robot stopped dancing"

    def __init__(self, dancer: Choreographer, sequence: str, start_slice: float,
                 start_local: float) -> None:
        self._dancer, self._sequence = dancer, sequence
        self._start_slice, self._start = start_slice, start_local
        self._execution = None

    def start(self) -> None:
        self._execution = self._dancer.execute(self._sequence, self._start_slice, self._start)

    def poll(self) -> Progress:
        status = self._dancer.status()
        name = status_name(status.status)
        if status.execution_id != self._execution:
            if time.time() > self._start + START_GRACE_S:
                raise CommandError("the dance did not start")
            return Progress(status=name)
        progress = Progress(status=name, feedback=status)
        if status.status not in RUNNING:
            progress.done = True
            progress.ok = status.status == Status.STATUS_COMPLETED_SEQUENCE
            progress.message = "danced to the end" if progress.ok else \
                f"the dance ended: {name}"
        return progress

    def stop(self) -> None:
        self._dancer.stop()
