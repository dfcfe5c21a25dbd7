"""doc/layout.md's "Adding a capability", checked: every capability in the registry has every
place the recipe names, on the driver's side, the simulator's, in the docs and in the tests.

Each check fails with the capability, the place and what to add; removing any one place from
a capability (its docs section, layout row, field-pass test, parameters, health aspects or
simulated counterpart) fails the test.
"""

import ast
import re
from importlib import import_module
from pathlib import Path

import doc_pages
from ros_harness import DRIVER_PKG, REPO

from spot_driver import registry
from spot_driver.core.capability import Capability
from spot_sim import registry as sim_registry
from spot_sim.core.config import SimConfig
from spot_sim.core.hardware import OPTIONS

DRIVER = DRIVER_PKG / "spot_driver"
README = doc_pages.all_text()  # the README and doc/*.md
NO_FIELD_TEST = "none: "


def readme_section(heading: str) -> str:
    """The docs' text under ``heading`` (any level), up to the next heading of that level
    or higher; "" when there is no such heading."""
    match = re.search(rf"^(#+) {re.escape(heading)}\n", README, re.M)
    if match is None:
        return ""
    level = len(match.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(README, match.end())
    return README[match.end():end.start() if end else len(README)]


def node_names(capability: Capability) -> list[str]:
    """The ROS node names the capability's nodes give themselves."""
    names = []
    for path in capability.nodes:
        source = (DRIVER_PKG / (path.split(":")[0].replace(".", "/") + ".py")).read_text()
        names += re.findall(r'super\(\)\.__init__\("(\w+)"', source)
    return names


def robot_services(capability: Capability) -> dict[str, str]:
    """The robot services the capability's code calls: every SDK client class it passes to a
    call (``connection.client(X)``, ``spot_cam_client(connection, X)``): service name -> the
    module that calls it."""
    found = {}
    for path in (DRIVER / capability.name).rglob("*.py"):
        tree = ast.parse(path.read_text())
        imported = {alias.asname or alias.name: node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module
                    for alias in node.names}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for arg in node.args:
                module = imported.get(arg.id, "") if isinstance(arg, ast.Name) else ""
                if module.startswith("bosdyn.client"):
                    client = getattr(import_module(module), arg.id)
                    if hasattr(client, "default_service_name"):
                        found[client.default_service_name] = str(path.relative_to(REPO))
    return found


def simulated_services() -> set[str]:
    """Every service the simulator serves with all its optional hardware fitted."""
    fitted = SimConfig(**{option.field: True for option in OPTIONS})
    return {served.spec.name for served in sim_registry.served(fitted)}


def field_pass() -> list[str]:
    """The field-profile pass: its timings (field_serial.txt, run alone) and the rest."""
    return [line.strip() for name in ("field_serial.txt", "field_pass.txt")
            for line in (REPO / "test" / name).read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def reports_health(capability: Capability) -> bool:
    """Whether the capability's nodes add statuses or streams to ``/diagnostics``."""
    return any(re.search(r"context\.(health|streams)\.append", path.read_text())
               for path in (DRIVER / capability.name).rglob("*.py"))


def missing_places(capability: Capability, served: set[str], field: list[str]) -> list[str]:
    """Every place of the recipe the capability lacks, as sentences."""
    name, missing = capability.name, []
    section = readme_section(capability.readme) if capability.readme else ""
    if not section:
        missing.append(f"docs: no section headed {capability.readme!r} (Capability.readme)")
    elif "| --- |" not in section:
        missing.append(f"docs section {capability.readme!r}: no interface table")
    else:
        missing += [f"docs section {capability.readme!r} does not name node {node!r}"
                    for node in node_names(capability)
                    if node not in section and node not in capability.readme]
    layout = doc_pages.page("layout")
    layout = layout[:layout.index("## Adding a capability")]
    if f"`spot_driver/spot_driver/{name}/`" not in layout:
        missing.append(f"doc/layout.md: no row for spot_driver/spot_driver/{name}/")
    if capability.parameters is None or not all(p.description for p in
                                                capability.parameters.parameters):
        missing.append("parameters: no Section of described parameters")
    test = capability.field_test
    if not test.startswith(NO_FIELD_TEST):
        file, _, function = test.partition("::")
        if not any(line in (test, file) or line.startswith(f"{test}[") for line in field):
            missing.append(f"field pass: {test!r} is not in test/field_pass.txt")
        elif not (REPO / file).is_file() or f"def {function.split('[')[0]}(" not in \
                (REPO / file).read_text():
            missing.append(f"field pass: {test!r} does not exist")
    elif len(test) < len(NO_FIELD_TEST) + 20:
        missing.append("field pass: no test, and no reason why")
    if reports_health(capability) and not capability.health:
        missing.append("health: its nodes report to /diagnostics; declare the aspects")
    reasons = dict(capability.unsimulated)
    for service, caller in robot_services(capability).items():
        if service not in served and not reasons.get(service):
            missing.append(f"simulator: {caller} calls {service!r}, which spot_sim does not "
                           "serve (add it to spot_sim/spot_sim/<capability>/, or say why in "
                           "unsimulated)")
    return missing


def test_every_capability_has_every_place_the_recipe_names():
    served, field = simulated_services(), field_pass()
    missing = {c.name: places for c in registry.CAPABILITIES
               if (places := missing_places(c, served, field))}
    assert not missing, missing


def test_every_simulated_service_is_in_the_readme_table():
    table = readme_section("Services of the simulated Spot")
    rows = " ".join(re.findall(r"^\| ([^|]+) \|", table, re.M))
    absent = sorted(name for name in simulated_services()
                    if not re.search(rf"(^|[ ,`]){re.escape(name)}($|[ ,`])", rows))
    assert not absent, f"doc/simulator.md 'Services of the simulated Spot' misses {absent}"


def test_each_health_aspect_is_a_status_the_driver_builds():
    """Aspects are status names (``spot_driver: <aspect>``) some driver module builds."""
    sources = "\n".join(p.read_text() for p in DRIVER.rglob("*.py"))
    for capability in registry.CAPABILITIES:
        for aspect in capability.health:
            assert f'{{prefix}}{aspect}' in sources or f'"{aspect}' in sources, \
                (capability.name, aspect)


def test_the_recipe_fails_when_a_place_is_removed():
    """Each place, taken away from a capability that has it, is reported missing."""
    from dataclasses import replace

    served, field = simulated_services(), field_pass()
    arm = next(c for c in registry.CAPABILITIES if c.name == "manipulation")
    assert missing_places(arm, served, field) == []
    assert missing_places(replace(arm, readme="Arm and legs"), served, field)
    assert missing_places(replace(arm, field_test="test/test_manipulation_e2e.py::test_nothing"),
                          served, field)
    assert missing_places(replace(arm, field_test="none: "), served, field)
    assert missing_places(replace(arm, parameters=None), served, field)
    assert missing_places(arm, served - {"manipulation"}, field)
    perception = next(c for c in registry.CAPABILITIES if c.name == "perception")
    assert missing_places(replace(perception, health=()), served, field)
    assert Path(REPO / "test" / "field_pass.txt").is_file()
