"""The shape the README promises: every capability folder declared and registered, its nodes
importable, nodes that make no SDK clients, the layout table naming what exists."""

import ast
import re
from importlib import import_module

from ros_harness import REPO

from spot_driver import registry
from spot_driver.capability import EXECUTORS, load

DRIVER = REPO / "spot_driver"
CORE_FOLDERS = {"conversions", "nodes"}  # shared by every capability, not capabilities


def test_every_folder_is_a_registered_capability_and_every_capability_a_folder():
    folders = {p.name for p in DRIVER.iterdir() if (p / "__init__.py").is_file()}
    assert folders - CORE_FOLDERS == set(registry.PACKAGES)
    for capability in registry.CAPABILITIES:
        assert capability.executor in EXECUTORS
        for path in capability.nodes:
            assert path.startswith(f"spot_driver.{capability.name}."), path
            assert callable(load(path))
        for path in capability.sdk_clients:
            assert hasattr(load(path), "default_service_name"), path


def test_each_optional_capability_has_its_parameter_section():
    config = (REPO / "config" / "spot_driver.yaml").read_text()
    for capability in registry.CAPABILITIES:
        assert f"# --- {capability.parameters}" in config, capability.name


def test_nodes_make_no_sdk_clients_and_conversions_import_no_robot_classes():
    for path in DRIVER.rglob("*.py"):
        text = path.read_text()
        tree = ast.parse(text)
        if path.name == "node.py" or path.name.endswith("_node.py"):
            calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Attribute) and n.func.attr == "client"]
            assert not calls, f"{path.relative_to(REPO)} creates SDK clients"
        if "conversions" in path.name or path.parent.name == "conversions":
            imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
            robot = [m for m in imported if m and m.startswith("spot_driver.") and
                     "conversions" not in m and m != "spot_driver.conversions"]
            assert not robot, f"{path.relative_to(REPO)} imports {robot}"


def test_no_driver_module_is_over_400_lines():
    long = {str(p.relative_to(REPO)): n for p in DRIVER.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert not long, long


def test_the_readme_layout_table_names_what_exists():
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("## Layout"):readme.index("### Adding a capability")]
    named = set()
    for cell in re.findall(r"^\| (.+?) \|", table, re.M):
        paths = re.findall(r"`([^`]+)`", cell)
        folder = paths[0].rstrip("/").rsplit("/", 1)[0] + "/" if paths else ""
        for path in paths:  # "`spot_driver/main.py`, `shutdown.py`": the first one's folder
            named.add(path if "/" in path else folder + path)
    for path in named:
        assert (REPO / path).exists(), f"README layout names {path}, which does not exist"
    for folder in registry.PACKAGES:
        assert f"`spot_driver/{folder}/`" in table, f"README layout misses spot_driver/{folder}/"
    for module in DRIVER.glob("*.py"):
        if module.name not in ("__init__.py", "__main__.py"):
            assert module.name in table, f"README layout misses spot_driver/{module.name}"
    import_module("spot_driver.main")
