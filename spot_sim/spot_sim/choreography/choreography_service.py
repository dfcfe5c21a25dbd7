"""choreography (license feature ``choreography``): the move catalog, sequence and animation
upload with the robot's validation, execution at a time-synced start time, status.

Sequences are kept by name (ListAllSequences lists them). A dance runs as the robot's mobility
command (see ``spot_sim.choreography.dance``); a robot-command stop (or any other mobility
command) interrupts it. Refusals: a withheld license (header invalid request naming the
feature), no valid lease (STATUS_LEASE_ERROR), an unknown sequence (STATUS_UNKNOWN_SEQUENCE),
motors off, e-stop or a behaviour fault (STATUS_ROBOT_COMMAND_ISSUES).

Robot state logs (``spot_sim.choreography.state_log``): a manual recording started, extended
and stopped by RPC, and the log of the last choreography executed, downloaded streamed in
chunks.
"""

import itertools

from bosdyn.api.header_pb2 import CommonError
from bosdyn.api.spot import choreography_sequence_pb2 as seq_pb2
from bosdyn.api.spot import choreography_service_pb2_grpc

from spot_sim.body.robot import SimRobot
from spot_sim.choreography.catalog import animation_move, load_catalog, param_config
from spot_sim.choreography.dance import Dance, Placed, start_dance, step_dance
from spot_sim.choreography.state_log import StateLogs
from spot_sim.choreography.validation import check_sequence
from spot_sim.core.clock import timestamp_to_nsec
from spot_sim.core.lock_order import DOMAIN, OrderedLock
from spot_sim.core.rpc import LeaseCheck, set_error, stamped, unary
from spot_sim.core.served import Served, ServiceSpec

Execute = seq_pb2.ExecuteChoreographyResponse
Status = seq_pb2.ChoreographyStatusResponse
MoveState = seq_pb2.MoveInfo.TransitionState
LogType = seq_pb2.DownloadRobotStateLogRequest
STATUS_VALIDITY_NS = 1_000_000_000
LOG_CHUNK_BYTES = 64 * 1024  # a downloaded log's chunk size [ours]


class ChoreographyServicer(choreography_service_pb2_grpc.ChoreographyServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot, self.clock = robot, robot.clock
        self.builtin = load_catalog()
        self.animations: dict[str, seq_pb2.Animation] = {}
        self.sequences: dict[str, seq_pb2.ChoreographySequence] = {}
        self.dance: Dance | None = None
        self.logs = StateLogs()
        self._executions = 0
        # the uploads, the dance and the state logs; taken before the robot's
        self._lock = OrderedLock("choreography", DOMAIN)
        robot.add_step_hook(self.step)

    @property
    def moves(self):
        return {**self.builtin, **{name: animation_move(a) for name, a in
                                   self.animations.items()}}

    def _licensed(self, response) -> bool:
        if self.robot.license.allows("choreography"):
            return True
        set_error(response, CommonError.CODE_INVALID_REQUEST,
                  self.robot.license.refusal("choreography"))
        return False

    # ------------------------------------------------------------------ catalog
    @unary(seq_pb2.ListAllMovesResponse)
    def ListAllMoves(self, request, response, context):
        if not self._licensed(response):
            return
        moves = self.moves
        response.moves.extend(move.to_proto() for move in moves.values())
        response.move_param_config = param_config(moves)

    @unary(seq_pb2.ListAllSequencesResponse)
    def ListAllSequences(self, request, response, context):
        with self._lock:
            names = sorted(self.sequences)
        response.known_sequences.extend(names)
        for name in names:
            response.sequence_info.add(name=name)

    @unary(seq_pb2.UploadChoreographyResponse)
    def UploadChoreography(self, request, response, context):
        if not self._licensed(response):
            return
        checked = check_sequence(request.choreography_sequence, self.moves,
                                 has_arm=self.robot.config.has_arm)
        response.warnings.extend(checked.errors + checked.warnings)
        if checked.errors or (checked.warnings and not request.non_strict_parsing):
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "the choreography is invalid: see the warnings")
            return
        with self._lock:
            self.sequences[checked.sequence.name] = checked.sequence

    @unary(seq_pb2.UploadAnimatedMoveResponse)
    def UploadAnimatedMove(self, request, response, context):
        if not self._licensed(response):
            return
        animation = request.animated_move
        problems = []
        if not animation.name:
            problems.append("the animation has no name")
        if animation.name in self.builtin:
            problems.append(f"{animation.name!r} is the name of a built-in move")
        times = [k.time for k in animation.animation_keyframes]
        if len(times) < 2:
            problems.append("an animation needs at least two keyframes")
        elif any(b <= a for a, b in itertools.pairwise(times)) or times[0] < 0:
            problems.append("keyframe times must start at or after 0 and increase")
        if not (animation.controls_body or animation.controls_legs or animation.controls_arm
                or animation.controls_gripper):
            problems.append("the animation controls nothing (body, legs, arm or gripper)")
        if animation.controls_arm and not self.robot.config.has_arm:
            problems.append("the animation moves the arm and this robot has none")
        with self._lock:
            if self.dance is not None and not self.dance.done:
                response.status = response.STATUS_REJECTED_DANCE_ACTIVE
                return
            if problems:
                response.status = response.STATUS_ANIMATION_VALIDATION_FAILED
                response.warnings.extend(problems)
                return
            self.animations[animation.name] = animation
        response.status = response.STATUS_OK

    # ------------------------------------------------------------------ execution
    @unary(seq_pb2.ExecuteChoreographyResponse, LeaseCheck(
        refused=lambda response, uses: setattr(response, "status", Execute.STATUS_LEASE_ERROR)))
    def ExecuteChoreography(self, request, response, context):
        if not self._licensed(response):
            return
        robot = self.robot
        with self._lock:
            sequence = self.sequences.get(request.choreography_sequence_name)
            if sequence is None:
                response.status = Execute.STATUS_UNKNOWN_SEQUENCE
                set_error(response, CommonError.CODE_OK,
                          f"no sequence named {request.choreography_sequence_name!r}")
                return
            moves = self.moves
            placed = [Placed(m, moves[m.type], m.start_slice,
                             m.start_slice + moves[m.type].length(m.requested_slices),
                             sequence.slices_per_minute) for m in sequence.moves]
            start_ns = (timestamp_to_nsec(request.start_time) if request.HasField("start_time")
                        else self.clock.now_nsec())
            dance = Dance(self._executions + 1, sequence, placed, start_ns,
                          request.choreography_starting_slice)
            # As the robot does, it gets into the sequence's starting position by itself.
            stand = (sequence.entrance_state or MoveState.TRANSITION_STATE_STAND) \
                != MoveState.TRANSITION_STATE_SIT
            if not start_dance(robot, dance, stand):
                response.status = Execute.STATUS_ROBOT_COMMAND_ISSUES
                return
            self._executions, self.dance = dance.execution_id, dance
            self.logs.begin_dance(self.clock.now_nsec(), robot.body_poses()[0])
        response.status = Execute.STATUS_OK
        response.execution_id = self._executions

    def step(self, robot: SimRobot, now_ns: int) -> None:
        """Advance the dance and record the state logs (the physics loop's hook)."""
        with self._lock:
            dance = self.dance
            if dance is not None and not dance.done:
                step_dance(robot, dance, now_ns, 1.0 / robot.config.physics_rate_hz)
            logs = self.logs
            if logs.wants_frame(now_ns):
                logs.record(now_ns, robot.body_poses()[0], robot.joint_positions()[0],
                            robot.config.has_arm)
            if dance is None or dance.done:
                logs.end_dance()

    # ------------------------------------------------------------------ state logs
    @unary(seq_pb2.StartRecordingStateResponse)
    def StartRecordingState(self, request, response, context):
        if not self._licensed(response):
            return
        duration_ns = request.continue_recording_duration.ToNanoseconds()
        if duration_ns <= 0:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "continue_recording_duration must be positive")
            return
        with self._lock:
            response.status, response.recording_session_id = self.logs.start(
                self.clock.now_nsec(), duration_ns, request.recording_session_id,
                self.robot.body_poses()[0])

    @unary(seq_pb2.StopRecordingStateResponse)
    def StopRecordingState(self, request, response, context):
        with self._lock:
            self.logs.stop(self.clock.now_nsec())

    def DownloadRobotStateLog(self, request, context):
        response_type = seq_pb2.DownloadRobotStateLogResponse
        if request.log_type not in (LogType.LOG_TYPE_MANUAL, LogType.LOG_TYPE_LAST_CHOREOGRAPHY):
            response = response_type()
            set_error(response, CommonError.CODE_INVALID_REQUEST, "log_type must be "
                      "LOG_TYPE_MANUAL or LOG_TYPE_LAST_CHOREOGRAPHY")
            yield stamped(self.clock, response, request.header)
            return
        with self._lock:
            status, log = self.logs.download(request.log_type)
        if log is None:
            yield stamped(self.clock, response_type(status=status), request.header)
            return
        data = log.SerializeToString()
        for offset in range(0, len(data), LOG_CHUNK_BYTES):
            response = response_type(status=status)
            response.chunk.total_size = len(data)
            response.chunk.data = data[offset:offset + LOG_CHUNK_BYTES]
            yield stamped(self.clock, response, request.header)

    @unary(seq_pb2.ChoreographyStatusResponse)
    def ChoreographyStatus(self, request, response, context):
        with self._lock:
            dance = self.dance
            response.validity_time.CopyFrom(self.clock.timestamp(
                self.clock.now_nsec() + STATUS_VALIDITY_NS))
            if dance is None:
                response.status = Status.STATUS_UNKNOWN
                return
            response.status = dance.status
            response.execution_id = dance.execution_id
            response.current_slice = dance.current_slice
            response.sequence_name = dance.sequence.name
            response.sequence_slices = dance.total_slices
            response.sequence_slices_per_minute = dance.sequence.slices_per_minute
            response.sequence_start_time.CopyFrom(self.clock.timestamp(dance.start_ns))
            for placed in dance.active:
                response.active_moves.add().move.CopyFrom(placed.move)


def spec() -> ServiceSpec:
    return ServiceSpec("choreography", "bosdyn.api.spot.ChoreographyService", "api.spot.robot",
                       choreography_service_pb2_grpc.add_ChoreographyServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: ChoreographyServicer(parts.robot)),)
