"""The driver process: one robot session shared by composed nodes in one executor.

Run as ``spot_driver --ros-args --params-file config/spot_driver.yaml -p hostname:=...``.
Credentials come from BOSDYN_CLIENT_USERNAME / BOSDYN_CLIENT_PASSWORD or the file named by
the ``credentials_file`` parameter.
"""

import faulthandler
import gc
import logging
import signal
import sys
import threading
import time

import rclpy
from bosdyn.client.robot_command import RobotCommandBuilder
from rclpy.exceptions import InvalidParameterValueException
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.signals import SignalHandlerOptions

from spot_driver import registry
from spot_driver.body.commander import Commander
from spot_driver.core.capability import EXECUTORS, DriverContext, load
from spot_driver.core.connection import RobotConnection, RobotConnectionError
from spot_driver.core.credentials import CredentialsError, load_credentials
from spot_driver.core.errors import describe
from spot_driver.core.shutdown import ShutdownRequest
from spot_driver.core.state_cache import RobotStateCache
from spot_driver.core.supervisor import ConnectionSupervisor
from spot_driver.nodes.driver_node import DriverNode

RETRY_SECONDS = 2.0
GIL_SWITCH_S = 0.001
SETTLE_S = 0.1


def _connect(driver: DriverNode, stop: ShutdownRequest) -> RobotConnection | None:
    log = driver.get_logger()
    credentials = load_credentials(driver.credentials_file, warn=log.warning)
    clients = registry.sdk_clients(registry.enabled(driver.capabilities))
    connection = RobotConnection(driver.connection_config, credentials, clients)
    while not stop.is_set():
        try:
            connection.connect()
            log.info(f"connected to robot {driver.connection_config.hostname!r}")
            return connection
        except RobotConnectionError as exc:
            log.error(str(exc))
            if "rejected the login" in str(exc) or "not found" in str(exc):
                return None
        except Exception as exc:
            log.error(f"cannot connect to the robot: {describe(exc)}")
        stop.wait(RETRY_SECONDS)
    return None


def _startup_actions(driver: DriverNode, commander: Commander, connection) -> None:
    log = driver.get_logger()
    steps = []
    if driver.auto_claim:
        steps.append(("claim", connection.claim))
    if driver.auto_claim and driver.auto_power_on:
        steps.append(("power_on", commander.power_on))
    if driver.auto_claim and driver.auto_power_on and driver.auto_stand:
        steps.append(("stand", commander.stand))
    for name, step in steps:
        try:
            log.info(f"{name}: {step()}")
        except Exception as exc:
            log.error(f"{name} at startup failed: {describe(exc)}")
            return


def _ros_log(node):
    """A ``(level, message)`` logger writing to ``node``'s ROS logger."""
    logger = node.get_logger()
    by_level = {logging.DEBUG: logger.debug, logging.INFO: logger.info,
                logging.WARNING: logger.warning, logging.ERROR: logger.error}
    return lambda level, message: by_level.get(level, logger.error)(message)


class _Spinner:
    """An executor spinning its nodes on a thread of its own."""

    def __init__(self, name: str, nodes: list, threads: int) -> None:
        self.executor = MultiThreadedExecutor(num_threads=threads)
        self._nodes = list(nodes)
        for node in nodes:
            self.executor.add_node(node)
        self._stopping = False
        self._thread = threading.Thread(target=self._spin, name=name, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            self.executor.spin()
        except ExternalShutdownException:
            pass
        except Exception:
            if not self._stopping:
                raise  # a real failure; after stop() the executor's guard is already gone

    def stop(self, timeout: float) -> None:
        """Stop spinning. The nodes leave the executor first: rclpy's shutdown destroys the
        executor's guard condition without waiting for its spin thread, and a timer that
        fires in between would get a handler holding no guard ('NoneType' has no attribute
        'trigger')."""
        self._stopping = True
        for node in self._nodes:
            self.executor.remove_node(node)
        time.sleep(SETTLE_S)  # a wait already under way returns and finds nothing to run
        self.executor.shutdown(timeout_sec=timeout)
        self._thread.join(timeout)


def _thread_name(executor: str) -> str:
    return "spot-executor" if executor == "main" else f"spot-{executor}-executor"


def _leave_robot_stopped(connection: RobotConnection, log) -> None:
    """Stop the robot when the driver holds the lease (nothing moves after the driver)."""
    if connection.has_lease:
        try:
            connection.command_client.robot_command(RobotCommandBuilder.stop_command(),
                                                    timeout=1.0)
        except Exception as exc:
            log.warning(f"could not stop the robot at shutdown: {describe(exc)}")


def _create_nodes(driver: DriverNode, context: DriverContext, nodes: list) -> dict:
    """Create the nodes of every enabled capability (appended to ``nodes`` as they are made,
    so a failure part way still shuts down those made); the nodes by executor name."""
    by_executor = {name: [] for name in EXECUTORS}
    by_executor["main"].append(driver)
    for capability in registry.enabled(driver.capabilities):
        for path in capability.nodes:
            node = load(path)(context)
            by_executor[capability.executor].append(node)
            nodes.append(node)
    return by_executor


def _shut_down(driver, nodes: list, spinners: list, supervisor, connection) -> None:
    """Shut down in order: streams, executors, supervisor, the robot stopped and the lease
    returned, nodes, ROS (each part only if it was made)."""
    for node in nodes:
        if hasattr(node, "stop_streaming"):
            node.stop_streaming()
    for spinner in spinners:
        spinner.stop(timeout=1.0)
    if supervisor is not None:
        supervisor.stop()
    if connection is not None:
        _leave_robot_stopped(connection, logging.getLogger("spot_driver"))
        connection.shutdown()
    for node in nodes:
        node.destroy_node()
    if driver is not None:
        driver.destroy_node()
    rclpy.try_shutdown()


def main(argv: list[str] | None = None) -> int:
    """Run the driver until SIGINT/SIGTERM, then shut down in order: streams, executors, the
    robot stopped, the lease returned, nodes, ROS."""
    # Threads waiting on the robot or DDS get the GIL back within 1 ms, not Python's 5 ms:
    # cmd_vel, the e-stop and the 333 Hz stream wait less behind image work.
    sys.setswitchinterval(GIL_SWITCH_S)
    # `kill -USR1 <pid>` prints every thread's stack to stderr: where a stuck driver waits.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    logging.basicConfig(level=logging.WARNING, format="[%(levelname)s] [%(name)s]: %(message)s")
    logging.getLogger("spot_driver").setLevel(logging.INFO)
    stop = ShutdownRequest(lambda name: logging.getLogger("spot_driver").info(
        f"{name} received again: already shutting down"))
    stop.install()
    driver = connection = supervisor = None
    nodes, spinners = [], []
    try:
        driver = DriverNode()
        connection = _connect(driver, stop)
        if connection is None:
            return 0 if stop.is_set() else 1
        supervisor = ConnectionSupervisor(connection, driver.supervisor_config, _ros_log(driver))
        context = DriverContext(connection, RobotStateCache(), Commander(connection), supervisor,
                                driver.get_namespace())
        by_executor = _create_nodes(driver, context, nodes)
        supervisor.start()
        _startup_actions(driver, context.commander, connection)
        spinners = [_Spinner(_thread_name(name), by_executor[name], threads)
                    for name, threads in EXECUTORS.items() if by_executor[name]]
        # Start-up's objects (modules, nodes, the SDK) leave the collector's generations, so
        # a full collection scans only what running made: a shorter pause for every stream.
        gc.freeze()
        while not stop.wait(0.5):
            pass
        driver.get_logger().info(f"{stop.signal_name or 'shutdown'}: stopping")
    except (CredentialsError, ValueError, InvalidParameterValueException) as exc:
        if driver is not None:
            driver.get_logger().fatal(str(exc))
        else:
            print(f"spot_driver: {exc}", file=sys.stderr)
        return 1
    finally:
        _shut_down(driver, nodes, spinners, supervisor, connection)
        stop.ignore_further()
    return 0


if __name__ == "__main__":
    sys.exit(main())
