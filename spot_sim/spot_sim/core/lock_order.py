"""The simulator's lock order, enforced. Every lock in the simulator is an ``OrderedLock`` with
a rank (``test_body_doors_units`` holds it so), outermost first:

- ``MISSION``: the mission runner, whose nodes call every other service;
- ``STEP``: the robot's physics step, whose hooks step the domains;
- ``DOMAIN``: a capability that drives the robot (GraphNav, choreography, auto-return);
- ``ROBOT``: the robot's parts;
- ``SERVICE``: a service's own state that asks a leaf under its lock (keepalive -> leases);
- ``LEAF``: state that takes no other lock but the innermost (e-stop, leases, caches, ...);
- ``INNERMOST``: the clock, taken inside any other. (``spot_common``'s crash and stage
  recorders, shared with the driver, hold a plain lock of their own that takes none.)

Each ``OrderedLock`` has a rank; a thread holding locks may take a lock of a higher rank, or
one it already holds again (re-entrant), and taking any other raises ``LockOrderError`` before
waiting, so a wrong order fails the first time it runs instead of deadlocking one day.
"""

import threading

MISSION, STEP, DOMAIN, ROBOT, SERVICE, LEAF, INNERMOST = 5, 7, 10, 20, 25, 30, 40

_held = threading.local()


class LockOrderError(RuntimeError):
    """A lock taken out of order (the sentence names both locks)."""


class OrderedLock:
    """A re-entrant lock with a name and a rank (one of the ranks above)."""

    def __init__(self, name: str, rank: int) -> None:
        self.name, self.rank = name, rank
        self._lock = threading.RLock()

    def __enter__(self) -> "OrderedLock":
        held = _stack()
        if held and self not in held:
            inner = max(held, key=lambda lock: lock.rank)
            if inner.rank >= self.rank:
                raise LockOrderError(f"lock order: {self.name} taken while holding "
                                     f"{inner.name} (take {self.name} first)")
        self._lock.acquire()
        held.append(self)
        return self

    def __exit__(self, *_exc) -> None:
        held = _stack()
        del held[len(held) - 1 - held[::-1].index(self)]  # the innermost hold of this lock
        self._lock.release()


def _stack() -> list[OrderedLock]:
    """The ordered locks this thread holds, in the order taken."""
    if not hasattr(_held, "stack"):
        _held.stack = []
    return _held.stack
