"""Missions: reading mission files and driving the robot's mission service.

A played mission runs only until the pause time the driver gives it; ``MissionSession.play``
is called again while a goal is active to move that time forward, so if the driver dies the
robot pauses the mission within ``pause_window`` seconds.
"""

import math
import time
from collections.abc import Callable

from bosdyn.api.mission import mission_pb2, nodes_pb2
from bosdyn.mission.client import MissionClient, ValidationError
from google.protobuf import text_format
from google.protobuf.message import DecodeError

from spot_driver.core.connection import RobotConnection
from spot_driver.core.errors import CommandError
from spot_driver.core.follower import Progress, RobotTask
from spot_driver.core.request_files import request_file

State = mission_pb2.State
FINISHED = {State.STATUS_SUCCESS, State.STATUS_FAILURE, State.STATUS_ERROR,
            State.STATUS_STOPPED}
MAX_FILE_BYTES = 512 * 1024 * 1024


class MissionLoadError(CommandError):
    """The robot refused the mission at load; ``failed_nodes`` says which nodes and why."""

    def __init__(self, message: str, failed_nodes: list[str]) -> None:
        super().__init__(message)
        self.failed_nodes = failed_nodes
        self.result_values = {"failed_nodes": failed_nodes}


def read_mission_file(path: str) -> nodes_pb2.Node:
    """A mission's root node from a binary or text-format ``bosdyn.api.mission.Node`` file."""
    file = request_file(path, "mission", "mission_file", MAX_FILE_BYTES)
    data = file.read_bytes()
    root = nodes_pb2.Node()
    try:
        text_format.Parse(data.decode("utf-8"), root)
    except (UnicodeDecodeError, text_format.ParseError):
        root.Clear()
        try:
            root.ParseFromString(data)
        except DecodeError:
            raise CommandError(f"mission file {str(file)!r} is neither a binary nor a "
                               "text-format bosdyn.api.mission.Node") from None
    if root.WhichOneof("type") is None:
        raise CommandError(f"mission file {str(file)!r} holds no mission node")
    return root


def play_settings(max_linear: float, max_angular: float, disable_exploration: bool,
                  disable_alternate_routes: bool, ground_clutter_mode: int
                  ) -> mission_pb2.PlaySettings:
    """PlaySettings from a mission goal's fields; zero velocities mean no extra limit."""
    for name, value in (("max_linear_velocity", max_linear),
                        ("max_angular_velocity", max_angular)):
        if not math.isfinite(value) or value < 0:
            raise CommandError(f"{name} must be a finite, non-negative number, not {value}")
    if ground_clutter_mode not in (0, 1, 2):
        raise CommandError(f"unknown ground_clutter_mode {ground_clutter_mode}")
    settings = mission_pb2.PlaySettings(disable_directed_exploration=disable_exploration,
                                        disable_alternate_route_finding=disable_alternate_routes,
                                        ground_clutter_mode=ground_clutter_mode)
    if max_linear or max_angular:
        limit = settings.velocity_limit.max_vel
        limit.linear.x = limit.linear.y = max_linear or 1e3
        limit.angular = max_angular or 1e3
        settings.velocity_limit.min_vel.linear.x = settings.velocity_limit.min_vel.linear.y = \
            -(max_linear or 1e3)
        settings.velocity_limit.min_vel.angular = -(max_angular or 1e3)
    return settings


def failed_node_text(node: mission_pb2.FailedNode) -> str:
    return f"{node.name} ({node.impl_typename}): {node.error}"


class MissionSession:
    """The driver's use of the robot's mission service."""

    def __init__(self, connection: RobotConnection, pause_window: float = 3.0,
                 chunk_bytes: int = 2 * 1024 * 1024) -> None:
        self._connection = connection
        self.pause_window, self.chunk_bytes = pause_window, chunk_bytes

    @property
    def client(self) -> MissionClient:
        return self._connection.client(MissionClient)

    def _leases(self) -> list:
        self._connection.require_lease()
        return [self._connection.robot.lease_wallet.get_lease()]

    def load(self, root: nodes_pb2.Node) -> mission_pb2.MissionInfo:
        """Load ``root`` (through the chunked RPC when it is large)."""
        leases = self._leases()
        try:
            if root.ByteSize() > self.chunk_bytes:
                response = self.client.load_mission_as_chunks2(root, leases=leases)
            else:
                response = self.client.load_mission(root, leases=leases)
        except ValidationError as exc:
            failed = [failed_node_text(n) for n in exc.failed_nodes]
            raise MissionLoadError("the robot refused the mission: " + "; ".join(failed),
                                   failed) from None
        return response.mission_info

    def play(self, settings: mission_pb2.PlaySettings | None) -> None:
        """Play (or resume) the loaded mission until now + ``pause_window``."""
        self.client.play_mission(time.time() + self.pause_window, leases=self._leases(),
                                 settings=settings)

    def restart(self, settings: mission_pb2.PlaySettings | None) -> None:
        self.client.restart_mission(time.time() + self.pause_window, leases=self._leases(),
                                    settings=settings)

    def pause(self) -> None:
        self.client.pause_mission()

    def stop(self) -> None:
        self.client.stop_mission()

    def state(self) -> mission_pb2.State:
        return self.client.get_state(past_ticks=0)

    def info(self) -> mission_pb2.MissionInfo | None:
        return self.client.get_info()

    def answer(self, question_id: int, code: int) -> None:
        """Answer an open question; the robot checks the id and the code (see errors.py)."""
        self.client.answer_question(question_id, code)


class MissionTask(RobotTask):
    """One mission goal: ``load()`` the mission, play it, renew its pause time every third of
    the pause window (unless the user paused it), until it finishes.

    ``status()`` reads the robot's mission state as a message with ``status``,
    ``status_name``, ``running_nodes``, ``questions`` and ``error``."""

    name = "mission"
    timeout = float("inf")  # a mission runs as long as it runs; cancel stops it
    canceled_message = "canceled: mission stopped"

    def __init__(self, session: MissionSession, load: Callable[[], mission_pb2.MissionInfo],
                 settings: mission_pb2.PlaySettings, status: Callable[[], object]) -> None:
        self._session, self._load, self._status = session, load, status
        self.settings = settings
        self.paused_by_user = False
        self.renew_s = session.pause_window / 3.0
        self.info: mission_pb2.MissionInfo | None = None

    def start(self) -> None:
        self.info = self._load()
        self._session.play(self.settings)

    def renew(self) -> None:
        if not self.paused_by_user:
            self._session.play(self.settings)

    def poll(self) -> Progress:
        status = self._status()
        progress = Progress(status=status.status_name, feedback={
            "status": status.status_name, "running_nodes": status.running_nodes,
            "questions": status.questions})
        if status.status in FINISHED:
            progress.done = True
            progress.ok = status.status == State.STATUS_SUCCESS
            progress.message = status.error or f"mission ended with {status.status_name}"
        return progress

    def stop(self) -> None:
        self._session.stop()
