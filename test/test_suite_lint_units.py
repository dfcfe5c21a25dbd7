"""The suite's own rules, read from the test files' syntax trees (fast tier):

- a ``time.sleep`` outside a loop says on its line why no condition can be waited for instead
  (``# sleep: <reason>``): a window a rate is measured over, a span in which nothing may
  happen, a stand-in that is slow on purpose; a loop that polls a condition needs none;
- ``pytest.raises`` names the error it expects: not a bare ``ResponseError``, ``Error``,
  ``Exception`` or ``BaseException``, unless ``match=`` says which one (a crash in the
  simulated robot is a ``ResponseError`` too);
- tests make ROS publishers only through ``RosClient.publisher``, which waits for the
  subscriber to match: a message published before may reach nobody, and "nothing happened"
  would then pass for the wrong reason;
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
BROAD = {"ResponseError", "Error", "Exception", "BaseException"}
HARNESS = {"ros_harness.py", "operator_probe.py"}  # where publishers are made and matched


def _files() -> list[Path]:
    return sorted(p for p in TESTS.glob("*.py") if p.name != Path(__file__).name)


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _in_loop(node: ast.AST, parents: dict) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            return True
    return False


def _is_call(node: ast.AST, owner: str, name: str) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == name and isinstance(node.func.value, ast.Name)
            and node.func.value.id == owner)


def unexplained_sleeps(source: str) -> list[int]:
    """Lines of ``time.sleep`` calls outside loops without a ``# sleep:`` reason."""
    tree, lines = ast.parse(source), source.splitlines()
    parents = _parents(tree)
    return sorted(node.lineno for node in ast.walk(tree)
                  if _is_call(node, "time", "sleep") and not _in_loop(node, parents)
                  and not re.search(r"#\s*sleep:\s*\S", lines[node.end_lineno - 1]))


def broad_raises(source: str) -> list[int]:
    """Lines of ``pytest.raises`` of a broad error without ``match=``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (_is_call(node, "pytest", "raises") and node.args):
            continue
        expected = node.args[0]
        name = expected.attr if isinstance(expected, ast.Attribute) else \
            getattr(expected, "id", "")
        if name in BROAD and not any(k.arg == "match" for k in node.keywords):
            out.append(node.lineno)
    return out


def raw_publishers(source: str) -> list[int]:
    """Lines that call ``create_publisher`` directly."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "create_publisher"]


def preexec_fns(source: str) -> list[int]:
    """Lines that pass ``preexec_fn`` to a subprocess."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.keyword) and node.arg == "preexec_fn"]


@pytest.mark.parametrize("rule", [unexplained_sleeps, broad_raises, raw_publishers,
                                  preexec_fns],
                         ids=lambda rule: rule.__name__)
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
