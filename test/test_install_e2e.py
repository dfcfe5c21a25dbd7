"""The packages as a user's plain ``colcon build`` of the repository finds and installs them
(no --symlink-install, no --paths): spot_description, spot_common, spot_driver, spot_sim and
spot_driver_examples are siblings and the root is no package; every module and data file is
installed, and the driver and the simulator start from the install space alone, with the
source tree off the path. The simulator is built and started without the driver, and the
driver built without the simulator: neither needs the other.
(spot_msgs is built by colcon in scripts/setup.sh and found there, not built twice.)"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ros_harness import REPO, RosClient
from sensor_msgs.msg import JointState

from conftest import PASSWORD, USERNAME

PACKAGES = ("spot_description", "spot_common", "spot_driver", "spot_sim",
            "spot_driver_examples")
PYTHON = ("spot_common", "spot_driver", "spot_sim", "spot_driver_examples")  # with modules


def _build(base: Path, packages) -> Path:
    """A plain ``colcon build`` of ``packages`` in ``base``; its install space."""
    colcon = shutil.which("colcon")
    assert colcon, "colcon is not installed (scripts/setup.sh installs it)"
    result = subprocess.run(
        [colcon, "--log-base", str(base / "log"), "build", "--base-paths", str(REPO),
         "--packages-select", *packages,
         "--build-base", str(base / "build"), "--install-base", str(base / "install"),
         "--event-handlers", "console_cohesion-", "status-"],
        capture_output=True, text=True, timeout=300, cwd=base)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return base / "install"


@pytest.fixture(scope="module")
def install(tmp_path_factory):
    base = tmp_path_factory.mktemp("plain_colcon")
    found = subprocess.run([shutil.which("colcon") or "colcon", "list", "--names-only",
                            "--base-paths", str(REPO)],
                           capture_output=True, text=True, timeout=120, cwd=base)
    assert found.returncode == 0, found.stderr
    # the packages a plain `colcon build` at the root finds (compat/ steps aside: COLCON_IGNORE)
    assert sorted(found.stdout.split()) == sorted([*PACKAGES, "spot_msgs"]), found.stdout
    return _build(base, PACKAGES)


def _site(prefix: Path) -> Path:
    return next(prefix.glob("lib/python3*/site-packages"))


def _env(install: Path, packages=PACKAGES) -> dict:
    """The environment with the repository's own packages (source trees, symlink install)
    replaced by the plain install at ``install`` of ``packages`` (one prefix per package, as
    colcon's isolated layout has them): every other of them is off every path."""
    ours = [str(REPO / package) for package in PACKAGES]

    def theirs(variable: str) -> list[str]:
        return [p for p in os.environ.get(variable, "").split(os.pathsep)
                if p and p != str(REPO) and p not in ours
                and not any(p.startswith(str(REPO / tree / package))
                            for tree in ("install", "build") for package in PACKAGES)]

    prefixes = [install / package for package in packages]
    path, ament = theirs("PYTHONPATH"), theirs("AMENT_PREFIX_PATH")
    sites = [str(_site(install / package)) for package in packages if package in PYTHON]
    return dict(os.environ,
                PYTHONPATH=os.pathsep.join([*sites, *path]),
                AMENT_PREFIX_PATH=os.pathsep.join([*map(str, prefixes), *ament]),
                PYTHONUNBUFFERED="1")


def test_every_module_and_data_file_is_installed(install, tmp_path):
    for package in PYTHON:
        source, site = REPO / package / package, _site(install / package)
        sources = {p.relative_to(source).as_posix() for p in source.rglob("*")
                   if p.suffix in (".py", ".yaml") and "__pycache__" not in p.parts}
        installed = {p.relative_to(site / package).as_posix()
                     for p in (site / package).rglob("*") if p.suffix in (".py", ".yaml")}
        assert sources <= installed, f"{package}: not installed: {sorted(sources - installed)}"
        assert (install / package / "share" / package / "package.xml").is_file(), package
    share = install / "spot_driver" / "share" / "spot_driver"
    for name in ("launch/spot_driver.launch.py", "config/spot_driver.yaml", "rviz/spot.rviz"):
        assert (share / name).is_file(), name
    model = install / "spot_description" / "share" / "spot_description"
    for name in ("urdf/spot.urdf.xacro", "urdf/spot_kinematics.yaml", "srdf/spot.srdf"):
        assert (model / name).is_file(), name
    assert (install / "spot_sim" / "share" / "spot_sim" / "launch" / "spot_sim.launch.py").is_file()
    where = subprocess.run(
        [sys.executable, "-c", "import spot_driver.registry as r, spot_sim; "
         "from spot_sim.body import model; "
         "print(r.__file__); print(spot_sim.__file__); print(model.geometry_file()); "
         "print([n for c in r.CAPABILITIES for n in c.nodes])"],
        capture_output=True, text=True, env=_env(install), cwd=tmp_path, timeout=60)
    assert where.returncode == 0, where.stderr
    driver, sim, geometry = where.stdout.splitlines()[:3]
    assert driver.startswith(str(_site(install / "spot_driver"))), driver
    assert sim.startswith(str(_site(install / "spot_sim"))), sim
    assert geometry.startswith(str(model)), geometry  # the model's package, not the driver's


def test_driver_and_simulator_start_from_the_install_space(install, tmp_path, certs_dir):
    env = _env(install)
    sim = subprocess.Popen(
        [sys.executable, "-m", "spot_sim", "--port", "0", "--certs-dir", str(certs_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path,
        env=dict(env, SPOT_SIM_USERNAME=USERNAME, SPOT_SIM_PASSWORD=PASSWORD))
    driver = None
    log = open(tmp_path / "driver.log", "w")
    ros = RosClient("install_test_client")
    try:
        line = sim.stdout.readline()
        assert "listening on" in line, line
        port = line.rsplit(":", 1)[1].strip()
        ros2 = shutil.which("ros2")
        command = [ros2, "run", "spot_driver", "spot_driver"] if ros2 else \
            [str(install / "spot_driver" / "lib" / "spot_driver" / "spot_driver")]
        driver = subprocess.Popen(
            [*command, "--ros-args", "--params-file",
             str(install / "spot_driver/share/spot_driver/config/spot_driver.yaml"),
             "-p", "hostname:=127.0.0.1", "-p", f"port:={port}",
             "-p", f"certificate:={certs_dir / 'ca.crt'}"],
            stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True,
            env=dict(env, BOSDYN_CLIENT_USERNAME=USERNAME, BOSDYN_CLIENT_PASSWORD=PASSWORD))
        ros.subscribe("/joint_states", JointState)
        assert ros.wait_for(lambda: ros.received("/joint_states"), timeout=30.0), \
            (tmp_path / "driver.log").read_text()
        # Every capability came up: one service or action of each optional one answers.
        names = set()
        deadline = time.monotonic() + 30.0
        wanted = {"/dock/_action/send_goal", "/mission/pause", "/graph_nav/clear_map",
                  "/choreography/list_moves", "/arm/stop", "/stand"}
        while time.monotonic() < deadline and not wanted <= names:
            names = {name for name, _ in ros.node.get_service_names_and_types()}
            time.sleep(0.5)
        assert wanted <= names, sorted(wanted - names)
    finally:
        ros.close()
        if driver is not None:
            _stop_group(driver)
        if sim.poll() is None:
            sim.send_signal(signal.SIGINT)
            sim.wait(timeout=10)
        log.close()


def _stop_group(process: subprocess.Popen) -> None:
    """SIGINT to ``ros2 run`` and the driver it started (its own session), then wait until
    every process of the group is gone (SIGKILL after 15 s): none may outlive the test."""
    try:
        os.killpg(process.pid, signal.SIGINT)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 15.0
    while time.monotonic() < deadline:
        process.poll()
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def test_the_simulator_builds_and_starts_without_the_driver(tmp_path, certs_dir):
    """spot_sim with its two dependencies and nothing of spot_driver, built and on the paths."""
    packages = ("spot_description", "spot_common", "spot_sim")
    install = _build(tmp_path, packages)
    env = _env(install, packages)
    imported = subprocess.run([sys.executable, "-c", "import spot_driver"], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert imported.returncode != 0 and "No module named 'spot_driver'" in imported.stderr
    sim = subprocess.Popen(
        [sys.executable, "-m", "spot_sim", "--port", "0", "--certs-dir", str(certs_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=dict(env, SPOT_SIM_USERNAME=USERNAME, SPOT_SIM_PASSWORD=PASSWORD))
    try:
        line = sim.stdout.readline()
        assert "listening on" in line, line + sim.stderr.read()
    finally:
        sim.send_signal(signal.SIGINT)
        sim.wait(timeout=10)


def test_the_driver_builds_without_the_simulator(tmp_path):
    packages = ("spot_description", "spot_common", "spot_driver")
    install = _build(tmp_path, packages)
    env = _env(install, packages)
    out = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u, spot_driver.registry as r; "
         "from spot_driver.description import robot_model; "
         "assert u.find_spec('spot_sim') is None; print(len(r.CAPABILITIES)); "
         "print(robot_model.urdf_dir())"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1].startswith(str(install / "spot_description")), out.stdout
