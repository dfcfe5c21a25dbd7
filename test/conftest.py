"""Shared fixtures: a simulated Spot on 127.0.0.1 and SDK clients connected to it."""

import contextlib
import io
import itertools
import os
import wave

import bosdyn.client
import pytest
from bosdyn.choreography.client.choreography import ChoreographyClient
from bosdyn.client import spot_cam
from bosdyn.client.robot_command import RobotCommandStreamingClient
from bosdyn.client.robot_state import RobotStateStreamingClient
from bosdyn.mission.client import MissionClient

from spot_sim import SimConfig, SimulatedSpot
from spot_sim.field import PROFILES

MISSING = "missing: "  # how a skip reason starts when it names a thing this machine lacks
USERNAME = "tester"
PASSWORD = "correct horse battery staple"
_client_names = itertools.count()


@pytest.fixture(scope="session")
def certs_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("certs")


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


@pytest.fixture
def robot(sim):
    robot = connect(sim)
    yield robot
    robot.time_sync.stop()


@pytest.fixture(scope="module", autouse=True)
def no_leftover_processes():
    """After each module: stop the drivers and simulators it started and left running, and
    close its ROS clients (a world fixture whose setup failed)."""
    yield
    from ros_harness import stop_leftovers

    stop_leftovers()


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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI (``CI`` set), a skip that does not name a missing thing is a failure: a test
    that CI could run but does not is a hidden gap."""
    outcome = yield
    report = outcome.get_result()
    if not (os.environ.get("CI") and report.skipped and isinstance(report.longrepr, tuple)):
        return
    reason = report.longrepr[2].removeprefix("Skipped: ")
    if not reason.startswith(MISSING):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI without naming a missing thing: {reason}"
