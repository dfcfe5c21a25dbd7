"""Exceptions no handler expected: defects of the driver or of the simulated robot. Each one a
handler of last resort turned into an "internal error" refusal or a log line (the handler logs
it) is counted (``count()``, which the driver's /diagnostics reports); where the environment
variable ``SPOT_CRASH_LOG`` names a file, it is also appended there as ``<pid> <where>:
<type>: <what>``. The test harness fails the test during which a line appears, so a crash
cannot pass as a refusal. The lock is taken inside any other and takes none.
"""

import os
import threading

_PATH = os.environ.get("SPOT_CRASH_LOG")
_LOCK = threading.Lock()
_counted = {"crashes": 0, "last": ""}


def record(where: str, exc: BaseException) -> None:
    """Note that ``exc`` escaped to a handler of last resort in ``where``."""
    what = f"{type(exc).__name__}: {exc}".replace("\n", " ")[:500]
    with _LOCK:
        _counted["crashes"] += 1
        _counted["last"] = f"{where}: {what}"
        if _PATH:
            with open(_PATH, "a", encoding="utf-8") as log:
                log.write(f"{os.getpid()} {where}: {what}\n")


def count() -> tuple[int, str]:
    """How many internal errors this process has met, and the last one."""
    with _LOCK:
        return _counted["crashes"], _counted["last"]
