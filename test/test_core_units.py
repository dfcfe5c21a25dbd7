"""The driver's core without a ROS graph or robot: credentials from the environment or a
file, the robot-state cache's readiness and freshness rules, the supervisor, Trigger
callbacks and the shutdown request."""

import logging
import os
import signal
import stat
import threading
import time

import pytest
from bosdyn.api import robot_state_pb2

from spot_driver.core.credentials import CredentialsError, load_credentials
from spot_driver.core.errors import CommandError
from spot_driver.core.shutdown import ShutdownRequest
from spot_driver.nodes.triggers import trigger_callback


def test_credentials_from_environment_and_file(tmp_path):
    env = {"BOSDYN_CLIENT_USERNAME": "u", "BOSDYN_CLIENT_PASSWORD": "s3cret"}
    creds = load_credentials("", env)
    assert (creds.username, creds.password) == ("u", "s3cret")
    assert "s3cret" not in repr(creds) and "s3cret" not in str(creds)
    with pytest.raises(CredentialsError, match="BOSDYN_CLIENT_USERNAME"):
        load_credentials("", {})

    path = tmp_path / "creds"
    path.write_text("# robot login\nusername=alice\npassword=hunter2\n")
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    warnings = []
    assert load_credentials(str(path), {}, warnings.append).password == "hunter2"
    assert warnings == []
    os.chmod(path, 0o644)
    load_credentials(str(path), {}, warnings.append)
    assert warnings and "chmod 600" in warnings[0]
    with pytest.raises(CredentialsError) as missing:
        load_credentials(str(tmp_path / "nope"), {})
    assert "credentials_file" in str(missing.value)
    path.write_text("username=alice\n")
    with pytest.raises(CredentialsError, match="password="):
        load_credentials(str(path), {})

def test_a_command_is_refused_on_motors_off_only_when_newer_states_say_so_too():
    """A state from before a power-on that just succeeded does not refuse a command: newer
    states are awaited for a moment first."""
    import threading
    import time

    from spot_driver.core.state_cache import RobotStateCache

    def state(on: bool) -> robot_state_pb2.RobotState:
        out = robot_state_pb2.RobotState()
        out.power_state.motor_power_state = (robot_state_pb2.PowerState.STATE_ON if on
                                             else robot_state_pb2.PowerState.STATE_OFF)
        return out

    cache = RobotStateCache()
    cache.require_ready()  # no state yet: the robot decides
    cache.update(state(False))
    timer = threading.Timer(0.1, lambda: cache.update(state(True)))
    timer.start()
    cache.require_ready(settle_s=2.0)  # the newer state shows the motors on
    timer.join()
    cache.update(state(False))
    start = time.monotonic()
    with pytest.raises(CommandError, match="not powered on"):
        cache.require_ready(settle_s=0.3)
    assert 0.25 < time.monotonic() - start < 10.0  # waited the settle time; returned

def test_a_result_waits_for_a_state_the_robot_took_after_it():
    """A state received later may have been taken earlier (pipelined requests): the wait is
    for the robot's acquisition time; without such a state it gives the newest after the
    timeout."""
    import threading
    import time

    from spot_driver.core.state_cache import RobotStateCache

    def taken_at(ns: int) -> robot_state_pb2.RobotState:
        out = robot_state_pb2.RobotState()
        stamp = out.kinematic_state.acquisition_timestamp
        stamp.seconds, stamp.nanos = divmod(ns, 1_000_000_000)
        return out

    cache = RobotStateCache()
    cache.update(taken_at(5_000_000_000))
    feeds = [threading.Timer(0.05, lambda: cache.update(taken_at(9_000_000_000))),
             threading.Timer(0.15, lambda: cache.update(taken_at(11_000_000_000)))]
    for feed in feeds:
        feed.start()
    state = cache.wait_acquired_after(10_000_000_000, timeout=5.0)
    assert state.kinematic_state.acquisition_timestamp.seconds == 11  # not the 9 s one
    start = time.monotonic()
    state = cache.wait_acquired_after(20_000_000_000, timeout=0.2)
    assert state.kinematic_state.acquisition_timestamp.seconds == 11  # the newest
    assert 0.15 < time.monotonic() - start < 5.0

def test_a_supervisor_never_started_stops_quietly(caplog):
    """A driver whose nodes fail to start stops its supervisor before starting it: the
    startup error must not be hidden by a second one. Quietly: no exception (joining a
    thread never started raises), no wait, no log line."""
    from spot_driver.core.supervisor import ConnectionSupervisor

    supervisor = ConnectionSupervisor(connection=None)
    began = time.monotonic()
    with caplog.at_level(logging.DEBUG):
        supervisor.stop()
    assert time.monotonic() - began < 0.5
    assert not caplog.records, [r.getMessage() for r in caplog.records]


class _Logger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def warning(self, line: str) -> None:
        self.lines.append(line)


class _Response:
    success, message = False, ""


def test_trigger_callback_reports_success_and_the_reason_of_a_failure():
    logger = _Logger()
    ok = trigger_callback(logger, "stand", lambda: "standing")(None, _Response())
    assert (ok.success, ok.message, logger.lines) == (True, "standing", [])

    def refuse() -> str:
        raise CommandError("not powered on; call 'power_on' first")

    refused = trigger_callback(logger, "stand", refuse)(None, _Response())
    assert (refused.success, refused.message) == (False, "not powered on; call 'power_on' "
                                                  "first")
    assert logger.lines == ["stand: not powered on; call 'power_on' first"]


def test_the_first_signal_requests_shutdown_and_later_ones_are_ignored():
    repeats: list[str] = []
    request = ShutdownRequest(on_repeat=repeats.append)
    request._handle(signal.SIGTERM, None)
    request._handle(signal.SIGINT, None)
    assert request.is_set() and request.signal_name == "SIGTERM" and repeats == ["SIGINT"]
    other = ShutdownRequest()
    threading.Timer(0.05, other.request).start()
    assert other.wait(10.0) and other.signal_name == ""


@pytest.mark.crash_expected("a planted defect: an OverflowError nobody expected")
def test_robot_data_and_a_replaced_session_are_not_internal_errors():
    """What the robot sent that cannot be read, and a call on the channel a reconnection
    closed, are said as such and counted as no defect; any other ValueError is one."""
    from spot_common import crash_log
    from spot_driver.core.errors import CLOSED_CHANNEL, INTERNAL, describe
    from spot_driver.perception.images import ImageDecodeError

    before, _ = crash_log.count()
    assert describe(ImageDecodeError("corrupt JPEG (12 bytes)")) == "corrupt JPEG (12 bytes)"
    assert describe(ValueError(CLOSED_CHANNEL)).startswith("robot not reachable")
    assert describe(ValueError("Cannot invoke RPC: Channel closed!")).startswith(
        "robot not reachable")  # grpc's other sentence for it (a CI run's)
    assert crash_log.count()[0] == before
    assert describe(OverflowError("cannot convert float infinity to integer")).startswith(
        INTERNAL)
