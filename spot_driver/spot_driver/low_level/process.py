"""The ``spot_low_level`` process: the joint-control API's streams beside the driver.

It has its own robot session (login and time sync with the driver's credentials; no lease,
no e-stop endpoint: joint mode is entered through the driver's ``low_level/activate``) so
that the 333 Hz path never waits for the GIL behind the driver's camera work.
"""

import faulthandler
import gc
import signal
import sys
import threading

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

from spot_driver.core.credentials import CredentialsError
from spot_driver.core.shutdown import ShutdownRequest
from spot_driver.low_level.node import LowLevelNode

GIL_SWITCH_S = 0.001


def main(argv: list[str] | None = None) -> int:
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1`: every stack
    sys.setswitchinterval(GIL_SWITCH_S)  # the stream thread waits at most ~1 ms for the GIL
    # SIGINT/SIGTERM stop the streams before the ROS context goes: with rclpy's own handler
    # the context was shut down under the stream thread, which then published into it
    stop = ShutdownRequest()
    stop.install()
    rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
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
    spinners = [threading.Thread(target=_spin, args=(e,), name=name, daemon=True)
                for e, name in ((executor, "spot-low-level"), (intake, "spot-low-level-intake"))]
    for thread in spinners:
        thread.start()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for e in (intake, executor):
            e.shutdown(timeout_sec=1.0)
        for thread in spinners:
            thread.join(1.0)
        node.destroy_node()  # the streams end here, while the context is still valid
        rclpy.try_shutdown()
        stop.ignore_further()
    return 0


def _spin(executor: SingleThreadedExecutor) -> None:
    try:
        executor.spin()
    except ExternalShutdownException:
        pass
