"""The ``spot_low_level`` process: the joint-control API's streams beside the driver.

It has its own robot session (login and time sync with the driver's credentials; no lease,
no e-stop endpoint: joint mode is entered through the driver's ``low_level/activate``) so
that the 333 Hz path never waits for the GIL behind the driver's camera work.
"""

import gc
import sys
import threading

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from spot_driver.credentials import CredentialsError
from spot_driver.low_level.node import LowLevelNode

GIL_SWITCH_S = 0.001


def main(argv: list[str] | None = None) -> int:
    sys.setswitchinterval(GIL_SWITCH_S)  # the stream thread waits at most ~1 ms for the GIL
    rclpy.init(args=argv)
    try:
        node = LowLevelNode()
    except (CredentialsError, ValueError) as exc:
        print(f"spot_low_level: {exc}", file=sys.stderr)
        rclpy.try_shutdown()
        return 2
    gc.freeze()  # start-up objects leave the collector's generations: shorter pauses
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    intake = SingleThreadedExecutor()  # joint commands only (LowLevelNode.intake)
    intake.add_node(node.intake)
    commands = threading.Thread(target=_spin, args=(intake,), name="spot-low-level-intake",
                                daemon=True)
    commands.start()
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        intake.shutdown(timeout_sec=1.0)
        commands.join(1.0)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def _spin(executor: SingleThreadedExecutor) -> None:
    try:
        executor.spin()
    except ExternalShutdownException:
        pass
