"""``nodes.periodic.Periodic``: the driver's status polls on threads of their own."""

import itertools
import threading
import time

import pytest

from conftest import holds
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


def test_an_exception_is_reported_and_the_ticking_goes_on():
    reports, calls = [], []
    done = threading.Event()

    def failing() -> None:
        calls.append(1)
        if len(calls) >= 3:
            done.set()
        raise TimeoutError("robot said nothing")

    periodic = Periodic("poll", 0.01, failing, reports.append).start()
    assert done.wait(5.0)
    periodic.stop()
    assert reports[0] == "poll: TimeoutError: robot said nothing"


@pytest.mark.parametrize("period", [0.0, -1.0, float("nan")])
def test_a_period_that_is_not_positive_is_refused(period):
    with pytest.raises(ValueError, match="period"):
        Periodic("bad", period, lambda: None, print)
