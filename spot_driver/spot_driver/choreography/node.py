"""Choreography: upload and list services, the ``choreography/execute`` action and
``status/choreography``."""

import time

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_srvs.srv import Trigger

from spot_driver.choreography import conversions as convert
from spot_driver.choreography.dancer import Choreographer, ChoreographyRefusedError, DanceTask
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import CommandError, describe
from spot_driver.nodes.actions import GoalPolicy, GoalSlot, serve
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork
from spot_driver.nodes.triggers import answer, answer_callback, trigger_callback
from spot_msgs.action import ExecuteChoreography
from spot_msgs.msg import ChoreographyStatus
from spot_msgs.srv import (
    ListChoreographyMoves,
    ListChoreographySequences,
    RecordedStateToAnimation,
    StartRecordingState,
    UploadAnimation,
    UploadChoreography,
)


class ChoreographyNode(PeriodicWork, Node):
    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_choreography", namespace=context.namespace)
        self.dancer = Choreographer(context.connection, context.cache)
        rate = declare(self, "choreography_status_rate", 2.0)
        self._status_pub = self.create_publisher(ChoreographyStatus, "status/choreography",
                                                 qos.STATE)
        group = ReentrantCallbackGroup()
        for srv_type, name, callback in (
                (UploadChoreography, "choreography/upload", self._upload),
                (UploadAnimation, "choreography/upload_animation", self._upload_animation),
                (ListChoreographyMoves, "choreography/list_moves", self._list_moves),
                (ListChoreographySequences, "choreography/list_sequences", self._list_sequences),
                (Trigger, "choreography/stop",
                 trigger_callback(self.get_logger(), "choreography/stop", self._stop)),
                (StartRecordingState, "choreography/start_recording_state",
                 answer_callback(self.get_logger(), "choreography/start_recording_state",
                                 self._start_recording)),
                (Trigger, "choreography/stop_recording_state",
                 trigger_callback(self.get_logger(), "choreography/stop_recording_state",
                                  self._stop_recording)),
                (RecordedStateToAnimation, "choreography/recorded_state_to_animation",
                 answer_callback(self.get_logger(), "choreography/recorded_state_to_animation",
                                 self._to_animation))):
            self.create_service(srv_type, name, callback, qos_profile=qos.SERVICES,
                                callback_group=group)
        self._server = serve(self, ExecuteChoreography, "choreography/execute", self._task,
                             GoalSlot("choreography", GoalPolicy.REJECT), group,
                             feedback_for=convert.feedback)
        if rate > 0:
            self.every(1.0 / rate, self._publish_status)

    def _publish_status(self) -> None:
        try:
            status = self.dancer.status()
        except Exception as exc:
            self.get_logger().warning(f"choreography status: {describe(exc)}",
                                      throttle_duration_sec=30.0)
            return
        self._status_pub.publish(convert.status_msg(status, self.get_clock().now().to_msg()))

    # ------------------------------------------------------------------ services
    def _upload(self, request, response):
        return self._answer_upload(response, "choreography/upload", "uploaded", lambda: (
            self.dancer.upload(request.path, request.name, request.non_strict)))

    def _upload_animation(self, request, response):
        return self._answer_upload(response, "choreography/upload_animation",
                                   "uploaded animation",
                                   lambda: self.dancer.upload_animation(request.path))

    def _answer_upload(self, response, service: str, done: str, upload):
        """Fill an upload answer from ``upload()`` -> (name, the robot's warnings); a refusal
        carries the robot's warnings too."""
        def fill() -> str:
            try:
                response.name, response.warnings = upload()
            except ChoreographyRefusedError as exc:
                response.warnings = exc.warnings
                raise
            return f"{done} {response.name!r}"
        return answer(self.get_logger(), service, response, fill)

    def _list_moves(self, request, response):
        def fill() -> str:
            response.moves = [convert.move_msg(m) for m in self.dancer.moves().values()]
            return f"{len(response.moves)} moves"
        return answer(self.get_logger(), "choreography/list_moves", response, fill)

    def _list_sequences(self, request, response):
        def fill() -> str:
            response.names = self.dancer.sequences()
            return f"{len(response.names)} sequences"
        return answer(self.get_logger(), "choreography/list_sequences", response, fill)

    def _stop(self) -> str:
        self.dancer.stop()
        return "the robot stopped dancing"

    # ------------------------------------------------------------------ state recording
    def _start_recording(self, request, response) -> str:
        response.status, response.recording_session_id = self.dancer.start_recording(
            request.duration, request.continue_session_id)
        return f"recording {request.duration:g} s (session {response.recording_session_id})"

    def _stop_recording(self) -> str:
        self.dancer.stop_recording()
        return "recording stopped"

    def _to_animation(self, request, response) -> str:
        made = self.dancer.recording_to_animation(request.name, list(request.options),
                                                  request.directory, request.upload)
        response.animation, response.path, response.warnings = made.text, made.path, \
            made.warnings
        response.keyframes, response.duration = made.keyframes, made.duration
        return (f"animation {request.name!r}: {made.keyframes} keyframes, {made.duration:.1f} s"
                + (", uploaded" if request.upload else ""))

    # ------------------------------------------------------------------ action
    def _task(self, goal) -> DanceTask:
        if goal.start_time.sec or goal.start_time.nanosec:
            start = goal.start_time.sec + goal.start_time.nanosec * 1e-9
        elif goal.start_delay >= 0:
            start = time.time() + goal.start_delay
        else:
            raise CommandError(f"start_delay must not be negative, not {goal.start_delay}")
        return DanceTask(self.dancer, goal.sequence_name, goal.start_slice, start)
