"""The driver process: one robot session shared by composed nodes in one executor.

Run as ``spot_driver --ros-args --params-file config/spot_driver.yaml -p hostname:=...``.
Credentials come from BOSDYN_CLIENT_USERNAME / BOSDYN_CLIENT_PASSWORD or the file named by
the ``credentials_file`` parameter.
"""

import logging
import sys
import time

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor

from spot_driver.commander import Commander
from spot_driver.connection import RobotConnection, RobotConnectionError
from spot_driver.credentials import CredentialsError, load_credentials
from spot_driver.errors import describe
from spot_driver.nodes.arm_node import ArmNode
from spot_driver.nodes.command_node import CommandNode
from spot_driver.nodes.diagnostics_node import DiagnosticsNode
from spot_driver.nodes.docking_node import DockingNode
from spot_driver.nodes.driver_node import DriverNode
from spot_driver.nodes.mission_node import MissionNode
from spot_driver.nodes.perception_node import PerceptionNode
from spot_driver.nodes.state_node import StateNode
from spot_driver.state_cache import RobotStateCache
from spot_driver.supervisor import ConnectionSupervisor

RETRY_SECONDS = 2.0


def _connect(driver: DriverNode) -> RobotConnection | None:
    log = driver.get_logger()
    credentials = load_credentials(driver.credentials_file, warn=log.warning)
    connection = RobotConnection(driver.connection_config, credentials)
    while rclpy.ok():
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
        time.sleep(RETRY_SECONDS)
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


def main(argv: list[str] | None = None) -> int:
    rclpy.init(args=argv)
    logging.basicConfig(level=logging.WARNING, format="[%(levelname)s] [%(name)s]: %(message)s")
    logging.getLogger("spot_driver").setLevel(logging.INFO)
    driver = None
    connection = None
    supervisor = None
    nodes = []
    try:
        driver = DriverNode()
        connection = _connect(driver)
        if connection is None:
            return 1
        namespace = driver.get_namespace()
        cache = RobotStateCache()
        supervisor = ConnectionSupervisor(connection, driver.supervisor_config, _ros_log(driver))
        commands = CommandNode(connection, cache, namespace)
        state = StateNode(connection, cache, namespace)
        perception = PerceptionNode(connection, namespace)
        nodes = [driver, state, commands, ArmNode(connection, cache, namespace), perception,
                 DockingNode(connection, cache, namespace), MissionNode(connection, namespace),
                 DiagnosticsNode(connection, supervisor, cache,
                                 (state.rate, lambda: state.published), perception.streams,
                                 namespace)]
        supervisor.start()
        _startup_actions(driver, commands.commander, connection)
        executor = MultiThreadedExecutor(num_threads=8)
        for node in nodes:
            executor.add_node(node)
        try:
            executor.spin()
        except Exception:
            if rclpy.ok():  # a shutdown by signal invalidates the context mid-spin
                raise
    except (CredentialsError, ValueError) as exc:
        if driver is not None:
            driver.get_logger().fatal(str(exc))
        else:
            print(f"spot_driver: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if supervisor is not None:
            supervisor.stop()
        if connection is not None:
            connection.shutdown()
        for node in nodes:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
