"""The simulated robot's doors, checked by the code's structure: its parts (power, legs, base,
command book, battery, faults, arm, docking) are private to ``SimRobot``, every other module
reaches them only through its one door, ``robot.parts(Base, Legs, ...)``, which names them by
class, and the lock order (a domain's lock, the robot's, a leaf's) is enforced when a lock is
taken, not only written down."""

import ast
import threading
from pathlib import Path

import pytest

from spot_sim.body.base import Base
from spot_sim.body.legs import Legs
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import RobotClock
from spot_sim.core.config import SimConfig
from spot_sim.core.lock_order import DOMAIN, LEAF, ROBOT, LockOrderError, OrderedLock

REPO = Path(__file__).resolve().parent.parent
SIM = REPO / "spot_sim" / "spot_sim"
ROBOT_MODULE = SIM / "body" / "robot.py"


def _door_map() -> dict[str, str]:
    """What ``SimRobot.parts`` hands over, read from robot.py: part class -> private field."""
    for node in ast.walk(ast.parse(ROBOT_MODULE.read_text())):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                isinstance(t, ast.Attribute) and t.attr == "_by_class" for t in node.targets):
            return {key.id: value.attr for key, value in zip(node.value.keys, node.value.values,
                                                            strict=True)}
    raise AssertionError("robot.py has no _by_class map")


DOOR = _door_map()


def touches(source: str, private: set[str], classes: set[str]) -> list[str]:
    """Where ``source`` reaches a part past the door: a private part field of another object
    (``x._base``; its own ``self._base`` is another class's field), or a door call naming
    something other than a part class."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in private and not (
                isinstance(node.value, ast.Name) and node.value.id == "self"):
            found.append(f"line {node.lineno}: .{node.attr}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "parts":
            names = [a.id if isinstance(a, ast.Name) else ast.dump(a) for a in node.args]
            found += [f"line {node.lineno}: parts({name})" for name in names
                      if name not in classes]
    return found


def test_the_door_hands_over_every_part_and_the_check_catches_a_way_past_it():
    assert set(DOOR) == {"Power", "Legs", "Base", "CommandBook", "Battery", "Faults", "Arm",
                         "Docking"}
    private = set(DOOR.values()) | {"_manipulations", "_by_class"}
    assert sorted(touches("robot._base.halt()\nx = sim.robot._legs\nself._arm = 1\n", private,
                          set(DOOR))) == ["line 1: ._base", "line 2: ._legs"]
    assert touches("with robot.parts(Base, 'legs'):\n    pass\n", private, set(DOOR)) == [
        "line 1: parts(" + ast.dump(ast.Constant("legs")) + ")"]
    assert touches("with robot.parts(Base, Legs) as (b, l):\n    b.halt()\n", private,
                   set(DOOR)) == []


def test_no_module_but_the_robot_touches_its_parts_and_the_robot_has_no_other_door():
    private = set(DOOR.values()) | {"_manipulations", "_by_class"}
    found = {}
    for path in SIM.rglob("*.py"):
        if path != ROBOT_MODULE and (where := touches(path.read_text(), private, set(DOOR))):
            found[str(path.relative_to(REPO))] = where
    for folder in (REPO / "test", REPO / "benchmarks"):  # conftest.part(robot, kind) too
        for path in folder.rglob("*.py"):
            if where := [w for w in touches(path.read_text(), private, set(DOOR))
                         if "parts(" not in w]:
                found[str(path.relative_to(REPO))] = where
    assert not found, found
    robot_class = next(node for node in ast.parse(ROBOT_MODULE.read_text()).body
                       if isinstance(node, ast.ClassDef) and node.name == "SimRobot")
    methods = {node.name for node in robot_class.body if isinstance(node, ast.FunctionDef)}
    assert "atomically" not in methods  # the general door is gone
    public_parts = [node.attr for node in ast.walk(robot_class)
                    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "self" and isinstance(node.ctx, ast.Store)
                    and node.attr.lstrip("_") in {v.lstrip("_") for v in DOOR.values()}
                    and not node.attr.startswith("_")]
    assert public_parts == []


def test_the_door_hands_over_the_robots_parts_by_class_under_its_lock():
    robot = SimRobot(SimConfig(), RobotClock())
    with robot.parts(Base, Legs) as (base, legs):
        assert isinstance(base, Base) and isinstance(legs, Legs)
        assert robot.odom_body() == base.odom_body  # the robot's own verbs inside: re-entrant
    taken = threading.Event()

    def other() -> None:
        with robot.parts(Base):
            taken.set()

    with robot.parts(Base):
        thread = threading.Thread(target=other)
        thread.start()
        assert not taken.wait(0.2)  # another thread waits for the step to end
    assert taken.wait(5.0)
    thread.join()


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


def test_the_robots_lock_comes_after_a_domains_in_the_simulator():
    robot = SimRobot(SimConfig(), RobotClock())
    graph_nav = OrderedLock("graph_nav", DOMAIN)
    with graph_nav, robot.parts(Base):
        pass
    with robot.parts(Base), pytest.raises(LockOrderError):
        with graph_nav:
            pass
