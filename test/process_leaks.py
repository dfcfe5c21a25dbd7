"""Processes a test session started and left running: found by a mark every child inherits in
its environment, however it was started (a driver, ``ros2 launch`` and the nodes it spawned, an
SDK program, a tool's daemon), and wherever it was reparented to."""

import os
import signal
import time
from pathlib import Path

MARK = "SPOT_TEST_SESSION"


def mark_session() -> str:
    """Marks this process's environment, so that every process it starts from now on carries
    the mark; returns it."""
    value = f"{os.getpid()}.{time.time_ns()}"
    os.environ[MARK] = value
    return value


def survivors(value: str) -> dict[int, str]:
    """Every live process but this one whose environment carries ``value``: pid -> its
    command line."""
    needle = f"{MARK}={value}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue  # exited, waiting to be reaped by a parent still running
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found[int(entry.name)] = command.strip()
    return found


def end_leaks(value: str, grace_s: float = 10.0) -> dict[int, str]:
    """Waits up to ``grace_s`` for the session's processes to end on their own (a render worker
    sees its simulator's pipe close), then kills the rest; returns those it killed."""
    deadline = time.monotonic() + grace_s
    while (left := survivors(value)) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left
