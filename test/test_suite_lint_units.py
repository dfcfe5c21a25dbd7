"""The suite's own rules, read from the test files' syntax trees (fast tier), not their text:

- a sleep (``time.sleep`` under any import form: ``import time as t``, ``from time import
  sleep``) says on its line why no condition can be waited for instead (``# sleep:
  <reason>``): a window a rate is measured over, a span in which nothing may happen, a
  stand-in that is slow on purpose, a pace. Only a loop that polls a condition (``while
  <condition>:``) needs none: a fixed sleep in a ``for`` or ``while True`` loop needs one;
- ``pytest.raises`` (or ``expected_exception=``) names the one error it expects: no tuple,
  no empty ``match``, and not a bare ``ResponseError``, ``RpcError``, ``Error``,
  ``Exception`` or ``BaseException`` unless ``match=`` says which one (a crash in the
  simulated robot is a ``ResponseError`` too);
- no broad ``except`` (bare, ``Exception``, ``BaseException``) that swallows: one that
  cleans up and raises again is allowed;
- tests make ROS publishers only through ``RosClient.publisher``, which waits for the
  subscriber to match (no ``create_publisher``, not even through ``getattr``): a message
  published before may reach nobody, and "nothing happened" would then pass for the wrong
  reason;
- no ``preexec_fn``: a fork in a test process that runs gRPC (the simulated robot) aborted
  the child (``epoll ... Bad file descriptor``); ``ros_harness.DEFAULT_SIGINT`` resets
  Ctrl-C's disposition in the child instead;
- a test file says where it belongs by its name, ``test_<capability>[_<topic>]_<kind>.py``:
  the kind is ``units`` (no simulated robot, no driver), ``sim`` (a simulated service through
  the SDK's own clients) or ``e2e`` (through ROS and the driver).
"""

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
BROAD = {"ResponseError", "RpcError", "Error", "Exception", "BaseException"}
HARNESS = {"ros_harness.py", "operator_probe.py"}  # where publishers are made and matched


def _files() -> list[Path]:
    return sorted(p for p in TESTS.glob("*.py") if p.name != Path(__file__).name)


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _polls(node: ast.AST, parents: dict) -> bool:
    """Whether ``node``'s innermost loop is ``while <condition>:`` (a poll)."""
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.For, ast.AsyncFor)):
            return False
        if isinstance(node, ast.While):
            return not isinstance(node.test, ast.Constant)
    return False


def _is_call(node: ast.AST, owner: str, name: str) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == name and isinstance(node.func.value, ast.Name)
            and node.func.value.id == owner)


def _sleep_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names ``time`` is imported as, and those ``time.sleep`` is imported as."""
    modules, functions = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "time"}
        elif isinstance(node, ast.ImportFrom) and node.module == "time":
            functions |= {a.asname or a.name for a in node.names if a.name == "sleep"}
    return modules, functions


def unexplained_sleeps(source: str) -> list[int]:
    """Lines of sleeps (any import form) without a ``# sleep:`` reason, outside a loop that
    polls a condition."""
    tree, lines = ast.parse(source), source.splitlines()
    parents, (modules, functions) = _parents(tree), _sleep_names(tree)

    def is_sleep(node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        return (isinstance(f, ast.Name) and f.id in functions) or (
            isinstance(f, ast.Attribute) and f.attr == "sleep"
            and isinstance(f.value, ast.Name) and f.value.id in modules)

    return sorted(node.lineno for node in ast.walk(tree)
                  if is_sleep(node) and not _polls(node, parents)
                  and not re.search(r"#\s*sleep:\s*\S", lines[node.end_lineno - 1]))


def _raises_calls(tree: ast.AST):
    """(node, expected, match) of every ``pytest.raises`` and ``expected_exception=``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        if _is_call(node, "pytest", "raises"):
            expected = node.args[0] if node.args else keywords.get("expected_exception")
        else:
            expected = keywords.get("expected_exception")
        if expected is not None:
            yield node, expected, keywords.get("match")


def broad_raises(source: str) -> list[int]:
    """Lines of ``pytest.raises`` (or ``expected_exception=``) of a tuple, with an empty
    ``match``, or of a broad error without ``match=``."""
    out = []
    for node, expected, match in _raises_calls(ast.parse(source)):
        name = expected.attr if isinstance(expected, ast.Attribute) else \
            getattr(expected, "id", "")
        empty = isinstance(match, ast.Constant) and not match.value
        if isinstance(expected, ast.Tuple) or empty or (name in BROAD and match is None):
            out.append(node.lineno)
    return out


def broad_excepts(source: str) -> list[int]:
    """Lines of a bare ``except``, ``except Exception`` or ``except BaseException`` (also in
    a tuple) whose handler does not raise again."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler):
            continue
        caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        broad = node.type is None or any(
            getattr(c, "id", getattr(c, "attr", "")) in ("Exception", "BaseException")
            for c in caught)
        raises_again = any(isinstance(n, ast.Raise) for n in ast.walk(node))
        if broad and not raises_again:
            out.append(node.lineno)
    return out


def raw_publishers(source: str) -> list[int]:
    """Lines that call ``create_publisher`` directly, or reach it through ``getattr``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "create_publisher":
            out.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "getattr" and len(node.args) > 1
              and isinstance(node.args[1], ast.Constant)
              and node.args[1].value == "create_publisher"):
            out.append(node.lineno)
    return sorted(out)


def preexec_fns(source: str) -> list[int]:
    """Lines that pass ``preexec_fn`` to a subprocess."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.keyword) and node.arg == "preexec_fn"]


RULES = [unexplained_sleeps, broad_raises, broad_excepts, raw_publishers, preexec_fns]


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_the_suite_keeps_its_rules(rule):
    found = {}
    for path in _files():
        if rule is raw_publishers and path.name in HARNESS:
            continue
        lines = rule(path.read_text())
        if lines:
            found[path.name] = lines
    assert not found, f"{rule.__doc__.strip()} {found}"


TEST_NAME = re.compile(r"test_[a-z0-9]+(_[a-z0-9]+)*_(units|sim|e2e)\.py")


def test_every_test_file_names_its_capability_and_kind():
    assert TEST_NAME.fullmatch("test_spot_cam_payload_sim.py")
    assert not TEST_NAME.fullmatch("test_sim_arm.py")
    unnamed = [p.name for p in TESTS.glob("test_*.py") if not TEST_NAME.fullmatch(p.name)]
    assert not unnamed, f"name them test_<capability>[_<topic>]_<units|sim|e2e>.py: {unnamed}"


def test_each_rule_finds_what_it_is_for():
    """Planted defects are found; their allowed forms are not."""
    planted = (
        "import time\n"
        "def test_x(ros):\n"
        "    time.sleep(0.5)\n"                                 # 3: found
        "    time.sleep(0.5)  # sleep: the window measured\n"   # allowed
        "    while not done():\n"
        "        time.sleep(0.05)\n"                            # allowed: polls
        "    with pytest.raises(ResponseError):\n"              # 7: found
        "        call()\n"
        "    with pytest.raises(sdk_errors.Error):\n"           # 9: found
        "        call()\n"
        "    with pytest.raises(ResponseError, match='UNKNOWN'):\n"  # allowed
        "        call()\n"
        "    with pytest.raises(InvalidRequestError):\n"        # allowed
        "        call()\n"
        "    pub = ros.node.create_publisher(Twist, '/cmd_vel', 10)\n"  # 15: found
        "    pub = ros.publisher(Twist, '/cmd_vel')\n"          # allowed
        "    subprocess.Popen(args, preexec_fn=reset)\n"        # 17: found
        "    subprocess.Popen([*DEFAULT_SIGINT, *args])\n"      # allowed
    )
    assert unexplained_sleeps(planted) == [3]
    assert broad_raises(planted) == [7, 9]
    assert raw_publishers(planted) == [15]
    assert preexec_fns(planted) == [17]


def test_each_evasion_is_found():
    """The ways round the rules the suite once allowed (issue 63), each caught."""
    sleeps = (
        "from time import sleep\n"
        "import time as t\n"
        "from time import sleep as nap\n"
        "sleep(1)\n"                                            # 4: another import form
        "t.sleep(1)\n"                                          # 5: an alias of the module
        "nap(1)\n"                                              # 6: an alias of the function
        "for _ in range(3):\n"
        "    t.sleep(0.1)\n"                                    # 8: a fixed sleep in a loop
        "while True:\n"
        "    sleep(0.1)\n"                                      # 10: not a poll either
        "for _ in range(3):\n"
        "    sleep(0.1)  # sleep: the pace of a 10 Hz stream\n"  # allowed: says why
        "while not ready():\n"
        "    nap(0.05)\n"                                       # allowed: polls
    )
    assert unexplained_sleeps(sleeps) == [4, 5, 6, 8, 10]
    raises = (
        "with pytest.raises((ResponseError, KeyError)):\n"      # 1: a tuple
        "    pass\n"
        "with pytest.raises(expected_exception=ResponseError):\n"  # 3: the keyword form
        "    pass\n"
        "with pytest.raises(InvalidRequestError, match=''):\n"  # 5: an empty match
        "    pass\n"
        "with pytest.raises(RpcError):\n"                       # 7: RpcError is broad
        "    pass\n"
        "with pytest.raises(RpcError, match='UNAVAILABLE'):\n"  # allowed
        "    pass\n"
    )
    assert broad_raises(raises) == [1, 3, 5, 7]
    excepts = (
        "try:\n    call()\nexcept Exception:\n    pass\n"      # 3: swallowed
        "try:\n    call()\nexcept:\n    pass\n"                # 7: bare
        "try:\n    call()\nexcept (KeyError, BaseException):\n    x = 1\n"  # 11
        "try:\n    call()\nexcept Exception:\n    clean()\n    raise\n"  # allowed
        "try:\n    call()\nexcept KeyError:\n    pass\n"        # allowed: narrow
    )
    assert broad_excepts(excepts) == [3, 7, 11]
    publishers = "make = getattr(node, 'create_publisher')\npub = make(Twist, 't', 10)\n"
    assert raw_publishers(publishers) == [1]
