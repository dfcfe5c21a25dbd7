"""doc/migration.md against the code that does not need a running driver: its launch
arguments are the launch file's, its parameters the config file's, and the rows marked
"alias" are exactly what the spot_ros2_aliases capability offers (test_migration_e2e.py
checks the interface names and types against a running driver)."""

import importlib.util

import yaml
from migration_page import NONE, interfaces, names, table
from ros_harness import REPO

from spot_driver import registry
from spot_driver.spot_ros2_aliases.table import POSTURES, SERVICES, TOPICS


def launch_arguments() -> set[str]:
    spec = importlib.util.spec_from_file_location("spot_driver_launch",
                                                  REPO / "launch" / "spot_driver.launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name for name, _, _ in module.ARGUMENTS}


def test_every_launch_argument_named_here_exists():
    offered = launch_arguments()
    rows = table("launch-table")
    assert len(rows) >= 10
    for theirs, ours, note in rows:
        assert names(theirs), theirs
        for name in names(ours):
            assert name in offered, f"{theirs}: no launch argument {name!r}"
        assert ours == NONE or names(ours), ours
        assert note or ours != NONE, f"{theirs}: no equivalent and no note"


def test_every_parameter_named_here_exists():
    config = yaml.safe_load((REPO / "config" / "spot_driver.yaml").read_text())
    declared = set(config["/**"]["ros__parameters"]) | {
        f"enable_{c.name}" for c in registry.CAPABILITIES if c.optional}
    commented = (REPO / "config" / "spot_driver.yaml").read_text()  # optional ones, as examples
    for theirs, ours, _note in table("parameter-table"):
        for name in names(ours):
            assert name in declared or f"# {name}:" in commented, \
                f"{theirs}: no parameter {name!r}"


def test_the_alias_rows_are_what_the_aliases_offer():
    """Each "alias" row's spot_ros2 name is offered by spot_ros2_aliases for its row's name
    here, and the capability offers nothing the page does not list."""
    offered = {a.theirs: a.ours for a in TOPICS} | {s.theirs: s.ours for s in SERVICES} | {
        name: "arm/posture" for name in POSTURES}
    offered["camera/<c>/compressed"] = "camera/frontleft/image/compressed"
    rows = {i.theirs: i.ours for i in interfaces() if i.how == "alias"}
    assert rows == offered


def test_every_interface_row_is_complete():
    rows = interfaces()
    assert len(rows) > 80
    assert len({(i.theirs, i.their_type) for i in rows}) == len(rows), "a row twice"
    kinds = ("/msg/", "/srv/", "/action/")
    for row in rows:
        assert row.how in ("same", "renamed", "retyped", "alias", "none"), row
        assert any(k in row.their_type for k in kinds), row
        if row.how == "none":
            assert row.ours == NONE, row
        elif row.ours != NONE:
            assert any(k in row.our_type for k in kinds), row
        if row.how == "same" and row.ours != NONE:
            theirs = row.theirs.replace("<c>", "frontleft")  # as the "here" column names it
            assert (theirs, row.their_type) == (row.ours, row.our_type), row
