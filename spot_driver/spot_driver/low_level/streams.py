"""The two gRPC streams of the joint-control API, each on a thread of its own; without ROS.

``StateStream`` reads GetRobotStateStream and hands every message to a callback as it
arrives (none dropped, none merged); a broken stream is reopened after ``retry_s``.
``CommandStream`` feeds JointControlStream from a queue and ends the stream when no command
came for ``watchdog_s``: the robot's end_time then returns it to its stand controller.
"""

import queue
import threading
import time
from collections.abc import Callable, Iterator

from bosdyn.client.robot_command import RobotCommandStreamingClient
from bosdyn.client.robot_state import RobotStateStreamingClient

from spot_driver.core.errors import describe

CLIENTS = [RobotStateStreamingClient, RobotCommandStreamingClient]


class StreamCalls:
    """The two RPCs over a ``RobotConnection`` of this process's own (registered with
    ``CLIENTS``): a new session (login, time sync) when the last one broke."""

    def __init__(self, connection) -> None:
        self.connection = connection

    def state_stream(self) -> Iterator:
        if not self.connection.connected:
            self.connection.connect()
        return self.connection.client(RobotStateStreamingClient).get_robot_state_stream()

    def send_commands(self, requests: Iterator):
        return self.connection.client(RobotCommandStreamingClient).send_joint_control_commands(
            requests)


class StateStream:
    def __init__(self, open_stream: Callable[[], Iterator], on_message: Callable,
                 retry_s: float = 1.0, on_broken: Callable[[str], None] | None = None) -> None:
        self._open = open_stream
        self._on_message = on_message
        self._on_broken = on_broken
        self._retry_s = retry_s
        self._stop = threading.Event()
        self._call = None
        self.received = 0
        self.reopened = 0
        self.problem = "not started"  # "" while messages flow
        self._thread = threading.Thread(target=self._run, name="spot-low-level-state",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        call = self._call
        if call is not None:
            call.cancel()
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._call = self._open()
                for message in self._call:
                    if self._stop.is_set():
                        return
                    self.received += 1
                    self.problem = ""
                    self._on_message(message, time.monotonic_ns())
                reason = "the robot ended the state stream"
            except Exception as exc:  # a broken stream, or the connection is down
                reason = f"state stream broken: {describe(exc)}"
            if self._stop.is_set():
                return
            self.problem = reason
            self.reopened += 1
            if self._on_broken is not None:
                self._on_broken(reason)
            self._stop.wait(self._retry_s)


class CommandStream:
    """``build(item, first)`` turns a queued item into a request when it is sent (so end
    times are fresh); ``first`` is true for a stream's first message (gains go there)."""

    def __init__(self, send: Callable[[Iterator], object], build: Callable,
                 watchdog_s: float, on_end: Callable[[str], None] | None = None) -> None:
        self._send = send
        self._build = build
        self.watchdog_s = watchdog_s
        self._on_end = on_end
        self._queue: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.streams = 0
        self.watchdog_stops = 0
        self.last_result = "no command streamed yet"

    @property
    def streaming(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def put(self, item) -> None:
        """Queue one command; opens a stream when none is open."""
        with self._lock:
            self._queue.put(item)
            if not self.streaming:
                self._thread = threading.Thread(target=self._run, name="spot-low-level-command",
                                                daemon=True)
                self._thread.start()

    def close(self, timeout: float = 2.0) -> None:
        """End the open stream now (as the watchdog would)."""
        with self._lock:
            thread = self._thread
            if thread is not None and thread.is_alive():
                self._queue.put(None)
        if thread is not None:
            thread.join(timeout)

    def _requests(self):
        first = True
        while True:
            try:
                item = self._queue.get(timeout=self.watchdog_s)
            except queue.Empty:
                self.watchdog_stops += 1
                return
            if item is None:
                return
            while not self._queue.empty():  # only the newest of a backlog: never stale targets
                newer = self._queue.get_nowait()
                if newer is None:
                    return
                item = newer
            request = self._build(item, first)
            first = False
            yield request

    def _run(self) -> None:
        self.streams += 1
        try:
            response = self._send(self._requests())
            status = type(response).Status.Name(response.status)
            self.last_result = status + (f": {response.message}" if response.message else "")
        except Exception as exc:
            self.last_result = f"command stream broken: {describe(exc)}"
        if self._on_end is not None:
            self._on_end(self.last_result)
        while not self._queue.empty():  # what came after the stream ended starts a new one
            if self._queue.get_nowait() is None:
                break
