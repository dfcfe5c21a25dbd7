"""Shared fixtures: a simulated Spot on 127.0.0.1 and SDK clients connected to it."""

import contextlib
import faulthandler
import io
import itertools
import os
import sys
import tempfile
import time
import wave

# Before spot_sim is imported (its recorder reads it once): where the simulated robots and
# drivers this pytest process starts note exceptions no handler expected (crash_log.py).
os.environ["SPOT_CRASH_LOG"] = os.path.join(tempfile.mkdtemp(prefix="spot_crashes_"),
                                            "crashes.log")
from pathlib import Path

import bosdyn.client
import process_leaks
import pytest
from bosdyn.choreography.client.choreography import ChoreographyClient
from bosdyn.client import spot_cam
from bosdyn.client.robot_command import RobotCommandStreamingClient
from bosdyn.client.robot_state import RobotStateStreamingClient
from bosdyn.mission.client import MissionClient

from spot_sim import SimConfig, SimulatedSpot
from spot_sim.core.field import PROFILES

SESSION = process_leaks.mark_session()  # before this process starts anything

MISSING = "missing: "  # how a skip reason starts when it names a thing this machine lacks
_REPO = Path(__file__).resolve().parent.parent


def _sdk_checkout() -> Path | None:
    """The spot-sdk checkout whose example programs the tests run: ``SPOT_SDK_DIR`` where the
    user set one, else the workplace copy ``../shared/vendor/spot-sdk`` (v5.1.4, unmodified);
    None when neither has ``python/examples``."""
    chosen = os.environ.get("SPOT_SDK_DIR")
    path = Path(chosen) if chosen else _REPO.parent / "shared" / "vendor" / "spot-sdk"
    return path.resolve() if (path / "python" / "examples").is_dir() else None


SDK_DIR = _sdk_checkout()
SDK_EXAMPLES = SDK_DIR / "python" / "examples" if SDK_DIR else None
USERNAME = "tester"
PASSWORD = "correct horse battery staple"
_client_names = itertools.count()


@pytest.fixture(scope="session")
def certs_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("certs")


def part(robot, kind: type):
    """One part of a simulated robot (``Base``, ``Legs``, ``Arm``, ...) for a test to look at,
    through the robot's door: a glance between its steps, as a test looks, not one of them."""
    with robot.parts(kind) as (found,):
        return found


@contextlib.contextmanager
def running_sim(certs_dir, **overrides):
    """A simulated robot; ``SPOT_SIM_PROFILE=field`` (``make test-field``) plays the field
    profile unless the test chose its own."""
    overrides.setdefault("field", PROFILES[os.environ.get("SPOT_SIM_PROFILE", "default")])
    config = SimConfig(username=USERNAME, password=PASSWORD, **overrides)
    with SimulatedSpot(config, certs_dir=certs_dir) as sim:
        yield sim


@pytest.fixture
def sim(certs_dir):
    """A fresh simulated robot for each test (starts in well under a second)."""
    with running_sim(certs_dir) as spot:
        yield spot


def connect(sim: SimulatedSpot, authenticate: bool = True, password: str = PASSWORD):
    """An SDK Robot for ``sim``, exactly as an application would create one."""
    sdk = bosdyn.client.create_standard_sdk(f"test-client-{next(_client_names)}",
                                            service_clients=[MissionClient,
                                                             ChoreographyClient,
                                                             RobotCommandStreamingClient,
                                                             RobotStateStreamingClient])
    spot_cam.register_all_service_clients(sdk)  # used only where the robot has a Spot CAM
    sdk.load_robot_cert(str(sim.ca_cert))
    robot = sdk.create_robot("127.0.0.1")
    robot.update_secure_channel_port(sim.port)
    if authenticate:
        robot.authenticate(USERNAME, password)
    return robot


def client(robot, client_type):
    """``robot``'s SDK client of ``client_type``, by its default service name."""
    return robot.ensure_client(client_type.default_service_name)


@pytest.fixture
def robot(sim):
    robot = connect(sim)
    yield robot
    robot.time_sync.stop()


@pytest.fixture(scope="module")
def equipped_sim(tmp_path_factory):
    """A simulated robot with an arm, a Spot CAM and the audio-visual system, for a module."""
    with running_sim(tmp_path_factory.mktemp("certs"), has_arm=True, has_spot_cam=True,
                     has_audio_visual=True) as spot:
        yield spot


@pytest.fixture
def equipped_robot(equipped_sim):
    robot = connect(equipped_sim)
    yield robot
    robot.time_sync.stop()


@pytest.fixture(autouse=True)
def no_crash(request):
    """A test fails when the simulated robot or the driver met an exception no handler
    expected while it ran (a handler that raised, turned into CODE_INTERNAL_SERVER_ERROR or
    an "internal error" refusal): a crash cannot pass as a refusal. A test that plants one on
    purpose says so, ``@pytest.mark.crash_expected("why")``, and then fails when none was
    written: it shows the detector fires."""
    log = Path(os.environ["SPOT_CRASH_LOG"])
    start = log.stat().st_size if log.exists() else 0
    yield
    crashes = []
    if log.exists():
        with log.open(encoding="utf-8") as file:
            file.seek(start)
            crashes = file.read().splitlines()
    if request.node.get_closest_marker("crash_expected"):
        if not crashes:
            pytest.fail("a planted crash, and the crash log recorded none", pytrace=False)
    elif crashes:
        pytest.fail("exceptions no handler expected, during this test:\n"
                    + "\n".join(crashes[:20]), pytrace=False)


@pytest.fixture(scope="module", autouse=True)
def no_leftover_processes():
    """After each module: stop the drivers and simulators it started and left running, and
    close its ROS clients (a world fixture whose setup failed)."""
    yield
    from ros_harness import stop_leftovers

    stop_leftovers()


def wait_for(predicate, timeout: float = 5.0, period: float = 0.02) -> bool:
    """Whether ``predicate()`` became true within ``timeout`` s (polled every ``period``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period)
    return bool(predicate())


def holds(predicate, seconds: float, period: float = 0.02) -> bool:
    """Whether ``predicate()`` stayed true for all of ``seconds`` (polled every ``period``):
    "nothing happens for a while", checked throughout rather than once at the end."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not predicate():
            return False
        time.sleep(period)
    return bool(predicate())


def wav_bytes(seconds: float, rate: int = 8000) -> bytes:
    """A silent mono 16-bit WAV file of ``seconds``."""
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(rate)
        sound.writeframes(bytes(2 * int(seconds * rate)))
    return out.getvalue()


def missing(thing: str) -> None:
    """Skip a test for ``thing`` this machine lacks (a program, a checkout, a kernel
    feature). In CI only such skips are allowed; any other skip fails there."""
    pytest.skip(MISSING + thing)


# What each layer of the ROS tools kit (scripts/ros_tools.sh) costs to build from nothing on
# this 2-core machine, measured (doc/developer_notes.md): what a skip says it would take.
KIT_LAYERS = {
    "tools": ("make ros-tools", "about 18 min on 2 cores"),
    "nav2": ("make nav2-tools", "about 60 min on 2 cores, after ros-tools"),
    "rviz": ("make rviz-tools", "about 75 min on 2 cores, after ros-tools"),
    "moveit": ("make moveit-tools", "about 4 h on 2 cores, after ros-tools"),
    "moveit_rviz": ("make moveit-rviz-tools", "about 25 min on 2 cores, after rviz-tools and "
                    "moveit-tools"),
}


def kit_status(layer: str) -> str:
    """``ready`` (built, unpacked, or an installed ROS 2 has it), ``archive`` (a prebuilt
    archive in ../shared/vendor/ros2-cpp matches this clone but is not unpacked) or
    ``absent``: what ``scripts/ros_tools.sh status`` says."""
    import subprocess
    return subprocess.run(["bash", str(_REPO / "scripts" / "ros_tools.sh"), "status"],
                          env={**os.environ, "LAYER": layer}, capture_output=True, text=True,
                          check=True).stdout.strip()


def require_layer(layer: str, packages: tuple[str, ...], modules: tuple[str, ...] = ()) -> None:
    """The kit layer's ``packages`` (ament) and Python ``modules`` are installed, else the test
    skips (``missing:``) saying which make target builds them and how long that takes. A skip
    is a failure where the layer is there but its packages are not found (a broken
    environment), and in CI where a matching archive is there but was not unpacked (``make
    setup`` unpacks it)."""
    import importlib

    from ament_index_python.packages import PackageNotFoundError, get_package_prefix
    try:
        for package in packages:
            get_package_prefix(package)
        for module in modules:
            importlib.import_module(module)
    except (PackageNotFoundError, ImportError) as exc:
        status, (target, cost) = kit_status(layer), KIT_LAYERS[layer]
        if status == "ready":
            pytest.fail(f"the {layer} layer is here but {exc} (is scripts/env.sh sourced?)")
        if status == "archive" and os.environ.get("CI"):
            pytest.fail(f"CI: the {layer} layer's prebuilt archive matches this clone but is "
                        "not unpacked (make setup unpacks it)")
        missing(f"{', '.join(packages + modules)} (the {layer} layer: {target} builds it, "
                f"{cost}; no prebuilt archive in ../shared/vendor/ros2-cpp matches)")


@pytest.fixture
def sdk_examples() -> Path:
    """The SDK's ``python/examples``. Missing, the test skips ("missing:"); in CI (``CI``
    set) it fails, as a missing ``ros2 launch`` does: the workplace copy is part of CI."""
    if SDK_EXAMPLES is None:
        reason = ("a spot-sdk checkout (SPOT_SDK_DIR, or the workplace copy "
                  "../shared/vendor/spot-sdk): its example programs are in no package")
        if os.environ.get("CI"):
            pytest.fail(f"CI without {reason}")
        missing(reason)
    return SDK_EXAMPLES


def pytest_sessionfinish(session, exitstatus) -> None:
    """A process the session started and left running fails the session: a driver or a
    launched node with no robot left retries for hours, takes CPU from the next tests and
    keeps their log files open. It is named, then killed."""
    leaked = process_leaks.end_leaks(SESSION)
    if leaked:
        sys.stderr.write("\nprocesses this session started and left running (killed now):\n"
                         + "".join(f"  {pid}: {command[:300]}\n"
                                   for pid, command in leaked.items()))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config) -> None:
    """A test process still alive a minute after its session ended is stuck at exit (a thread
    or child someone left running): every thread's stack goes to stderr and the process ends
    with status 1, a failure with its cause in the log rather than a lane that never ends."""
    faulthandler.dump_traceback_later(60, exit=True, file=sys.__stderr__)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI, a skip that does not name a missing thing is a failure (a test that CI could
    run but does not is a hidden gap), and so is an xfail."""
    outcome = yield
    _hold_to_ci_rules(outcome.get_result())


def pytest_collectreport(report):
    """The same rules for what collection skips (a module-level skip or importorskip)."""
    _hold_to_ci_rules(report)


def _hold_to_ci_rules(report) -> None:
    """In CI (``CI`` set): an xfail fails (a known failure is a failure), and so does a skip
    that does not name a missing thing."""
    if not os.environ.get("CI"):
        return
    if hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"xfail in CI: {report.wasxfail}"
        return
    if not (report.skipped and isinstance(report.longrepr, tuple)):
        return
    reason = report.longrepr[2].removeprefix("Skipped: ")
    if not reason.startswith(MISSING):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI without naming a missing thing: {reason}"
