"""The documentation site (doc/, Sphinx) builds with no warning, its generated pages say what
the registry and every launch file declare, and a link to a page that does not exist fails the
build."""

import shutil
import subprocess
import sys

from ros_harness import REPO

from spot_driver import registry

DOC = REPO / "doc"
sys.path.insert(0, str(DOC / "_ext"))
import generated_pages  # noqa: E402


def build(source, out) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q",
                           "-b", "html", str(source), str(out)],
                          capture_output=True, text=True, timeout=300)


def test_the_docs_build_with_no_warning_and_list_every_capability(tmp_path):
    result = build(DOC, tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    page = (tmp_path / "generated" / "capabilities.html").read_text()
    for capability in registry.CAPABILITIES:
        assert f"{capability.name}<a class=\"headerlink\"" in page, capability.name
    for name in registry.PARAMETERS:
        assert f">{name}<" in page, name
    examples = (tmp_path / "generated" / "examples.html").read_text()
    assert "walk_forward" in examples and "wiggle_arm" in examples
    migration = (tmp_path / "migration.html").read_text()
    assert migration.count("<tr") > 100  # its tables are tables
    arguments = (tmp_path / "generated" / "launch_arguments.html").read_text()
    for launch_file in sorted((REPO / "launch").glob("*.launch.py")):
        assert f"{launch_file.name}<a class=\"headerlink\"" in arguments, launch_file.name
        for argument in generated_pages.declared_arguments(launch_file):
            assert f">{argument.name}<" in arguments, (launch_file.name, argument.name)


def test_a_link_to_a_missing_page_fails_the_build(tmp_path):
    source = tmp_path / "doc"
    shutil.copytree(DOC, source, ignore=shutil.ignore_patterns("generated", "_build"))
    with (source / "migration.md").open("a") as page:
        page.write("\nSee [the old page](nowhere.md).\n")
    result = build(source, tmp_path / "out")
    assert result.returncode != 0
    assert "nowhere" in result.stderr, result.stderr[-3000:]


def test_the_tests_page_names_every_test_file():
    """doc/tests.md promises what each file proves: every test file is named there."""
    page = (REPO / "doc" / "tests.md").read_text()
    unnamed = sorted(p.name for p in (REPO / "test").glob("test_*.py") if f"`{p.name}`"
                     not in page and p.name not in page)
    assert not unnamed, f"doc/tests.md does not name {unnamed}"
