"""doc/migration.md against spot_ros2's own files and our code, without a running driver:
every launch argument, parameter and interface spot_ros2 offers has a row, each row's
category and field differences are the ones computed from the two definitions, its launch
arguments are the launch file's, its parameters the config file's, and the rows marked
"alias" are exactly what the spot_ros2_aliases capability offers (test_migration_e2e.py
checks the interface names and types here against a running driver)."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest
import yaml
from migration_page import NONE, interfaces, names, table
from ros_harness import DRIVER_PKG, REPO

from conftest import missing
from spot_driver import registry
from spot_driver.spot_ros2_aliases.table import POSTURES, SERVICES, TOPICS

sys.path.insert(0, str(REPO / "scripts"))
import interface_diff
import render_migration
import spot_ros2_anchor


def launch_arguments() -> set[str]:
    spec = importlib.util.spec_from_file_location("spot_driver_launch",
                                                  DRIVER_PKG / "launch" / "spot_driver.launch.py")
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
    config = yaml.safe_load((DRIVER_PKG / "config" / "spot_driver.yaml").read_text())
    declared = set(config["/**"]["ros__parameters"]) | {
        f"enable_{c.name}" for c in registry.CAPABILITIES if c.optional}
    # the optional ones, as examples
    commented = (DRIVER_PKG / "config" / "spot_driver.yaml").read_text()
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
        assert row.how in ("same", "renamed", "fields", "retyped", "alias", "none"), row
        assert any(k in row.their_type for k in kinds), row
        if row.how == "none":
            assert row.ours == NONE, row
        elif row.ours != NONE:
            assert any(k in row.our_type for k in kinds), row
        if row.how == "same" and row.ours != NONE:
            theirs = row.theirs.replace("<c>", "frontleft")  # as the "here" column names it
            assert (theirs, row.their_type) == (row.ours, row.our_type), row


# ------------------------------------------------------------- held against spot_ros2's files
@pytest.fixture(scope="module")
def anchor() -> Path:
    """spot_ros2's files (SPOT_ROS2_DIR, or the workplace copy); missing, the test skips
    ("missing:"), and in CI it fails: the workplace copy is part of CI."""
    root = spot_ros2_anchor.anchor_dir()
    if not (root / "spot_driver" / "spot_driver" / "spot_ros2.py").is_file():
        reason = "spot_ros2's files (SPOT_ROS2_DIR, or ../shared/vendor/spot_ros2)"
        if os.environ.get("CI"):
            pytest.fail(f"CI without {reason}")
        missing(reason)
    return root


def spot_ros2_names(cells: list[list[str]]) -> set[str]:
    return {name for row in cells for name in names(row[0])}


def test_every_launch_argument_of_spot_ros2_has_a_row(anchor):
    theirs = spot_ros2_anchor.launch_arguments(anchor)
    assert {"launch_rviz", "publish_point_clouds", "mock_has_arm", "spot_name"} <= theirs
    assert sorted(theirs - spot_ros2_names(table("launch-table"))) == []


def test_every_parameter_of_spot_ros2_has_a_row(anchor):
    theirs = spot_ros2_anchor.parameters(anchor)
    assert {"leasing_mode", "trajectory_batch_size", "image_quality", "cameras_used"} <= theirs
    rows = spot_ros2_names(table("parameter-table"))
    assert sorted(theirs - rows) == []
    assert sorted(rows - theirs) == [], "a row for a parameter spot_ros2 does not have"


def test_every_interface_of_spot_ros2_has_a_row_with_its_type(anchor):
    """Each name spot_ros2 offers, with each type it offers it with, is a row; no row names
    one it does not offer."""
    theirs = {(o.name, o.type) for o in spot_ros2_anchor.interfaces(anchor)}
    assert len(theirs) > 100 and ("claim_leases", "std_srvs/srv/Trigger") in theirs
    assert ("spot_joint_controller/joint_commands", "spot_msgs/msg/JointCommand") in theirs
    rows = {(row.theirs, row.their_type) for row in interfaces()}
    assert sorted(theirs - rows) == [], "spot_ros2 offers these; the page has no row"
    assert sorted(rows - theirs) == [], "rows for what spot_ros2 does not offer"


def test_the_how_column_is_computed_from_both_definitions(anchor):
    """The page's categories and field differences are what scripts/render_migration.py
    computes from spot_ros2's definitions and ours (run it after editing a row)."""
    text = render_migration.PAGE.read_text()
    rendered = render_migration.render(text, render_migration.comparison(anchor),
                                       render_migration.aliased())
    assert rendered == text, "doc/migration.md is stale: run scripts/render_migration.py"


def test_a_row_names_each_kind_of_difference(tmp_path):
    """Added, removed and retyped fields, constants, and fields of a nested type of the same
    name: each is named; identical definitions are "same"."""
    for side, state, header in (("theirs", "uint32 mode\nfloat32 height\nuint8 OFF=0",
                                 "Leg[] legs"),
                                ("ours", "uint8 hint\nfloat64 height\nuint8 OFF=1",
                                 "Leg[] legs\nstd_msgs/Header header")):
        (tmp_path / side / "msg").mkdir(parents=True)
        (tmp_path / side / "srv").mkdir(parents=True)
        (tmp_path / side / "msg" / "State.msg").write_text(f"# a comment\n{state}\n{header}\n")
        leg = "float64 mu" if side == "ours" else "float32 mu"
        (tmp_path / side / "msg" / "Leg.msg").write_text(leg + "\n")
        (tmp_path / side / "srv" / "Set.srv").write_text("bool on\n---\nbool success\n")
    compare = interface_diff.Comparison(
        interface_diff.Definitions({"spot_msgs": tmp_path / "theirs"}),
        interface_diff.Definitions({"spot_msgs": tmp_path / "ours"}))
    assert sorted(compare.differences("spot_msgs/msg/State", "spot_msgs/msg/State")) == [
        "+std_msgs/Header header", "+uint8 hint", "-uint32 mode", "OFF: uint8=0 → uint8=1",
        "height: float32 → float64", "legs[].mu: float32 → float64"]
    how = interface_diff.how
    assert how("set", "spot_msgs/srv/Set", "set", "spot_msgs/srv/Set", False, compare) == "same"
    assert how("set", "spot_msgs/srv/Set", "x/set", "spot_msgs/srv/Set", False,
               compare) == "renamed"
    assert how("set", "spot_msgs/srv/Set", "set", "spot_msgs/action/Set", False,
               compare) == "retyped: service → action"
    assert how("s", "spot_msgs/msg/State", "s", "spot_msgs/msg/State", False,
               compare).startswith("fields differ: `+std_msgs/Header header`; ")
    assert how("s", "spot_msgs/msg/State", None, None, False, compare) == "none"
