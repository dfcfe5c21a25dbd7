"""The ``mission`` action, mission control services and ``status/mission``."""

import threading

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_srvs.srv import Trigger

from spot_driver.autonomy.graph_nav import GraphNavigator
from spot_driver.core import qos
from spot_driver.core.capability import DriverContext
from spot_driver.core.errors import CommandError, describe
from spot_driver.missions import conversions as convert
from spot_driver.missions.autowalk import AutowalkLoader, is_walk
from spot_driver.missions.session import (
    MissionSession,
    MissionTask,
    play_settings,
    read_mission_file,
)
from spot_driver.nodes.actions import GoalPolicy, GoalSlot, fill_result, serve
from spot_driver.nodes.parameters import declare
from spot_driver.nodes.periodic import PeriodicWork
from spot_driver.nodes.triggers import answer, trigger_callback
from spot_msgs.action import Mission
from spot_msgs.msg import MissionStatus
from spot_msgs.srv import AnswerQuestion


class MissionNode(PeriodicWork, Node):
    """Loads and plays missions; renews their pause time while the goal is active."""

    def __init__(self, context: DriverContext) -> None:
        super().__init__("spot_mission", namespace=context.namespace)
        connection, cache = context.connection, context.cache
        pause_window = declare(self, "mission_pause_window", 3.0)
        chunk_bytes = declare(self, "mission_chunk_bytes", 2 * 1024 * 1024)
        status_rate = declare(self, "mission_status_rate", 1.0)
        self.session = MissionSession(connection, pause_window, chunk_bytes)
        self.autowalk = AutowalkLoader(connection, GraphNavigator(connection, cache))
        self._lock = threading.Lock()
        self._active: MissionTask | None = None
        self._names: tuple[int, dict[int, str]] = (-1, {})
        self._status_pub = self.create_publisher(MissionStatus, "status/mission", qos.STREAM)
        group = ReentrantCallbackGroup()
        self._server = serve(self, Mission, "mission", self._task,
                             GoalSlot("mission", GoalPolicy.REJECT), group,
                             result_for=self._result)
        for name, action in (("mission/pause", self._pause), ("mission/resume", self._resume),
                             ("mission/stop", self._stop), ("mission/restart", self._restart)):
            self.create_service(Trigger, name, trigger_callback(self.get_logger(), name, action),
                                qos_profile=qos.SERVICES, callback_group=group)
        self.create_service(AnswerQuestion, "mission/answer_question", self._answer,
                            qos_profile=qos.SERVICES, callback_group=group)
        if status_rate > 0:
            self.every(1.0 / status_rate, self._publish_status)

    # ------------------------------------------------------------------ status
    def _node_names(self, mission_id: int) -> dict[int, str]:
        if self._names[0] != mission_id:
            self._names = (mission_id, convert.node_names(self.session.info()))
        return self._names[1]

    def _status(self) -> MissionStatus:
        state = self.session.state()
        return convert.mission_status(state, self._node_names(state.mission_id),
                                       self.get_clock().now().to_msg())

    def _publish_status(self) -> None:
        try:
            self._status_pub.publish(self._status())
        except Exception as exc:
            self.get_logger().warning(f"mission state: {describe(exc)}",
                                      throttle_duration_sec=10.0)

    # ------------------------------------------------------------------ services
    def _active_goal(self) -> MissionTask:
        with self._lock:
            if self._active is None:
                raise CommandError("no mission goal is active; send a 'mission' goal")
            return self._active

    def _pause(self) -> str:
        with self._lock:
            if self._active is not None:
                self._active.paused_by_user = True  # stop renewing: stays paused
        self.session.pause()
        return "mission paused"

    def _resume(self) -> str:
        active = self._active_goal()
        self.session.play(active.settings)
        active.paused_by_user = False
        return "mission resumed"

    def _stop(self) -> str:
        self.session.stop()
        return "mission stopped"

    def _restart(self) -> str:
        active = self._active_goal()
        self.session.restart(active.settings)
        active.paused_by_user = False
        return "mission restarted"

    def _answer(self, request, response):
        def fill() -> str:
            self.session.answer(request.question_id, request.code)
            return f"answered question {request.question_id} with {request.code}"
        return answer(self.get_logger(), "mission/answer_question", response, fill)

    # ------------------------------------------------------------------ action
    def _task(self, goal) -> MissionTask:
        settings = play_settings(goal.max_linear_velocity, goal.max_angular_velocity,
                                 goal.disable_directed_exploration,
                                 goal.disable_alternate_route_finding, goal.ground_clutter_mode)

        def load():
            if is_walk(goal.mission_file):
                info = self.autowalk.load(goal.mission_file)
            else:
                info = self.session.load(read_mission_file(goal.mission_file))
            self._names = (info.id, convert.node_names(info))
            return info

        task = MissionTask(self.session, load, settings, self._status)
        with self._lock:
            self._active = task
        return task

    def _result(self, result, ending):
        with self._lock:
            self._active = None
        return fill_result(result, ending)
