"""The simulator's lock order (``spot_sim/core/lock_order.py``): every lock in the simulator
is an ``OrderedLock`` with a rank, read from the code's structure (a plain lock planted in any
of the ways Python makes one is caught), and a lock taken out of rank order is refused when it
is taken, before it waits, in the simulator's real nesting (mission, step, domain, robot,
service, leaf, innermost)."""

import ast
from pathlib import Path

import pytest

from spot_sim.body.base import Base
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import RobotClock
from spot_sim.core.config import SimConfig
from spot_sim.core.lease_manager import LeaseManager
from spot_sim.core.lock_order import (
    DOMAIN,
    INNERMOST,
    LEAF,
    MISSION,
    ROBOT,
    SERVICE,
    STEP,
    LockOrderError,
    OrderedLock,
)

SIM = Path(__file__).resolve().parent.parent / "spot_sim" / "spot_sim"
LOCK_ORDER = SIM / "core" / "lock_order.py"
PLAIN = {"Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore"}


def plain_locks(source: str) -> list[str]:
    """Where ``source`` makes a lock that is not an OrderedLock: ``threading.Lock()`` (any
    alias of the module), ``Lock()`` imported from threading (any alias), ``RLock``,
    ``Condition`` (which makes its own lock), a semaphore, or ``_thread.allocate_lock``."""
    tree = ast.parse(source)
    modules, names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names
                        if a.name in ("threading", "_thread")}
        if isinstance(node, ast.ImportFrom) and node.module in ("threading", "_thread"):
            names |= {a.asname or a.name for a in node.names
                      if a.name in PLAIN | {"allocate_lock"}}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id in modules and func.attr in PLAIN | {"allocate_lock"}:
            found.append(f"line {node.lineno}: {func.value.id}.{func.attr}()")
        if isinstance(func, ast.Name) and func.id in names:
            found.append(f"line {node.lineno}: {func.id}()")
    return found


PLANTED = {
    "threading.Lock": "import threading\nlock = threading.Lock()\n",
    "an alias of the module": "import threading as t\nlock = t.RLock()\n",
    "a name imported": "from threading import Lock\nlock = Lock()\n",
    "an alias of the name": "from threading import RLock as R\nlock = R()\n",
    "a condition's own lock": "import threading\nready = threading.Condition()\n",
    "a semaphore": "import threading\ngate = threading.Semaphore(1)\n",
    "the low-level module": "import _thread\nlock = _thread.allocate_lock()\n",
}


def test_every_lock_in_the_simulator_is_ranked():
    found = {str(path.relative_to(SIM)): where for path in sorted(SIM.rglob("*.py"))
             if path != LOCK_ORDER and (where := plain_locks(path.read_text()))}
    assert found == {}


@pytest.mark.parametrize("way", sorted(PLANTED))
def test_a_plain_lock_made_any_way_is_caught(way):
    assert plain_locks(PLANTED[way]), way


def test_what_is_not_a_lock_is_not_flagged():
    allowed = ("import threading\nfrom spot_sim.core.lock_order import LEAF, OrderedLock\n"
               "lock = OrderedLock('x', LEAF)\nstop = threading.Event()\n"
               "worker = threading.Thread(target=print)\n")
    assert plain_locks(allowed) == []


def test_the_ranks_run_outermost_first():
    assert MISSION < STEP < DOMAIN < ROBOT < SERVICE < LEAF < INNERMOST


def test_a_lock_taken_out_of_order_is_refused_before_waiting():
    domain, robot, leaf = (OrderedLock("graph_nav", DOMAIN), OrderedLock("robot", ROBOT),
                           OrderedLock("estop", LEAF))
    with domain, robot, leaf, robot:  # in order, and the robot's again (re-entrant)
        pass
    with robot, pytest.raises(LockOrderError, match="graph_nav taken while holding robot"):
        with domain:
            pass
    with leaf, pytest.raises(LockOrderError, match="robot taken while holding estop"):
        with robot:
            pass
    with domain:  # nothing is left held after a refusal
        pass


def test_two_locks_of_one_rank_are_never_nested():
    first, second = OrderedLock("graph_nav", DOMAIN), OrderedLock("choreography", DOMAIN)
    with first, pytest.raises(LockOrderError, match="choreography taken while holding"):
        with second:
            pass


def test_the_simulators_locks_nest_in_rank_order():
    """The robot's physics step takes a domain's lock (its hooks), then the robot's; a leaf
    (the leases) and the clock come inside; the robot's lock is refused inside a leaf's,
    and the step's inside the robot's."""
    clock = RobotClock()
    robot = SimRobot(SimConfig(), clock)
    leases = LeaseManager(has_arm=False)
    mission, graph_nav = OrderedLock("mission runner", MISSION), OrderedLock("graph_nav", DOMAIN)
    keepalive = OrderedLock("keepalive", SERVICE)
    seen = []
    robot.add_step_hook(lambda r, now: seen.append(now))
    with mission:
        robot.step()  # the step's own lock, then the robot's
        with graph_nav, robot.parts(Base), keepalive:
            assert leases.list_resources()  # a leaf (its own lock) inside a service's
            clock.timestamp()  # the innermost inside everything
    assert seen
    estop = OrderedLock("estop", LEAF)
    with estop, pytest.raises(LockOrderError, match="robot taken while holding estop"):
        robot.odom_body()
    with robot.parts(Base), pytest.raises(LockOrderError, match="robot step taken while"):
        robot.step()
