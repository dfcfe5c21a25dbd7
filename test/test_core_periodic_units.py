"""``nodes.periodic.Periodic``: the driver's status polls on threads of their own."""

import itertools
import threading
import time

import pytest

from conftest import holds
from spot_common import crash_log
from spot_driver.core.errors import CommandError
from spot_driver.diagnostics import status
from spot_driver.nodes.periodic import Periodic


def test_calls_at_its_period_and_stops():
    calls = []
    periodic = Periodic("tick", 0.02, lambda: calls.append(time.monotonic()), print).start()
    deadline = time.monotonic() + 10.0
    while len(calls) < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    periodic.stop()
    count = len(calls)
    # five periods: a call after stop() would have come
    assert holds(lambda: len(calls) == count, 0.1)  # nothing after stop()
    assert count >= 20
    mean = (calls[19] - calls[0]) / 19
    assert 0.02 * 0.95 <= mean <= 0.02 * 2, mean  # never faster than its period; not halved
    assert all(b - a > 0.005 for a, b in itertools.pairwise(calls))


def test_a_slow_call_is_not_made_up_by_a_burst():
    calls = []

    def slow() -> None:
        calls.append(time.monotonic())
        if len(calls) == 2:
            time.sleep(0.3)  # sleep: a call ten periods late is what is tested

    periodic = Periodic("slow", 0.03, slow, print).start()
    deadline = time.monotonic() + 10.0
    while len(calls) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    periodic.stop()
    after = [b - a for a, b in itertools.pairwise(calls[2:])]
    assert len(after) >= 5 and min(after) > 0.014, after  # half a period apart at least


def ticks_of(error: Exception) -> list[str]:
    """What a periodic whose callback raises ``error`` reports over three ticks."""
    reports, calls = [], []
    done = threading.Event()

    def failing() -> None:
        calls.append(1)
        if len(calls) >= 3:
            done.set()
        raise error

    periodic = Periodic("poll", 0.01, failing, reports.append).start()
    assert done.wait(5.0)
    periodic.stop()
    return reports


def test_a_refusal_is_reported_and_the_ticking_goes_on():
    assert ticks_of(CommandError("robot said nothing"))[0] == "poll: robot said nothing"


@pytest.mark.crash_expected("a planted defect: a callback that raises ValueError")
def test_a_value_error_is_an_internal_error_counted_and_the_ticking_goes_on():
    """A ValueError out of a callback is a defect, not a refusal: reported as an internal
    error, counted (what /diagnostics shows) and written to the crash log."""
    before, _ = crash_log.count()
    reports = ticks_of(ValueError("cannot convert float NaN to integer"))
    assert reports[0] == "poll: internal error: ValueError: cannot convert float NaN to integer"
    count, last = crash_log.count()
    assert count >= before + 3 and "cannot convert float NaN" in last
    shown = status.internal_errors("spot_driver: ", "robot", count, last)  # on /diagnostics
    assert shown.level == bytes([status.ERROR]) and "cannot convert float NaN" in shown.message


@pytest.mark.parametrize("period", [0.0, -1.0, float("nan")])
def test_a_period_that_is_not_positive_is_refused(period):
    with pytest.raises(ValueError, match="period"):
        Periodic("bad", period, lambda: None, print)
