"""Rides out a lossy link: a blocking SDK call that fails with a transient transport error is
sent again, a couple of times, before the failure reaches the caller.

Over Wi-Fi a robot's answer is sometimes lost (gRPC UNAVAILABLE, a proxy or connection reset)
or a hop's deadline expires quickly; the SDK classes these as ``RetryableRpcError``. A query
sent again is harmless; so is a command here: the driver's commands are idempotent at the
robot (stand, power, a goal or a trajectory sent again replaces the first, a new lease is
attached to each attempt). A deadline that expired after a long wait is not retried (the
caller already waited its timeout), nor are a response too large or a service that failed
while running (sending those again changes nothing). An asynchronous call is sent again only
when its caller waits for it with ``result()`` (as the SDK's power and command helpers poll
their feedback); a stream that reads its futures in done-callbacks sends its next request
anyway.
"""

import time
from collections.abc import Callable

from bosdyn.client.exceptions import (
    ResponseTooLargeError,
    RetryableRpcError,
    ServiceFailedDuringExecutionError,
    TimedOutError,
)

ATTEMPTS = 3
BACKOFF_S = (0.05, 0.15)  # before the second and the third attempt
QUICK_TIMEOUT_S = 1.0  # a deadline error sooner than this came from the link, not our wait


def is_transient(exc: BaseException, elapsed_s: float) -> bool:
    """Whether a failed call is worth sending again."""
    if not isinstance(exc, RetryableRpcError):
        return False
    if isinstance(exc, ResponseTooLargeError | ServiceFailedDuringExecutionError):
        return False
    return not isinstance(exc, TimedOutError) or elapsed_s < QUICK_TIMEOUT_S


def call_with_retries(method: Callable, *args, sleep: Callable[[float], None] = time.sleep,
                      **kwargs):
    """``method(*args, **kwargs)``, sent again after a transient failure."""
    for attempt in range(ATTEMPTS):
        started = time.monotonic()
        try:
            return method(*args, **kwargs)
        except RetryableRpcError as exc:
            if attempt == ATTEMPTS - 1 or not is_transient(exc, time.monotonic() - started):
                raise
            sleep(BACKOFF_S[attempt])
    raise AssertionError("unreachable")


class RetryingFuture:
    """An SDK future whose ``result()`` sends the call again (blocking, with retries) after a
    transient failure; everything else is the original future's."""

    def __init__(self, future, again: Callable[[], object]) -> None:
        self._future = future
        self._again = again

    def result(self, timeout: float | None = None):
        started = time.monotonic()
        try:
            return self._future.result(timeout=timeout)
        except RetryableRpcError as exc:
            if not is_transient(exc, time.monotonic() - started):
                raise
            return call_with_retries(self._again)

    def __getattr__(self, name: str):
        return getattr(self._future, name)


class RetryingClient:
    """An SDK client (or a wrapper of one) whose calls ride out transient errors."""

    def __init__(self, client: object) -> None:
        self._client = client

    def __getattr__(self, name: str):
        """Called once per attribute name; wrappers are kept on the instance."""
        attribute = getattr(self._client, name)
        if not callable(attribute) or name.startswith("_"):
            return attribute
        if name.endswith("_async"):
            blocking = getattr(self._client, name[:-len("_async")], None)
            if blocking is None:
                return attribute

            def call(*args, **kwargs):
                return RetryingFuture(attribute(*args, **kwargs),
                                      lambda: blocking(*args, **kwargs))
        else:
            def call(*args, **kwargs):
                return call_with_retries(attribute, *args, **kwargs)

        setattr(self, name, call)
        return call
