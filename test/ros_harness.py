"""Test harness: the driver as a separate process against an in-process simulated Spot,
and an rclpy client node spinning in the background of the test process."""

import contextlib
import math
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections import defaultdict
from pathlib import Path

import rclpy
from bosdyn.client.math_helpers import Quat, SE3Pose
from geometry_msgs.msg import Twist
from rcl_interfaces.srv import GetParameterTypes
from rclpy.exceptions import InvalidHandle
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_srvs.srv import Trigger

from conftest import PASSWORD, USERNAME, running_sim, wait_for
from spot_driver.core.action_client import ActionClient
from spot_sim.body.mobility import Se2

REPO = Path(__file__).resolve().parent.parent
DRIVER_PKG = REPO / "spot_driver"  # the spot_driver package's folder
CONFIG = DRIVER_PKG / "config" / "spot_driver.yaml"
DISCOVERY_SETTLE_S = 0.5  # a new client's wait when its server offers no parameter service
DISCOVERY_PROBE_S = 1.0  # a discovery probe is resent this often until answered
DISCOVERY_SLOW_S = 5.0  # discovery slower than this is reported
MATCH_SETTLE_S = 0.3  # after a publisher matched a reader, for the reader to match it back
NOT_CONNECTED = "robot not connected"  # how the driver's refusals start while it reconnects


_STARTED: list = []  # every DriverProcess, SimProcess and RosClient this process started


def stop_leftovers() -> int:
    """Stop every driver and simulator process still running and close every ROS client (a
    fixture whose setup failed never reaches its own cleanup: its driver would answer the next
    module's calls on the same ROS domain, its client's thread would abort the interpreter at
    exit). Returns how many were stopped."""
    stopped = 0
    while _STARTED:
        started = _STARTED.pop()
        if isinstance(started, RosClient):
            stopped += not started.closed
            started.close()
            continue
        process = started.process
        if process is not None and process.poll() is None:
            started.stop() if isinstance(started, DriverProcess) else started.kill()
            stopped += 1
    return stopped


@contextlib.contextmanager
def driver_world(tmp_path_factory, client: str, sim: dict | None = None,
                 params: dict | None = None, subscriptions: tuple = (),
                 first: str | None = None, until=None, ready: tuple[str, ...] = (),
                 timeout: float = 30.0):
    """A module's world: one simulated robot (``sim``: SimConfig fields), one driver process
    (``params``) and one RosClient named ``client``, subscribed before the driver starts to
    each ``(topic, type[, subscribe's options])`` of ``subscriptions``. It waits for a first
    message on ``first`` and for ``until(sim, driver, ros)`` to hold, then calls the Trigger
    services ``ready`` (e.g. claim, power_on, stand) and yields ``(sim, driver, ros)``; the
    client and the driver stop afterwards, however the module or its setup ended."""
    with running_sim(tmp_path_factory.mktemp("certs"), **(sim or {})) as robot:
        ros = RosClient(client)
        driver = None
        try:
            for topic, msg_type, *options in subscriptions:
                ros.subscribe(topic, msg_type, **(options[0] if options else {}))
            driver = DriverProcess(robot, tmp_path_factory.mktemp("logs") / "driver.log",
                                   USERNAME, PASSWORD, params=params)
            if first is not None:
                assert ros.wait_for(lambda: ros.received(first), timeout), \
                    driver.output()[-3000:]
            if until is not None:
                assert ros.wait_for(lambda: until(robot, driver, ros), timeout), \
                    driver.output()[-3000:]
            ros.ready(ready)
            yield robot, driver, ros
        finally:
            ros.close()
            if driver is not None:
                driver.stop()


class DriverProcess:
    """``python -m spot_driver`` connected to ``sim``, its output captured in a file."""

    def __init__(self, sim, log_path: Path, username: str, password: str,
                 params: dict | None = None, env: dict | None = None,
                 namespace: str = "", module: str = "spot_driver") -> None:
        """``module``: ``spot_driver.low_level`` for the joint-control streams' process."""
        args = [sys.executable, "-m", module, "--ros-args", "--params-file", str(CONFIG),
                "-p", "hostname:=127.0.0.1", "-p", f"port:={sim.port}",
                "-p", f"certificate:={sim.ca_cert}", "-p", "estop_endpoint:=true"]
        for key, value in (params or {}).items():
            args += ["-p", f"{key}:={value}"]
        if namespace:
            args += ["-r", f"__ns:={namespace}"]
        merged = dict(os.environ, BOSDYN_CLIENT_USERNAME=username,
                      BOSDYN_CLIENT_PASSWORD=password, PYTHONUNBUFFERED="1")
        merged.update(env or {})
        env = {k: v for k, v in merged.items() if v is not None}  # None: unset
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.process = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT,
                                        env=env, cwd=REPO)
        self.started = time.monotonic()
        _STARTED.append(self)

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def stacks(self) -> str:
        """The driver's output after it printed every thread's stack (SIGUSR1)."""
        if self.process.poll() is None:
            before = self.output().count("Thread 0x")
            self.process.send_signal(signal.SIGUSR1)
            deadline = time.monotonic() + 5.0
            while self.output().count("Thread 0x") == before and time.monotonic() < deadline:
                time.sleep(0.1)
        return self.output()

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self._log.closed:
            self._log.close()
        return self.process.returncode


class RosClient:
    """An rclpy node spun in a background thread, with helpers that wait for results."""

    def __init__(self, name: str = "test_client") -> None:
        if not rclpy.ok():
            rclpy.init()
        self.node = rclpy.create_node(name)
        self.closed = False
        _STARTED.append(self)
        self._executor = SingleThreadedExecutor()
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, name="ros-client-spin", daemon=True)
        self._thread.start()
        self.messages: dict[str, list] = defaultdict(list)
        self._lock = threading.Lock()
        self._action_clients: dict = {}
        self._service_clients: dict = {}

    def _spin(self) -> None:
        """Spin until closed. A test thread that destroys a publisher or client while this
        thread builds its wait set makes rclpy raise InvalidHandle here (the node drops the
        entity's waitables, then destroys them); the next wait no longer has it. Without the
        retry this thread died and every later call of the module waited for nobody."""
        while not self.closed:
            try:
                self._executor.spin()
                return
            except InvalidHandle:
                continue
            except AttributeError:
                if self.closed:  # rclpy's shutdown dropped the executor's guard under us
                    return
                raise

    def subscribe(self, topic: str, msg_type, reliable: bool = True, latched: bool = False):
        qos = QoSProfile(depth=50,
                         reliability=ReliabilityPolicy.RELIABLE if reliable
                         else ReliabilityPolicy.BEST_EFFORT,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL if latched
                         else DurabilityPolicy.VOLATILE)

        def callback(msg, topic=topic):
            with self._lock:
                self.messages[topic].append((time.monotonic(), msg))

        return self.node.create_subscription(msg_type, topic, callback, qos)

    def publisher(self, msg_type, topic: str, qos=10, timeout: float = 10.0):
        """A publisher on ``topic`` that has matched a subscriber (the driver's) before it is
        returned, then a short settle for the subscriber to learn of it in turn: a message
        published earlier may reach nobody, and a test asserting "nothing happened" would
        pass for the wrong reason. The only way tests make publishers (test_suite_lint_units)."""
        publisher = self.node.create_publisher(msg_type, topic, qos)
        assert self.wait_for(lambda: publisher.get_subscription_count() > 0, timeout), \
            f"{topic}: no subscriber matched in {timeout} s"
        time.sleep(MATCH_SETTLE_S)  # sleep: the reader's side of the match has no query
        return publisher

    def received(self, topic: str) -> list:
        with self._lock:
            return [m for _, m in self.messages[topic]]

    def latest(self, topic: str):
        with self._lock:
            return self.messages[topic][-1][1] if self.messages[topic] else None

    def next_messages(self, topic: str, count: int, timeout: float = 10.0) -> list:
        """The next ``count`` messages on ``topic`` (received after this call); fails the
        test if they do not come within ``timeout`` s."""
        since = time.monotonic()

        def fresh() -> list:
            with self._lock:
                return [m for t, m in self.messages[topic] if t > since]

        assert self.wait_for(lambda: len(fresh()) >= count, timeout), \
            f"{topic}: {len(fresh())} of {count} messages in {timeout} s"
        return fresh()[:count]

    def wait_for(self, predicate, timeout: float = 5.0, period: float = 0.02) -> bool:
        """``conftest.wait_for``, for tests that hold a client."""
        return wait_for(predicate, timeout, period)

    def call(self, srv_type, name: str, request=None, timeout: float = 30.0):
        """The answer of service ``name``; ``timeout`` bounds both the wait for the service
        to appear (a driver still starting) and the wait for its answer."""
        client = self.service_client(srv_type, name, max(timeout, 10.0))
        future = client.call_async(request or srv_type.Request())
        assert self.wait_for(future.done, timeout), f"service {name} timed out"
        return future.result()

    def ready(self, names, namespace: str = "", timeout: float = 30.0) -> None:
        """Calls each Trigger service of ``names`` (claim, power_on, stand, ...) in order, as a
        test's setup. A refusal because the robot is not connected (a driver reconnecting
        after a heartbeat a loaded machine answered late) is asked again, as a user would,
        until ``timeout``; any other refusal fails at once."""
        for name in names:
            answers = []

            def final(name=name, answers=answers) -> bool:
                answers.append(self.call(Trigger, f"{namespace}/{name}"))
                return answers[-1].success or not answers[-1].message.startswith(NOT_CONNECTED)

            self.wait_for(final, timeout, period=0.5)  # period: the reconnection backoff
            assert answers[-1].success, (name, answers[-1].message)

    def service_client(self, srv_type, name: str, timeout: float = 10.0):
        """A client of service ``name``, made once and kept; the first time, not returned
        before the server's process has discovered it (see ``_known_to_server``), and an
        error when the service has not appeared within ``timeout``."""
        key = (srv_type, name)
        with self._lock:
            client = self._service_clients.get(key)
        if client is not None:
            return client
        client = self.node.create_client(srv_type, name)
        if not client.wait_for_service(timeout_sec=timeout):
            self.node.destroy_client(client)
            raise AssertionError(f"service {name} not available")
        self._known_to_server(name)
        with self._lock:
            kept = self._service_clients.setdefault(key, client)
        if kept is not client:  # another thread made one meanwhile
            self.node.destroy_client(client)
        return kept

    def action_client(self, action_type, name: str) -> ActionClient:
        """A client of action ``name``, made once and kept; the first time, not returned
        before the server's process has discovered it (see ``_known_to_server``)."""
        client = self._action_clients.get((action_type, name))
        if client is None:
            client = ActionClient(self.node, action_type, name)
            assert client.wait_for_server(timeout_sec=10.0), f"action {name} not available"
            self._known_to_server(f"{name}/_action/cancel_goal")
            self._action_clients[(action_type, name)] = client
        return client

    def _known_to_server(self, service: str, timeout: float = 45.0) -> None:
        """Wait until the process serving ``service`` has discovered this node's endpoints
        made so far. A server drops a response while its process has not yet discovered the
        client's reply reader (ros2/ros2#1253); waiting a fixed time lost responses under
        load. A process announces its endpoints in order on reliable channels, so once a
        probe client made after them is answered, the server has matched the earlier ones.
        The probe asks the serving node's parameter service for no types (harmless, so it
        is resent until answered); a node without one gets DISCOVERY_SETTLE_S. Discovery
        slower than DISCOVERY_SLOW_S (two CI runs saw one past 15 s) is a warning in the
        run's summary; past ``timeout`` the test fails."""
        probe_name = self._parameter_service_of(service)
        if probe_name is None:
            time.sleep(DISCOVERY_SETTLE_S)  # sleep: nothing to probe (see the constant)
            return
        probe = self.node.create_client(GetParameterTypes, probe_name)
        try:
            assert probe.wait_for_service(timeout_sec=10.0), f"{probe_name} not available"
            began = time.monotonic()
            sent = []
            while (waited := time.monotonic() - began) < timeout:
                sent.append(probe.call_async(GetParameterTypes.Request()))
                if self.wait_for(lambda: any(f.done() for f in sent), DISCOVERY_PROBE_S):
                    if waited > DISCOVERY_SLOW_S:
                        warnings.warn(f"{service}: its server discovered this client "
                                      f"after {waited:.1f} s", stacklevel=2)
                    return
            raise AssertionError(f"{service}: its server did not discover this client in "
                                 f"{timeout} s ({len(sent)} probes; this client's spin thread "
                                 f"{'alive' if self._thread.is_alive() else 'dead'})")
        finally:
            self.node.destroy_client(probe)

    def _parameter_service_of(self, service: str) -> str | None:
        """``<node>/get_parameter_types`` of the node offering ``service``, if it has one."""
        wanted = service if service.startswith("/") else "/" + service
        for node, namespace in self.node.get_node_names_and_namespaces():
            served = {n for n, _ in self.node.get_service_names_and_types_by_node(node,
                                                                                   namespace)}
            if wanted in served:
                fqn = namespace.rstrip("/") + "/" + node
                probe = fqn + "/get_parameter_types"
                return probe if probe in served else None
        return None

    def run_action(self, action_type, name: str, goal, timeout: float = 60.0, feedback=None,
                   cancel_when=None):
        """Send ``goal`` to the action ``name`` and return its result (the goal must be
        accepted); each feedback message's ``feedback`` is appended to ``feedback`` if given;
        with ``cancel_when``, the goal is canceled once the newest feedback satisfies it."""
        client = self.action_client(action_type, name)
        handle = self.wait_future(client.send_goal_async(
            goal, feedback_callback=(lambda msg: feedback.append(msg.feedback))
            if feedback is not None else None))
        assert handle.accepted
        if cancel_when is not None:
            assert self.wait_for(lambda: feedback and cancel_when(feedback[-1]), timeout=30)
            self.wait_future(handle.cancel_goal_async())
        return self.wait_future(handle.get_result_async(), timeout=timeout).result

    def wait_future(self, future, timeout: float = 30.0):
        assert self.wait_for(future.done, timeout), "future timed out"
        return future.result()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        # As the driver's executors stop (spot_driver/main.py): the node leaves first, so the
        # spin thread's next wait no longer holds the entities destroyed below.
        self._executor.remove_node(self.node)
        time.sleep(0.05)  # sleep: one pass of the spin thread's wait (no event to wait on)
        self._executor.shutdown()
        self._thread.join(5.0)
        self.node.destroy_node()


def tf_pose(transform) -> SE3Pose:
    t, q = transform.translation, transform.rotation
    return SE3Pose(t.x, t.y, t.z, Quat(q.w, q.x, q.y, q.z))


def odom_tform(ros: RosClient, frame: str) -> SE3Pose:
    """odom_T_frame composed from the driver's /tf and /tf_static (subscribed by ``ros``), as
    tf2 would."""
    parents = {}
    for msg in ros.received("/tf_static") + ros.received("/tf")[-20:]:
        for t in msg.transforms:
            parents[t.child_frame_id] = (t.header.frame_id, tf_pose(t.transform))
    pose = SE3Pose(0, 0, 0, Quat())
    while frame != "odom":
        parent, parent_tform_frame = parents[frame]
        pose = parent_tform_frame * pose
        frame = parent
    return pose


class SimProcess:
    """``python -m spot_sim`` as its own process, so tests can freeze (SIGSTOP), kill and
    restart the robot as a real one would behave. A restart keeps the port and certificates."""

    def __init__(self, certs_dir: Path, log_path: Path, username: str, password: str,
                 args: tuple[str, ...] = ()) -> None:
        self.certs_dir = Path(certs_dir)
        self.ca_cert = self.certs_dir / "ca.crt"
        self.port = 0
        self._log_path = log_path
        self._args = list(args)
        self._env = dict(os.environ, SPOT_SIM_USERNAME=username, SPOT_SIM_PASSWORD=password,
                         PYTHONUNBUFFERED="1")
        self.process: subprocess.Popen | None = None
        self.start()
        _STARTED.append(self)

    def start(self) -> None:
        """Start the robot (on the port of the previous start, if any) and wait until it
        listens."""
        log = open(self._log_path, "a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "spot_sim", "--port", str(self.port),
             "--certs-dir", str(self.certs_dir),
             "--profile", os.environ.get("SPOT_SIM_PROFILE", "default"), *self._args],
            stdout=subprocess.PIPE, stderr=log, env=self._env, cwd=REPO, text=True)
        log.close()
        line = self.process.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError(f"spot_sim did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1])

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self) -> None:
        """SIGKILL then start again on the same port with the same certificates (a reboot
        of the robot computer)."""
        self.kill()
        self.start()

    def freeze(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()


# A command prefix that gives Ctrl-C its default disposition, then runs the command: a test
# process started in the background ignores SIGINT, and its children inherit that. (Not
# preexec_fn: a fork in a process that runs gRPC aborts the child.)
DEFAULT_SIGINT = (sys.executable, "-c", "import os, signal, sys; "
                  "signal.signal(signal.SIGINT, signal.SIG_DFL); "
                  "os.execvp(sys.argv[1], sys.argv[1:])")


class LaunchProcess:
    """``ros2 launch ...`` as a service or script starts it: no terminal, its own process group,
    SIGINT at its default disposition. Output captured in a file."""

    def __init__(self, args: list[str], log_path: Path, env: dict | None = None,
                 wrapper: list[str] = ()) -> None:
        """``wrapper``: a command that runs the launch (``ip netns exec NS``)."""
        self.log_path = log_path
        self._log = open(log_path, "w")
        merged = dict(os.environ, PYTHONUNBUFFERED="1")
        merged.update(env or {})
        self.process = subprocess.Popen(
            [*wrapper, *DEFAULT_SIGINT, "ros2", "launch", *args], stdin=subprocess.DEVNULL,
            stdout=self._log, stderr=subprocess.STDOUT, env=merged, cwd=REPO,
            start_new_session=True)

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text()

    def signal_group(self, sig: int = signal.SIGINT) -> None:
        """What systemd's KillSignal=SIGINT or Ctrl-C in a terminal does: the whole group."""
        os.killpg(self.process.pid, sig)

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.signal_group()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log.close()
        return self.process.returncode


def ros2(*args: str, timeout: float = 30.0) -> subprocess.CompletedProcess:
    """A ``ros2`` CLI command as a user types it; output as text."""
    return subprocess.run(["ros2", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, cwd=REPO)


def ros2_call(service: str, srv_type: str, request: str = "",
              timeout: float = 15.0) -> subprocess.CompletedProcess:
    """``ros2 service call``, once: on loopback an answer that does not come is a defect to
    see, never retried away (the timeout propagates)."""
    args = ["service", "call", service, srv_type, *([request] if request else [])]
    return ros2(*args, timeout=timeout)


def burst(ros: RosClient, srv_type, service: str, count: int, timeout: float,
          request=None) -> tuple[list, float]:
    """``count`` callers, each with its own client, call ``service`` at once; returns the
    responses (None: never answered) and the time until the last answer.

    Each client's response queue is as deep as the burst: every client of a service receives
    every response of the burst and keeps only its own (see the README, "Concurrent calls")."""
    clients = [ros.node.create_client(srv_type, service, qos_profile=QoSProfile(depth=count))
               for _ in range(count)]
    try:
        for client in clients:
            assert client.wait_for_service(timeout_sec=10.0), service
        ros._known_to_server(service)  # its server has matched every reply reader (#1253)
        started = time.monotonic()
        futures = [client.call_async(request or srv_type.Request()) for client in clients]
        ros.wait_for(lambda: all(f.done() for f in futures), timeout)
        elapsed = time.monotonic() - started
        return [f.result() if f.done() else None for f in futures], elapsed
    finally:
        for client in clients:
            ros.node.destroy_client(client)


def drive(ros, robot, vx: float = 0.0, distance: float = 0.0,
          topic: str = "/cmd_vel") -> None:
    """cmd_vel at 20 Hz until the robot has gone ``distance`` m (as a user steers with a
    joystick, watching the robot), then wait until it stands still."""
    publisher = ros.publisher(Twist, topic, 10)
    twist = Twist()
    twist.linear.x = vx
    start = robot.odom_body()
    deadline = time.monotonic() + 30.0
    gone = 0.0
    while time.monotonic() < deadline:
        now = robot.odom_body()
        gone = math.hypot(now.x - start.x, now.y - start.y)
        if gone >= distance - 0.02:
            break
        publisher.publish(twist)
        time.sleep(0.05)
    publisher.publish(Twist())
    ros.node.destroy_publisher(publisher)
    assert gone >= distance - 0.02, f"went {gone:.2f} of {distance:.2f} m: {body_report(robot)}"
    assert ros.wait_for(lambda: robot.velocity() == Se2(), timeout=5.0), "still moving"


def turn_to(ros, robot, heading: float, tolerance: float = 0.03,
            topic: str = "/cmd_vel") -> None:
    """Turn in place to ``heading`` (odom yaw) as a user with a joystick does: steer, let go,
    look, correct. However late the commands land, the robot ends up facing the heading."""
    publisher = ros.publisher(Twist, topic, 10)
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        error = math.remainder(heading - robot.odom_body().yaw, 2 * math.pi)
        if abs(error) < tolerance:
            publisher.publish(Twist())
            if ros.wait_for(lambda: robot.velocity() == Se2(), timeout=5.0) and abs(
                    math.remainder(heading - robot.odom_body().yaw, 2 * math.pi)) < tolerance:
                break
            continue
        twist = Twist()
        twist.angular.z = max(-0.8, min(0.8, 2.0 * error))
        publisher.publish(twist)
        time.sleep(0.05)
    ros.node.destroy_publisher(publisher)
    assert abs(math.remainder(heading - robot.odom_body().yaw, 2 * math.pi)) < tolerance, \
        f"did not reach the heading {heading:.3f}: {body_report(robot)}"


def body_report(robot) -> str:
    """What a failed drive prints: the simulated robot's yaw, power and e-stop endpoints."""
    return (f"yaw {robot.odom_body().yaw:.3f}, powered {robot.powered}, e-stop endpoints "
            f"(name, level, s since a valid check-in) {robot.estop.report()}")
