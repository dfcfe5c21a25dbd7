"""Pipelined, paced acquisition of robot data streams (robot state, cameras, point clouds).

Each stream runs on ``max_in_flight`` threads of its own (lanes) that take its ticks in turn,
so up to that many requests are outstanding and a stream's rate does not depend on its round
trip. A lane makes a blocking call and decodes and publishes the answer itself, off the ROS
executor: no response is handed between threads, and gRPC starts no thread per call (its
asynchronous calls start a thread whenever a channel's calls go from none to one, which at a
few hundred calls a second was a visible share of the driver's CPU). A slow or failing stream
only delays itself.
"""

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_LOG = logging.getLogger(__name__)
IDLE_RECHECK_S = 0.25  # how often a stream nobody consumes is asked again
# The driver's added latency is reported over the responses of the last this many seconds
# (older samples are dropped as new ones come; at most that many are kept): what it is now,
# not what start-up was.
ADDED_LATENCY_WINDOW_S = 20.0
ADDED_LATENCY_SAMPLES = 2000  # 20 s at the highest stream rate (100 Hz)


@dataclass
class StreamStats:
    """Counters of one stream, read by diagnostics and benchmarks."""

    requested: int = 0
    delivered: int = 0
    skipped: int = 0  # ticks missed because max_in_flight requests were outstanding
    dropped: int = 0  # messages not published: a reader had not acknowledged the previous one
    errors: int = 0
    last_error: str = ""
    # the driver's own added latency of the latest responses: (monotonic ns when the
    # response was received, ns from then until it was handled: decoded and published)
    added_ns: deque = field(default_factory=lambda: deque(maxlen=ADDED_LATENCY_SAMPLES))

    def record_added(self, received_ns: int, handled_ns: int) -> None:
        """One handled response (monotonic ns); samples older than the window are dropped,
        so the kept samples stop growing once the window is full."""
        samples = self.added_ns
        samples.append((received_ns, handled_ns - received_ns))
        since = received_ns - int(ADDED_LATENCY_WINDOW_S * 1e9)
        try:
            while samples[0][0] < since:
                samples.popleft()
        except IndexError:  # another lane of the stream emptied it meanwhile
            pass

    def added_ms(self, *quantiles: float, window_s: float = ADDED_LATENCY_WINDOW_S
                 ) -> tuple[float, ...] | None:
        """The ``quantiles`` (0-1) of the added latencies of the last ``window_s`` in ms;
        None when no response was handled in that time."""
        since = time.monotonic_ns() - int(window_s * 1e9)
        samples = tuple(self.added_ns)  # a snapshot: one C call under the GIL
        values = sorted(added for received, added in samples if received >= since)
        if not values:
            return None
        return tuple(values[min(len(values) - 1, int(q * len(values)))] / 1e6
                     for q in quantiles)


def phases(periods: list[float]) -> list[float]:
    """First-tick offsets (s) that keep periodic streams out of each other's way: streams of
    one period (the cameras) are spread evenly over it, and each group of another period is
    offset by a fraction of its own spacing (streams of different periods still meet now
    and then). The scheduler keeps every stream on its phase, through idle spells and
    skipped ticks, so responses, and the driver's work on them, do not bunch up."""
    groups: dict[float, list[int]] = {}
    for i, period in enumerate(periods):
        groups.setdefault(period, []).append(i)
    offsets = [0.0] * len(periods)
    for g, (period, members) in enumerate(groups.items()):
        spacing = period / len(members)
        shift = spacing * g / len(groups)
        for k, i in enumerate(members):
            offsets[i] = shift + k * spacing
    return offsets


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

    def fetch(self) -> Any:
        """One response, waiting for it (blocking: gRPC releases the GIL meanwhile)."""
        raise NotImplementedError

    def handle(self, response: Any) -> None:
        """Decode and publish one response (on the lane that fetched it); raise on bad data."""
        raise NotImplementedError

    def report_error(self, message: str) -> None:
        """Called with a plain description when a request or its data fails."""
        if self._report is not None:
            self._report(f"{self.name}: {message}")
        else:
            _LOG.warning("%s: %s", self.name, message)


class Scheduler:
    """Drives a set of streams until ``stop()``, each on ``max_in_flight`` threads of its own
    (lanes) that take the stream's ticks in turn: a lane waits for its tick, makes the call
    and waits for the answer (gRPC releases the GIL meanwhile), then decodes and publishes it
    itself. No thread is handed a response, and gRPC starts no thread for the calls."""

    def __init__(self, streams: list[Stream], describe: Callable[[BaseException], str] = str
                 ) -> None:
        self._describe = describe
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._due: dict[int, float] = {}
        self._started = False
        self._pending = list(streams)

    def start(self) -> None:
        self._started = True
        streams, self._pending = self._pending, []
        now = time.monotonic()
        for stream, offset in zip(streams, phases([s.period for s in streams]), strict=True):
            self._launch(stream, now + offset)

    def add(self, stream: Stream) -> None:
        """Start driving another stream (thread-safe)."""
        if self._started:
            self._launch(stream, time.monotonic())
        else:
            self._pending.append(stream)

    def _launch(self, stream: Stream, first: float) -> None:
        with self._lock:
            self._due[id(stream)] = first
        for lane in range(stream.max_in_flight):
            thread = threading.Thread(target=self._run, args=(stream,), daemon=True,
                                      name=f"{stream.name}-{lane}")
            self._threads.append(thread)
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        deadline = time.monotonic() + 2.0
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _next_tick(self, stream: Stream) -> float:
        """The stream's next tick, taken by the calling lane."""
        with self._lock:
            due, now = self._due[id(stream)], time.monotonic()
            if due < now - stream.period:  # every lane was busy: skip, do not burst
                missed = int((now - due) / stream.period)
                stream.stats.skipped += missed
                due += missed * stream.period  # in phase: streams keep their turns
            self._due[id(stream)] = due + stream.period
            return due

    def _run(self, stream: Stream) -> None:
        while not self._stop.wait(max(0.0, self._next_tick(stream) - time.monotonic())):
            try:
                wanted = stream.enabled and stream.wanted()
            except Exception as exc:
                _LOG.debug("%s: wanted() failed: %s", stream.name, exc)
                wanted = False
            if not wanted:
                with self._lock:  # look again a little later, on one of the stream's ticks
                    due = self._due[id(stream)]
                    later = time.monotonic() + IDLE_RECHECK_S - due
                    if later > 0:
                        self._due[id(stream)] = due + math.ceil(later / stream.period) * \
                            stream.period
                continue
            stream.stats.requested += 1
            try:
                response = stream.fetch()
            except Exception as exc:
                self._fail(stream, exc)
                continue
            received_ns = time.monotonic_ns()
            try:
                stream.handle(response)
            except Exception as exc:
                self._fail(stream, exc)
                continue
            stream.stats.record_added(received_ns, time.monotonic_ns())

    def _fail(self, stream: Stream, exc: BaseException) -> None:
        message = self._describe(exc)
        stream.stats.errors += 1
        stream.stats.last_error = message
        stream.report_error(message)
