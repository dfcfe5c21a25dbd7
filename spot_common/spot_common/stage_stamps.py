"""Stage stamps of a command's way through the driver and the simulated robot, for the teleop
latency benchmark.

Off unless the environment variable ``SPOT_STAGE_STAMPS`` names a folder; then each process
that calls ``stamp`` writes ``<stage> <CLOCK_MONOTONIC ns> <value>`` lines to a file of its own
there. CLOCK_MONOTONIC is one clock for every process on the machine (network namespaces
included), so stamps of the operator, the driver and the simulated robot line up
(``benchmarks/operator_link.py`` joins them). The lock is taken inside any other and takes none.
"""

import os
import threading
import time

_FOLDER = os.environ.get("SPOT_STAGE_STAMPS")
ENABLED = bool(_FOLDER)  # callers skip computing a value when off (hot paths)
_LOCK = threading.Lock()
_FILES: list = []


def stamp(stage: str, value: float) -> None:
    """Record that ``stage`` happened now, with the command or state ``value`` it carried."""
    if not _FOLDER:
        return
    line = f"{stage} {time.monotonic_ns()} {value:.5f}\n"
    with _LOCK:
        if not _FILES:
            os.makedirs(_FOLDER, exist_ok=True)
            _FILES.append(open(os.path.join(_FOLDER, f"{os.getpid()}.stamps"), "a",
                               buffering=1, encoding="ascii"))
        _FILES[0].write(line)
