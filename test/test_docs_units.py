"""The documentation site (doc/, Sphinx) builds with no warning, its generated pages say what
the registry and every launch file declare (a reference page per capability, with its
parameters, its interfaces and the tests named for it), and a link to a page that does not
exist fails the build."""

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
    overview = (tmp_path / "generated" / "capabilities.html").read_text()
    for name in (p.name for p in registry.SECTIONS[0].parameters):
        assert f">{name}<" in overview, name
    for capability in registry.CAPABILITIES:  # one reference page each
        page = (tmp_path / "generated" / "capabilities" / f"{capability.name}.html").read_text()
        assert f"{capability.name}<a class=\"headerlink\"" in page, capability.name
        assert f'href="capabilities/{capability.name}.html"' in overview, capability.name
        section = capability.parameters
        for name in (p.name for p in (section.parameters if section is not None else ())):
            assert f">{name}<" in page, (capability.name, name)
        if capability.readme:  # its section of the docs, topics, services and actions
            assert "Interfaces<a class=\"headerlink\"" in page, capability.name
        tests = sorted((REPO / "test").glob(f"test_{capability.name}_*.py"))
        assert all(f">{t.name}<" in page for t in tests), capability.name
    started = (tmp_path / "generated" / "getting_started.html").read_text()
    assert "A five-minute tour" in started and "Coming from spot_ros2" in started
    examples = (tmp_path / "generated" / "examples.html").read_text()
    assert "walk_forward" in examples and "wiggle_arm" in examples
    migration = (tmp_path / "migration.html").read_text()
    assert migration.count("<tr") > 100  # its tables are tables
    arguments = (tmp_path / "generated" / "launch_arguments.html").read_text()
    for launch_file in generated_pages.launch_files():
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
