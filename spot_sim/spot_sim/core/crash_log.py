"""Exceptions no handler expected, for the tests: off unless the environment variable
``SPOT_CRASH_LOG`` names a file; then each unexpected exception that a handler of last resort
turned into a refusal or a log line is also appended there as ``<pid> <where>: <type>: <what>``.
The test harness fails the test during which a line appears, so a crash cannot pass as a
refusal. The driver has the same recorder (``spot_driver/core/crash_log.py``; the simulator imports
nothing of the driver).
"""

import os

from spot_sim.core.lock_order import INNERMOST, OrderedLock

_PATH = os.environ.get("SPOT_CRASH_LOG")
_LOCK = OrderedLock("crash log", INNERMOST)


def record(where: str, exc: BaseException) -> None:
    """Note that ``exc`` escaped to a handler of last resort in ``where``."""
    if not _PATH:
        return
    what = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:500]
    with _LOCK, open(_PATH, "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {where}: {what}\n")
