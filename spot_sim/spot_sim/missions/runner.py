"""The mission runner: one loaded mission, its play/pause state and the tick loop.

``PlayMission`` carries a pause time: the runner ticks the tree only until then, so a client
that stops renewing it (crashed, disconnected) leaves the mission PAUSED and the robot still.
While playing, the tree is ticked every ``TICK_SEC``; each tick's node results are kept as
history for ``GetState``.
"""

import logging
from collections import deque

from bosdyn.api import lease_pb2, service_customization_pb2
from bosdyn.api.mission import mission_pb2, nodes_pb2, util_pb2
from bosdyn.client.service_customization_helpers import create_value_validator

from spot_common import crash_log
from spot_sim.body.robot import SimRobot
from spot_sim.core.lock_order import MISSION, OrderedLock
from spot_sim.core.ticker import Ticker
from spot_sim.missions.blackboard import Blackboard
from spot_sim.missions.compiler import Compiled, compile_tree
from spot_sim.missions.nodes import ERROR, FAILURE, RUNNING, SUCCESS, Node

_LOG = logging.getLogger(__name__)
State = mission_pb2.State
TICK_SEC = 0.05
HISTORY_TICKS = 2000
_FINAL = {SUCCESS: State.STATUS_SUCCESS, FAILURE: State.STATUS_FAILURE,
          ERROR: State.STATUS_ERROR}


class MissionRunner:
    """Thread-safe; the tick loop runs in its own thread between ``start`` and ``stop``.

    ``robot`` is the in-process face of the robot's services the nodes call
    (``spot_sim.missions.mission_service.RobotServices``).
    """

    def __init__(self, clock, robot: SimRobot, clock_identifier: str = "") -> None:
        self.clock, self.robot = clock, robot
        self.clock_identifier = clock_identifier
        self._lock = OrderedLock("mission runner", MISSION)
        self._ticker = Ticker("spot-sim-mission", self._tick_once, 1.0 / TICK_SEC)
        self._last_ns = 0
        self.mission_id = 0
        self.root_proto: nodes_pb2.Node | None = None
        self.compiled: Compiled | None = None
        self.status = State.STATUS_NONE
        self.error = ""
        self.tick_counter = 0
        self.history: deque[State.NodeStatesAtTick] = deque(maxlen=HISTORY_TICKS)
        self.questions: dict[int, mission_pb2.Question] = {}
        self.answers: dict[int, int] = {}
        self.answered: list[State.AnsweredQuestion] = []
        self._question_ids = 0
        self.leases: list[lease_pb2.Lease] = []
        self.settings = mission_pb2.PlaySettings()
        self.pause_ns = 0
        self.mission_ns = 0
        self.blackboard = Blackboard()
        self.texts: dict[int, object] = {}  # node id -> MissionText shown while it runs
        self._tick: State.NodeStatesAtTick | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._last_ns = self.clock.now_nsec()
        self._ticker.start()

    def stop(self) -> None:
        self._ticker.stop()

    def _tick_once(self) -> None:
        now = self.clock.now_nsec()
        with self._lock:
            if self.status == State.STATUS_RUNNING:
                try:
                    self._step(now, now - self._last_ns)
                except Exception as exc:  # a bug in a node must not stop the service
                    _LOG.exception("mission tick failed")
                    crash_log.record("mission tick", exc)
                    self._halt()
                    self.status, self.error = State.STATUS_ERROR, f"internal error: {exc}"
        self._last_ns = now

    # ------------------------------------------------------------------ commands
    def load(self, root: nodes_pb2.Node, leases) -> Compiled:
        """Compile ``root``; when valid it replaces the loaded mission (stopping it)."""
        compiled = compile_tree(root)
        if compiled.failed:
            return compiled
        with self._lock:
            self._halt()
            self.mission_id += 1
            self.root_proto, self.compiled = root, compiled
            self.leases = list(leases)
            self._reset_run()
            self.status = State.STATUS_NONE  # loaded, not started: PlayMission starts it
        return compiled

    def _reset_run(self) -> None:
        self.error = ""
        self.tick_counter = 0
        self.history.clear()
        self.questions.clear()
        self.answers.clear()
        self.answered.clear()
        self.mission_ns = 0
        self.blackboard = Blackboard()
        self.texts.clear()

    def play(self, pause_ns: int, leases, settings, restart: bool = False) -> bool:
        """Play (or resume, or with ``restart`` start over) until ``pause_ns``; False when
        no mission is loaded."""
        with self._lock:
            if self.compiled is None:
                return False
            if restart:
                self._halt()
                self.compiled = compile_tree(self.root_proto)  # fresh node state
                self._reset_run()
                self.status = State.STATUS_NONE
            if leases:
                self.leases = list(leases)
            if settings is not None:
                self.settings = settings
            self.pause_ns = pause_ns
            if self.status in (State.STATUS_NONE, State.STATUS_PAUSED):
                self.status = State.STATUS_RUNNING
            return True

    def pause(self) -> bool:
        with self._lock:
            if self.status != State.STATUS_RUNNING:
                return False
            self._halt()
            self.status = State.STATUS_PAUSED
            return True

    def stop_mission(self) -> bool:
        with self._lock:
            if self.status not in (State.STATUS_RUNNING, State.STATUS_PAUSED):
                return False
            self._halt()
            self.status = State.STATUS_STOPPED
            return True

    def answer(self, question_id: int, code: int | None = None,
               custom_params: service_customization_pb2.DictParam | None = None
               ) -> tuple[int, service_customization_pb2.CustomParamError | None]:
        """(AnswerQuestionResponse status, the custom-params error when the values do not
        meet the question's spec)."""
        Status = mission_pb2.AnswerQuestionResponse
        with self._lock:
            question = self.questions.get(question_id)
            if question is None:
                if question_id in self.answers:
                    return Status.STATUS_ALREADY_ANSWERED, None
                return Status.STATUS_INVALID_QUESTION_ID, None
            if question.HasField("custom_params"):
                if custom_params is None:
                    return Status.STATUS_INCOMPATIBLE_ANSWER, None
                error = create_value_validator(question.custom_params)(custom_params)
                if error is not None:
                    return Status.STATUS_CUSTOM_PARAMS_ERROR, error
                answer = service_customization_pb2.DictParam()
                answer.CopyFrom(custom_params)
                accepted = State.AnsweredQuestion(question=question, custom_params=answer)
            else:
                if custom_params is not None:
                    return Status.STATUS_INCOMPATIBLE_ANSWER, None
                if code not in {option.answer_code for option in question.options}:
                    return Status.STATUS_INVALID_CODE, None
                answer = code
                accepted = State.AnsweredQuestion(question=question, accepted_answer_code=code)
            del self.questions[question_id]
            self.answers[question_id] = answer
            self.answered.append(accepted)
            return Status.STATUS_OK, None

    # ------------------------------------------------------------------ ticking
    def _halt(self) -> None:
        if self.compiled is not None and self.compiled.root is not None:
            self.compiled.root.halt(self)
        self.questions.clear()

    def _step(self, now_ns: int, dt_ns: int) -> None:
        if now_ns >= self.pause_ns:
            self._halt()
            self.status = State.STATUS_PAUSED
            return
        self.mission_ns += max(dt_ns, 0)
        self.tick_counter += 1
        self._tick = State.NodeStatesAtTick(tick_counter=self.tick_counter,
                                            tick_start_timestamp=self.clock.timestamp(now_ns))
        result = self.compiled.root.tick(self)
        self.history.append(self._tick)
        self._tick = None
        if result != RUNNING:
            self.status = _FINAL[result]
            if result == ERROR:
                self.error = self._first_error() or "a node ended in error"
            self._halt()

    def _first_error(self) -> str:
        for state in self.history[-1].node_states if self.history else ():
            if state.error:
                return state.error
        return ""

    # ------------------------------------------------------------------ node context
    def record(self, node: Node, result: int) -> None:
        if self._tick is not None:
            self._tick.node_states.add(result=result, error=node.error, id=node.id)

    def ask(self, prompt) -> int:
        self._question_ids += 1
        spec = prompt.spec
        question = mission_pb2.Question(
            id=self._question_ids, source=spec.source, text=spec.text,
            options=prompt.options(), for_autonomous_processing=spec.for_autonomous_processing)
        if spec.WhichOneof("answer_spec") == "custom_params":
            question.custom_params.CopyFrom(spec.custom_params)
        if spec.WhichOneof("severity_spec") == "severity":
            question.severity = spec.severity
        self.questions[question.id] = question
        return question.id

    def show_text(self, node: Node, text: str, severity: int) -> None:
        self.texts[node.id] = util_pb2.MissionText(text=text, severity=severity,
                                                    node_id=node.id)

    def hide_text(self, node: Node) -> None:
        self.texts.pop(node.id, None)

    def withdraw(self, question_id: int) -> None:
        self.questions.pop(question_id, None)

    def answer_for(self, question_id: int):
        """The answer's code, or its DictParam for a custom-params question (None: not yet)."""
        return self.answers.get(question_id)

    def lease(self, resource: str) -> lease_pb2.Lease:
        for lease in self.leases:
            if lease.resource == resource:
                return lease
        return lease_pb2.Lease()

    def timestamp(self, nsec: int):
        return self.clock.timestamp(nsec)

    @property
    def velocity_limit(self):
        return self.settings.velocity_limit if self.settings.HasField("velocity_limit") else None

    # ------------------------------------------------------------------ reports
    def state(self, upper: int | None, lower: int | None, past: int | None) -> State:
        with self._lock:
            state = State(status=self.status, error=self.error, tick_counter=self.tick_counter,
                          mission_id=self.mission_id)
            state.questions.extend(self.questions.values())
            state.answered_questions.extend(self.answered)
            state.active_mission_text.extend(self.texts.values())
            top = self.tick_counter if upper is None else min(upper, self.tick_counter)
            if lower is None:
                lower = top - (past if past is not None else 0)
            for tick in reversed(self.history):
                if tick.tick_counter > top:
                    continue
                if tick.tick_counter < lower:
                    break
                state.history.append(tick)
            return state

    def info(self) -> mission_pb2.MissionInfo | None:
        with self._lock:
            if self.compiled is None:
                return None
            return mission_pb2.MissionInfo(id=self.mission_id, root=self.compiled.info)
