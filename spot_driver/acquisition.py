"""Pipelined, paced acquisition of robot data streams (cameras, point clouds).

One scheduler thread issues each stream's asynchronous RPC at the stream's rate, with up to
``max_in_flight`` requests outstanding per stream, so a stream's rate does not depend on its
round-trip time. Responses are handed to a small worker pool for decoding and publishing, off
both the gRPC threads and the ROS executor. A slow or failing stream only delays itself.
"""

import heapq
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

_LOG = logging.getLogger(__name__)
IDLE_RECHECK_S = 0.25  # how often a stream nobody consumes is asked again
ADDED_LATENCY_SAMPLES = 1000  # the driver's added latency is reported over the last this many


@dataclass
class StreamStats:
    """Counters of one stream, read by diagnostics and benchmarks."""

    requested: int = 0
    delivered: int = 0
    skipped: int = 0  # ticks missed because max_in_flight requests were outstanding
    dropped: int = 0  # messages not published: a reader had not acknowledged the previous one
    errors: int = 0
    last_error: str = ""
    # the driver's own added latency of the latest responses: response received -> handled
    # (decoded and published), in ns, waiting for a worker included
    added_ns: deque = field(default_factory=lambda: deque(maxlen=ADDED_LATENCY_SAMPLES))

    def added_ms(self, *quantiles: float) -> tuple[float, ...] | None:
        """The ``quantiles`` (0-1) of the recent added latencies in ms; None before any."""
        values = sorted(tuple(self.added_ns))  # a snapshot: one C call under the GIL
        if not values:
            return None
        return tuple(values[min(len(values) - 1, int(q * len(values)))] / 1e6
                     for q in quantiles)


def check_rate(name: str, rate_hz: float, max_hz: float = 100.0) -> None:
    """Raise ValueError unless ``rate_hz`` is a usable stream rate, (0, max_hz] Hz."""
    if not 0 < rate_hz <= max_hz:
        raise ValueError(f"{name}: rate must be in (0, {max_hz:g}] Hz, not {rate_hz}")


class Stream:
    """A periodic robot request and what to do with its response; subclass per data type."""

    name = "stream"
    max_rate = 100.0  # Hz

    def __init__(self, rate_hz: float, max_in_flight: int = 2,
                 report: Callable[[str], None] | None = None) -> None:
        check_rate(self.name, rate_hz, self.max_rate)
        self.rate = rate_hz
        self.period = 1.0 / rate_hz
        self.max_in_flight = max(1, int(max_in_flight))
        self.in_flight = 0
        self.enabled = True  # False: paused (not requested) until enabled again
        self.stats = StreamStats()
        self._report = report

    def set_rate(self, rate_hz: float) -> None:
        """A new rate, in effect from the next request on."""
        check_rate(self.name, rate_hz, self.max_rate)
        self.rate, self.period = rate_hz, 1.0 / rate_hz

    def wanted(self) -> bool:
        """Whether anyone consumes this stream now (otherwise the tick is not requested)."""
        return True

    def request(self) -> Any:
        """Start the RPC; returns a future with ``add_done_callback`` and ``result``."""
        raise NotImplementedError

    def handle(self, response: Any) -> None:
        """Decode and publish one response (runs on a worker thread); raise on bad data."""
        raise NotImplementedError

    def report_error(self, message: str) -> None:
        """Called with a plain description when a request or its data fails."""
        if self._report is not None:
            self._report(f"{self.name}: {message}")
        else:
            _LOG.warning("%s: %s", self.name, message)


class Scheduler:
    """Drives a set of streams until ``stop()``."""

    def __init__(self, streams: list[Stream], workers: int = 2,
                 describe: Callable[[BaseException], str] = str) -> None:
        self.streams = list(streams)
        self._describe = describe
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="acquire")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._added: queue.SimpleQueue[Stream] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="acquire-scheduler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def add(self, stream: Stream) -> None:
        """Start driving another stream (thread-safe)."""
        self._added.put(stream)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _run(self) -> None:
        now = time.monotonic()
        # Spread the first requests over the shortest period, so streams of equal rate take
        # turns instead of queueing behind each other for the workers (image age).
        count = len(self.streams)
        spacing = min((s.period for s in self.streams), default=0.0) / max(count, 1)
        due = [(now + i * spacing, i) for i in range(count)]
        heapq.heapify(due)
        while not self._stop.is_set():
            while not self._added.empty():
                self.streams.append(self._added.get())
                heapq.heappush(due, (time.monotonic(), len(self.streams) - 1))
            if not due:
                self._stop.wait(IDLE_RECHECK_S)
                continue
            when, index = due[0]
            delay = when - time.monotonic()
            if delay > 0:
                self._stop.wait(min(delay, IDLE_RECHECK_S))
                continue
            heapq.heappop(due)
            stream = self.streams[index]
            if self._tick(stream):
                following = when + stream.period
                if following < time.monotonic() - stream.period:  # fell behind: do not burst
                    following = time.monotonic() + stream.period
            else:  # nobody consumes it: look again a little later
                following = time.monotonic() + max(stream.period, IDLE_RECHECK_S)
            heapq.heappush(due, (following, index))

    def _tick(self, stream: Stream) -> bool:
        """Request one sample if the stream is wanted; False when it is not."""
        try:
            if not stream.enabled or not stream.wanted():
                return False
        except Exception as exc:  # a consumer check must not kill the scheduler
            _LOG.debug("%s: wanted() failed: %s", stream.name, exc)
            return False
        with self._lock:
            if stream.in_flight >= stream.max_in_flight:
                stream.stats.skipped += 1
                return True
            stream.in_flight += 1
        stream.stats.requested += 1
        try:
            future = stream.request()
        except Exception as exc:
            self._finished(stream)
            self._fail(stream, exc)
            return True
        future.add_done_callback(lambda done: self._submit(stream, done))
        return True

    def _submit(self, stream: Stream, future: Any) -> None:
        try:
            self._pool.submit(self._process, stream, future, time.monotonic_ns())
        except RuntimeError:  # pool shut down while a request was outstanding
            self._finished(stream)

    def _finished(self, stream: Stream) -> None:
        with self._lock:
            stream.in_flight -= 1

    def _process(self, stream: Stream, future: Any, received_ns: int) -> None:
        try:
            response = future.result()
        except Exception as exc:
            self._finished(stream)
            self._fail(stream, exc)
            return
        self._finished(stream)
        try:
            stream.handle(response)
        except Exception as exc:
            self._fail(stream, exc)
            return
        stream.stats.added_ns.append(time.monotonic_ns() - received_ns)

    def _fail(self, stream: Stream, exc: BaseException) -> None:
        message = self._describe(exc)
        stream.stats.errors += 1
        stream.stats.last_error = message
        stream.report_error(message)
