"""What every example needs from the driver, in plain rclpy: one node spinning in the
background, the driver's Trigger services (claim, power_on, stand, sit ...), its actions, and
the next message of a topic. Names are relative to the robot's namespace (``--robot``)."""

import argparse
import math
import threading
import time

import rclpy
from rcl_interfaces.srv import GetParameterTypes
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.qos import QoSProfile
from rclpy.signals import SignalHandlerOptions
from std_srvs.srv import Trigger

from spot_driver.core.action_client import ActionClient


class SpotError(RuntimeError):
    """The driver refused or did not answer; the message says which and why."""


def arguments(description: str) -> argparse.ArgumentParser:
    """A command line with ``--robot``, the driver's namespace (spot_ros2's ``--robot``)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--robot", default="", help="the driver's namespace, if it has one")
    return parser


class Spot:
    """A client of one driver. Make every client first, then call ``connect()``."""

    def __init__(self, node_name: str, robot: str = "") -> None:
        if not rclpy.ok():  # Ctrl-C is the program's (KeyboardInterrupt), so its cleanup can
            rclpy.init(signal_handler_options=SignalHandlerOptions.NO)  # still call the driver
        self.node = rclpy.create_node(node_name)
        self.namespace = "/" + robot.strip("/") if robot.strip("/") else ""
        self._clients: dict[str, object] = {}
        self._subscriptions: dict[str, object] = {}
        self._received: dict[str, tuple[int, object]] = {}  # topic -> (count, latest)
        self._lock = threading.Lock()
        self._closing = False
        self._executor = SingleThreadedExecutor()  # callbacks only store; calls wait here
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def name(self, relative: str) -> str:
        """``relative`` in the robot's namespace: ``claim`` -> ``/spot1/claim``."""
        return f"{self.namespace}/{relative}"

    def connect(self, services: tuple[str, ...] = ("claim", "power_on", "stand", "sit"),
                timeout: float = 30.0) -> None:
        """Make the Trigger clients of ``services``, wait for the driver, then wait until the
        driver has discovered this program: a server drops its answer to a client it has not
        discovered yet (ros2/ros2#1253), so the driver's parameter service is asked (harmless)
        until it answers. Clients made before this call are then known to the driver too."""
        for service in services:
            self._client(Trigger, service)
        probe = self.node.create_client(GetParameterTypes,
                                        self.name("spot_driver/get_parameter_types"))
        deadline = time.monotonic() + timeout
        if not probe.wait_for_service(timeout_sec=timeout):
            raise SpotError(f"no driver at {self.name('spot_driver')}: is it running?")
        while time.monotonic() < deadline:
            future = probe.call_async(GetParameterTypes.Request())
            if _wait(future, 1.0):
                return
        raise SpotError("the driver did not discover this program in time")

    def trigger(self, service: str, timeout: float = 30.0) -> str:
        """Call the Trigger service ``service``; its message, or SpotError with the driver's
        reason (no lease, not powered, e-stopped ...)."""
        future = self._client(Trigger, service).call_async(Trigger.Request())
        if not _wait(future, timeout):
            raise SpotError(f"{service}: no answer in {timeout} s")
        response = future.result()
        if not response.success:
            raise SpotError(f"{service}: {response.message}")
        return response.message

    def ready(self) -> None:
        """Claim the lease, power the motors on and stand, as every example starts."""
        for service in ("claim", "power_on", "stand"):
            print(f"{service}: {self.trigger(service)}")

    def call(self, srv_type, service: str, request, timeout: float = 30.0):
        """Call any service; its response (check its own success field)."""
        future = self._client(srv_type, service).call_async(request)
        if not _wait(future, timeout):
            raise SpotError(f"{service}: no answer in {timeout} s")
        return future.result()

    def action_client(self, action_type, action: str) -> ActionClient:
        """The client of action ``action`` (made once; make it before ``connect()``)."""
        key = self.name(action)
        if key not in self._clients:
            self._clients[key] = ActionClient(self.node, action_type, key)
        return self._clients[key]

    def act(self, action_type, action: str, goal, timeout: float = 60.0, feedback=None):
        """Send ``goal`` to the action ``action`` and wait for its result; SpotError when the
        goal is refused, fails (the result's message) or takes longer than ``timeout``."""
        client = self.action_client(action_type, action)
        if not client.wait_for_server(timeout_sec=10.0):
            raise SpotError(f"{action}: no action server")
        sent = client.send_goal_async(goal, feedback_callback=feedback)
        if not _wait(sent, 10.0) or not sent.result().accepted:
            raise SpotError(f"{action}: goal not accepted")
        result = sent.result().get_result_async()
        if not _wait(result, timeout):
            sent.result().cancel_goal_async()
            raise SpotError(f"{action}: no result in {timeout} s (cancelled)")
        outcome = result.result().result
        if hasattr(outcome, "success") and not outcome.success:
            raise SpotError(f"{action}: {getattr(outcome, 'message', 'failed')}")
        return outcome

    def next_message(self, msg_type, topic: str, timeout: float = 10.0,
                     qos: QoSProfile | int = 10):
        """The next message on ``topic`` (relative to the robot's namespace) after this call.
        The subscription is made on the first call and kept (destroying entities while an
        executor waits on them can break rclpy's executor)."""
        key = self.name(topic)
        with self._lock:
            if key not in self._subscriptions:
                self._subscriptions[key] = self.node.create_subscription(
                    msg_type, key, lambda msg, key=key: self._keep(key, msg), qos)
            seen = self._received.get(key, (0, None))[0]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                count, msg = self._received.get(key, (0, None))
            if count > seen:
                return msg
            time.sleep(0.01)
        raise SpotError(f"{topic}: no message in {timeout} s")

    def _keep(self, key: str, msg) -> None:
        with self._lock:
            count = self._received.get(key, (0, None))[0]
            self._received[key] = (count + 1, msg)

    def close(self) -> None:
        """Stop spinning, then destroy the node and shut ROS down, in that order (a node
        destroyed under a spinning executor can abort the process)."""
        self._closing = True
        self._executor.remove_node(self.node)
        time.sleep(0.05)  # a wait under way returns and finds the node gone
        self._executor.shutdown(timeout_sec=2.0)
        self._thread.join(2.0)
        self.node.destroy_node()
        rclpy.try_shutdown()

    def _client(self, srv_type, service: str):
        key = self.name(service)
        if key not in self._clients:
            self._clients[key] = self.node.create_client(srv_type, key)
        client = self._clients[key]
        if not client.wait_for_service(timeout_sec=10.0):
            raise SpotError(f"{service}: no such service (is the driver running?)")
        return client

    def _spin(self) -> None:
        try:
            self._executor.spin()
        except ExternalShutdownException:
            pass
        except Exception:
            if not self._closing:  # rclpy's shutdown can fail a wait under way; only then
                raise


def yaw(q) -> float:
    """The heading (rad, about z) of a geometry_msgs Quaternion."""
    return math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))


def _wait(future, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.01)
    return future.done()
