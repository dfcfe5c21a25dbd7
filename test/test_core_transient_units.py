"""The driver's retry of transient link errors (spot_driver.core.transient), without a robot."""

import pytest
from bosdyn.client.exceptions import (
    InvalidRequestError,
    ResponseTooLargeError,
    TimedOutError,
    UnableToConnectToRobotError,
)

from spot_driver.core.transient import ATTEMPTS, RetryingClient, call_with_retries, is_transient


def failing(times: int, error: Exception):
    calls = []

    def method(value):
        calls.append(value)
        if len(calls) <= times:
            raise error
        return value * 2

    return method, calls


def test_transient_errors_are_sent_again_until_they_pass():
    method, calls = failing(ATTEMPTS - 1, UnableToConnectToRobotError(None, "lost"))
    pauses = []
    assert call_with_retries(method, 21, sleep=pauses.append) == 42
    assert calls == [21] * ATTEMPTS and len(pauses) == ATTEMPTS - 1


def test_a_lasting_failure_reaches_the_caller_after_the_last_attempt():
    method, calls = failing(ATTEMPTS, UnableToConnectToRobotError(None, "down"))
    with pytest.raises(UnableToConnectToRobotError):
        call_with_retries(method, 1, sleep=lambda _: None)
    assert len(calls) == ATTEMPTS


def test_what_is_not_transient_is_not_sent_again():
    assert not is_transient(InvalidRequestError(None, "bad"), 0.0)
    assert not is_transient(ResponseTooLargeError(None, "big"), 0.0)
    assert is_transient(TimedOutError(None, "hop"), 0.05)  # a hop's deadline, at once
    assert not is_transient(TimedOutError(None, "ours"), 5.0)  # the caller's own wait
    method, calls = failing(1, ResponseTooLargeError(None, "big"))
    with pytest.raises(ResponseTooLargeError):
        call_with_retries(method, 1, sleep=lambda _: None)
    assert len(calls) == 1


class _Future:
    """What an SDK future offers: a result (or its error) and done-callbacks."""

    def __init__(self, value=None, error: Exception | None = None) -> None:
        self.value, self.error, self.callbacks = value, error, []

    def result(self, timeout=None):
        if self.error is not None:
            raise self.error
        return self.value

    def add_done_callback(self, callback) -> None:
        self.callbacks.append(callback)
        callback(self)


def test_the_client_wrapper_retries_calls_and_waited_futures():
    class Client:
        name = "robot-state"

        def __init__(self):
            self.sync, self.sent = failing(1, UnableToConnectToRobotError(None, "x"))

        def get_state(self, value):
            return self.sync(value)

        def get_state_async(self, value):
            try:
                return _Future(self.sync(value))
            except UnableToConnectToRobotError as exc:
                return _Future(error=exc)

    wrapped = RetryingClient(Client())
    assert wrapped.name == "robot-state"
    assert wrapped.get_state(2) == 4  # failed once, sent again
    client = Client()
    future = RetryingClient(client).get_state_async(2)
    assert future.result() == 4 and client.sent == [2, 2]  # waited for: sent again
    client = Client()
    seen = []
    RetryingClient(client).get_state_async(2).add_done_callback(seen.append)
    with pytest.raises(UnableToConnectToRobotError):  # a stream's callback sees the failure
        seen[0].result()
    assert client.sent == [2]
