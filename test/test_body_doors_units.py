"""The simulated robot's doors, checked by the code's structure: its parts (power, legs, base,
command book, battery, faults, arm) are private to ``SimRobot``, every other module
reaches them only through its one door, ``robot.parts(Base, Legs, ...)``, which names them by
class. The ways around the door a first version let through (``getattr``, ``vars``,
``__dict__``, a part kept past its block, a method returning a part or one of the robot's own
mutable objects) are each planted and caught. The lock order: ``test_core_lock_order_units``."""

import ast
import threading
from pathlib import Path

import pytest

from spot_sim.body.base import Base
from spot_sim.body.legs import Legs
from spot_sim.body.robot import SimRobot
from spot_sim.core.clock import RobotClock
from spot_sim.core.config import SimConfig

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


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _bare(node: ast.AST | None, parts: set[str]) -> bool:
    """``node`` is a part itself, or a tuple or list holding one."""
    if isinstance(node, ast.Name):
        return node.id in parts
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_bare(e, parts) for e in node.elts)
    return False


def _door_blocks(scope: ast.AST) -> list[tuple[ast.With, set[str]]]:
    """Each ``with x.parts(...) as (a, b):`` block in ``scope`` and the names it binds."""
    blocks = []
    for node in ast.walk(scope):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                        call.func.attr == "parts" and item.optional_vars is not None:
                    blocks.append((node, _names(item.optional_vars)))
    return blocks


def _kept_past(function: ast.AST) -> list[str]:
    """In one function: a part stored in an attribute or a container, handed out, or read
    after the block that bound it."""
    found = []
    blocks = _door_blocks(function)
    for block, parts in blocks:
        for node in ast.walk(block):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            if any(not isinstance(t, ast.Name) for t in targets) and _bare(node.value, parts):
                found.append(f"line {node.lineno}: a part stored past its block")
            if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)) and \
                    _bare(node.value, parts):
                found.append(f"line {node.lineno}: a part handed out of its block")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("append", "add", "extend", "insert", "setdefault") and \
                    any(_bare(a, parts) for a in node.args):
                found.append(f"line {node.lineno}: a part put in a container")
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            binding = [b for b, parts in blocks if node.id in parts]
            inside = any(b.lineno <= node.lineno <= b.end_lineno for b in binding)
            if binding and not inside and any(b.end_lineno < node.lineno for b in binding):
                found.append(f"line {node.lineno}: {node.id} used after its block")
    return found


def escapes(source: str, private: set[str]) -> list[str]:
    """Ways around the door that ``touches`` does not see: a private part reached by
    ``getattr``, ``vars`` or ``__dict__``; a method that returns a part itself; a part kept
    past its ``with robot.parts(...)`` block."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "vars":
                found.append(f"line {node.lineno}: vars()")
            if node.func.id == "getattr" and len(node.args) > 1 and isinstance(
                    node.args[1], ast.Constant) and node.args[1].value in private:
                found.append(f"line {node.lineno}: getattr(, {node.args[1].value!r})")
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            found.append(f"line {node.lineno}: .__dict__")
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Attribute) and \
                isinstance(node.value.value, ast.Name) and node.value.value.id == "self" \
                and node.value.attr in private:
            found.append(f"line {node.lineno}: returns self.{node.value.attr}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += _kept_past(node)
    return sorted(set(found))


def test_the_door_hands_over_every_part_and_the_check_catches_a_way_past_it():
    assert set(DOOR) == {"Power", "Legs", "Base", "CommandBook", "Battery", "Faults", "Arm"}
    private = set(DOOR.values()) | {"_by_class"}
    assert sorted(touches("robot._base.halt()\nx = sim.robot._legs\nself._arm = 1\n", private,
                          set(DOOR))) == ["line 1: ._base", "line 2: ._legs"]
    assert touches("with robot.parts(Base, 'legs'):\n    pass\n", private, set(DOOR)) == [
        "line 1: parts(" + ast.dump(ast.Constant("legs")) + ")"]
    assert touches("with robot.parts(Base, Legs) as (b, l):\n    b.halt()\n", private,
                   set(DOOR)) == []


EVASIONS = {  # each way around the door that a syntax check alone once let through
    "getattr": "getattr(robot, '_base').halt()\n",
    "vars": "vars(robot)['_base'].halt()\n",
    "__dict__": "robot.__dict__['_legs'].sit()\n",
    "a part kept in an attribute": (
        "def f(self, robot):\n    with robot.parts(Base) as (base,):\n"
        "        self.base = base\n"),
    "a part returned": (
        "def f(robot):\n    with robot.parts(Base) as (base,):\n        return base\n"),
    "a part in a container": (
        "def f(robot, kept):\n    with robot.parts(Base) as (base,):\n"
        "        kept.append(base)\n"),
    "a part used after its block": (
        "def f(robot):\n    with robot.parts(Base) as (base,):\n        pass\n"
        "    base.halt()\n"),
    "a method that returns a part": (
        "class SimRobot:\n    @property\n    def base(self):\n        return self._base\n"),
}


# What the robot's own objects are, beside its parts, and its capabilities' own state: handed
# out, they could be changed outside their owner's lock (the command book's Command once was,
# by navigation).
MUTABLE = {"Command", "CommandBook", "Dance", "DockingTask", "Manipulation"}
OWNERS = {"SimRobot": ROBOT_MODULE, "ArmVerbs": SIM / "body" / "arm" / "verbs.py",
          "ReportVerbs": SIM / "body" / "reports.py", "Docking": SIM / "docking" / "docking.py",
          "ManipulationTasks": SIM / "manipulation" / "api_tasks.py"}


def hands_out(source: str, kept: set[str], owner: str = "SimRobot") -> list[str]:
    """``owner``'s methods (but ``parts``, the robot's door) annotated to return one of
    ``kept``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == owner:
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and method.name != "parts" and \
                        method.returns is not None and _names(method.returns) & kept:
                    found.append(f"{owner}.{method.name} returns "
                                 f"{sorted(_names(method.returns) & kept)}")
    return found


@pytest.mark.parametrize("owner", sorted(OWNERS))
def test_no_owner_hands_out_a_part_or_an_object_of_its_own(owner):
    kept = set(DOOR) | MUTABLE
    assert hands_out(OWNERS[owner].read_text(), kept, owner) == []
    planted = f"class {owner}:\n    def command(self, kind) -> DockingTask:\n        pass\n"
    assert hands_out(planted, kept, owner) == [f"{owner}.command returns ['DockingTask']"]


@pytest.mark.parametrize("way", sorted(EVASIONS))
def test_each_way_around_the_door_is_caught(way):
    private = set(DOOR.values()) | {"_by_class"}
    assert escapes(EVASIONS[way], private), way


def test_what_the_door_allows_is_not_flagged():
    private = set(DOOR.values()) | {"_by_class"}
    allowed = ("def f(robot, other):\n    with robot.parts(Base) as (base,):\n"
               "        pose = base.odom_body\n        other.pose = base.odom_body\n"
               "    with robot.parts(Base) as (base,):\n        base.halt()\n    return pose\n"
               "def g(base):\n    return base\n")
    assert escapes(allowed, private) == []


def test_no_module_but_the_robot_touches_its_parts_and_the_robot_has_no_other_door():
    private = set(DOOR.values()) | {"_by_class"}
    found = {}
    for path in SIM.rglob("*.py"):
        where = escapes(path.read_text(), private)
        if path != ROBOT_MODULE:
            where += touches(path.read_text(), private, set(DOOR))
        if where:
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


def private_reaches(source: str) -> list[str]:
    """Where ``source`` reaches a private name of another object or module (``x._state``,
    ``module._helper``): only ``self``, ``cls`` and a class of the same module may (a
    namedtuple's ``_replace`` is its public API)."""
    tree = ast.parse(source)
    own = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and \
                not node.attr.startswith("__") and node.attr != "_replace" and not (
                    isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"} | own):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return sorted(found)


def test_no_simulator_module_reaches_another_objects_private_state():
    """Every owner's state (the robot's, docking's, GraphNav's, a service's) is reached only
    through its public methods: no module reads or writes another object's private field."""
    planted = ("def f(docking, graph_nav):\n    docking._tasks.clear()\n"
               "    graph_nav._fix(None, None)\n")
    assert private_reaches(planted) == ["line 2: docking._tasks", "line 3: graph_nav._fix"]
    assert private_reaches("class A:\n    def f(self):\n        return A._g(self._h)\n") == []
    found = {str(path.relative_to(REPO)): where for path in SIM.rglob("*.py")
             if (where := private_reaches(path.read_text()))}
    assert not found, found


def door_users(source: str) -> list[str]:
    """Where ``source`` opens the robot's door (``x.parts(...)``)."""
    return [f"line {node.lineno}: {ast.unparse(node.func)}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "parts"]


def test_only_the_body_opens_the_door_every_capability_above_uses_verbs():
    """The body's own rules, kinds and services use the door; a capability above the body
    (docking, GraphNav, a dance, the Manipulation API, robot state) reads the body through
    its readings and moves it through its verbs, so no module outside ``body/`` holds a part."""
    assert door_users("with robot.parts(Base) as (base,):\n    base.halt()\n") == [
        "line 1: robot.parts"]
    found = {str(path.relative_to(REPO)): where for path in SIM.rglob("*.py")
             if (SIM / "body") not in path.parents and (where := door_users(path.read_text()))}
    assert found == {}, found
