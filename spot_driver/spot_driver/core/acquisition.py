"""Pipelined, paced acquisition of robot data streams (robot state, cameras, point clouds).

Each stream runs on threads of its own (lanes) that take its ticks in turn, so as many
requests are outstanding as there are lanes and a stream's rate does not depend on its round
trip. The number of lanes follows the stream's link time (the round trip less the robot's own
time, from its response header: ``robot_time.py``): enough to cover its 95th percentile and at
most a period of the robot's time (more requests only queue behind a busy robot, and slow its
other services) at the stream's period, plus one, so that a stalled call holds up only its own
tick, within the stream's ``max_in_flight`` cap (what the robot is asked to serve at once).
A lane makes a blocking call and decodes and publishes the answer itself, off the ROS
executor: no response is handed between threads, and gRPC starts no thread per call (its
asynchronous calls start a thread whenever a channel's calls go from none to one, which at a
few hundred calls a second was a visible share of the driver's CPU). A stream's answers are
handled one at a time in the order their requests were made (``InOrder``): an answer that
overtook an earlier one on the link waits for it, at most the link's usual spread of round
trips; an answer later than that is dropped (``overtaken``), so each topic stays in
acquisition order. A slow or failing stream only delays itself.
"""

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from spot_driver.core.timed_window import Window

_LOG = logging.getLogger(__name__)
IDLE_RECHECK_S = 0.25  # how often a stream nobody consumes is asked again
# The driver's added latency is reported over the responses of the last this many seconds
# (older samples are dropped as new ones come; at most that many are kept): what it is now,
# not what start-up was.
ADDED_LATENCY_WINDOW_S = 20.0
ADDED_LATENCY_SAMPLES = 2000  # 20 s at the highest stream rate (100 Hz)
# Round trips are judged over the last this many seconds: long enough for a percentile, short
# enough to follow a link that changes (a robot walking away from its access point).
ROUND_TRIP_WINDOW_S = 10.0
ROUND_TRIP_QUANTILE = 0.95
DEFAULT_MAX_IN_FLIGHT = 12  # at 50 Hz, round trips up to 200 ms
START_LANES = 2
ADAPT_EVERY_S = 0.5  # how often a stream's lanes are matched to its round trip
# How long an answer waits for the answers of earlier requests: the spread of the stream's
# link times (p95 - p50), within these bounds.
MIN_HOLD_S, MAX_HOLD_S = 0.005, 0.1


class InOrder:
    """Hands a stream's answers on in the order their requests were made. ``ticket()`` numbers
    a request; ``turn(ticket, hold_s)`` waits until every earlier request's answer was handled
    or given up, at most ``hold_s`` (then the earlier ones still awaited are given up; one
    being handled is waited for, so two answers are never handled at once), and says whether
    this answer may be handled (False: a later one already was); ``done(ticket)`` after it
    was handled, failed or dropped."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._issued = 0
        self._next = 0  # the ticket whose turn it is
        self._finished: set[int] = set()  # done tickets after the one whose turn it is
        self._handling: int | None = None  # the ticket whose answer is being handled

    def ticket(self) -> int:
        with self._cond:
            self._issued += 1
            return self._issued - 1

    def turn(self, ticket: int, hold_s: float) -> bool:
        deadline = time.monotonic() + hold_s
        with self._cond:
            while self._next < ticket:
                left = deadline - time.monotonic()
                if left <= 0 and self._handling is None:
                    self._finished = {t for t in self._finished if t > ticket}
                    self._next = ticket  # the earlier ones are given up
                    break
                self._cond.wait(left if left > 0 else None)  # None: until it is done
            if self._next != ticket:
                return False
            self._handling = ticket
            return True

    def done(self, ticket: int) -> None:
        with self._cond:
            if self._handling == ticket:
                self._handling = None
            if ticket >= self._next:
                self._finished.add(ticket)
            while self._next in self._finished:
                self._finished.discard(self._next)
                self._next += 1
            self._cond.notify_all()


@dataclass
class StreamStats:
    """Counters of one stream, read by diagnostics and benchmarks."""

    requested: int = 0
    delivered: int = 0
    skipped: int = 0  # ticks missed because every lane's request was outstanding
    overtaken: int = 0  # answers dropped: one acquired later was already published
    dropped: int = 0  # messages not published: a reader had not acknowledged the previous one
    errors: int = 0
    last_error: str = ""
    in_flight: int = 0  # requests outstanding now
    lanes: int = 0  # requests allowed in flight now (follows the round trip)
    # the driver's own added latency of the latest responses: (monotonic ns when the
    # response was received, ns from then until it was handled: decoded and published)
    added: Window = field(default_factory=lambda: Window(ADDED_LATENCY_WINDOW_S,
                                                         ADDED_LATENCY_SAMPLES))
    # request -> response times: (monotonic ns of the response, round trip ns)
    round_trip: Window = field(default_factory=lambda: Window(ROUND_TRIP_WINDOW_S,
                                                              ADDED_LATENCY_SAMPLES))
    # the round trip less the robot's own time on it, and the robot's time (0: not stamped)
    link: Window = field(default_factory=lambda: Window(ROUND_TRIP_WINDOW_S,
                                                        ADDED_LATENCY_SAMPLES))
    robot: Window = field(default_factory=lambda: Window(ROUND_TRIP_WINDOW_S,
                                                         ADDED_LATENCY_SAMPLES))

    def record_added(self, received_ns: int, handled_ns: int) -> None:
        self.added.record(received_ns, handled_ns - received_ns)

    def added_ms(self, *quantiles: float, window_s: float = ADDED_LATENCY_WINDOW_S
                 ) -> tuple[float, ...] | None:
        return self.added.quantiles_ms(*quantiles, window_s=window_s)

    def round_trip_ms(self, *quantiles: float) -> tuple[float, ...] | None:
        return self.round_trip.quantiles_ms(*quantiles)

    def record_round_trip(self, received_ns: int, round_trip_ns: int, robot_ns: int | None
                          ) -> None:
        """One answer's round trip, split into the robot's time (None: not stamped) and the
        link's."""
        robot = min(max(robot_ns or 0, 0), round_trip_ns)
        self.round_trip.record(received_ns, round_trip_ns)
        self.link.record(received_ns, round_trip_ns - robot)
        self.robot.record(received_ns, robot)


def lanes_for(link_s: float | None, period_s: float, cap: int, robot_s: float = 0.0) -> int:
    """Requests to keep in flight for a stream: enough to cover ``link_s`` (a lane's time on
    the link, its high percentile) and ``robot_s`` (the robot's usual time on a request) up to
    one period (a robot slower than that is behind: more requests would only queue) at
    ``period_s``, plus one so that a call that stalls costs only its own tick, within
    [1, cap]. Without a measured round trip: ``START_LANES``."""
    if link_s is None:
        return max(1, min(cap, START_LANES))
    busy = link_s + min(max(robot_s, 0.0), period_s)
    return max(1, min(cap, math.ceil(busy / period_s - 1e-9) + 1))


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

    def __init__(self, rate_hz: float, max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
                 report: Callable[[str], None] | None = None) -> None:
        """``max_in_flight``: the cap on requests outstanding at once (the lanes follow the
        round trip below it)."""
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
    """Drives a set of streams until ``stop()``, each on threads of its own (lanes) that take
    the stream's ticks in turn: a lane waits for its tick, makes the call and waits for the
    answer (gRPC releases the GIL meanwhile), then decodes and publishes it itself. No thread
    is handed a response, and gRPC starts no thread for the calls. Lanes are added and retired
    as the stream's round trip changes (``lanes_for``)."""

    def __init__(self, streams: list[Stream], describe: Callable[[BaseException], str] = str,
                 robot_time: Callable[[], int | None] = lambda: None) -> None:
        """``robot_time``: the robot's time (ns) on the calling thread's last answer, taken
        once (``RobotConnection.robot_time.take``); None when unknown."""
        self._describe = describe
        self._robot_time = robot_time
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._due: dict[int, float] = {}
        self._lanes: dict[int, int] = {}  # lanes running per stream
        self._adapted: dict[int, float] = {}  # when its lanes were last matched
        self._order: dict[int, InOrder] = {}  # one answer at a time, in request order
        self._hold: dict[int, float] = {}  # how long an answer waits for earlier ones
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
            key = id(stream)
            self._due[key], self._lanes[key], self._adapted[key] = first, 0, time.monotonic()
            self._order[key], self._hold[key] = InOrder(), MIN_HOLD_S
        self._set_lanes(stream, lanes_for(None, stream.period, stream.max_in_flight))

    def _set_lanes(self, stream: Stream, wanted: int) -> None:
        """Start lanes up to ``wanted``; lanes above it retire at their next tick."""
        with self._lock:
            key = id(stream)
            stream.stats.lanes = wanted
            new = range(self._lanes[key], wanted)
            self._lanes[key] = max(self._lanes[key], wanted)
        if new:  # retired lanes' threads have ended: keep only the living for stop()
            self._threads = [t for t in self._threads if t.is_alive()]
        for lane in new:
            thread = threading.Thread(target=self._run, args=(stream,), daemon=True,
                                      name=f"{stream.name}-{lane}")
            self._threads.append(thread)
            thread.start()

    def _retire(self, stream: Stream) -> bool:
        """True for a lane that should end: the stream has more lanes than it wants."""
        with self._lock:
            key = id(stream)
            if self._lanes[key] > stream.stats.lanes:
                self._lanes[key] -= 1
                return True
            return False

    def _adapt(self, stream: Stream) -> None:
        """Match the stream's lanes to its round trip, every ``ADAPT_EVERY_S``."""
        now = time.monotonic()
        with self._lock:
            if now - self._adapted[id(stream)] < ADAPT_EVERY_S:
                return
            self._adapted[id(stream)] = now
        link = stream.stats.link.quantiles_ms(0.5, ROUND_TRIP_QUANTILE)
        robot = stream.stats.robot.quantiles_ms(0.5)
        if link is None or robot is None:
            wanted = lanes_for(None, stream.period, stream.max_in_flight)
        else:
            hold = min(MAX_HOLD_S, max(MIN_HOLD_S, (link[1] - link[0]) / 1e3))
            self._hold[id(stream)] = hold
            # a lane is busy for the link, the robot's time and the wait for earlier answers
            wanted = lanes_for(link[1] / 1e3 + hold, stream.period, stream.max_in_flight,
                               robot[0] / 1e3)
        if wanted != stream.stats.lanes:
            self._set_lanes(stream, wanted)

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
        while not self._retire(stream) and not self._stop.wait(
                max(0.0, self._next_tick(stream) - time.monotonic())):
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
            order = self._order[id(stream)]
            ticket = order.ticket()
            try:
                self._request(stream, order, ticket)
            finally:
                order.done(ticket)

    def _request(self, stream: Stream, order: InOrder, ticket: int) -> None:
        """One request of ``stream``: fetch, then handle in request order."""
        stats = stream.stats
        with self._lock:
            stats.requested += 1
            stats.in_flight += 1
        self._robot_time()  # nothing left of another call on this thread
        sent_ns = time.monotonic_ns()
        try:
            response = stream.fetch()
        except Exception as exc:
            self._fail(stream, exc)
            return
        finally:
            with self._lock:
                stats.in_flight -= 1
        received_ns = time.monotonic_ns()
        stats.record_round_trip(received_ns, received_ns - sent_ns, self._robot_time())
        self._adapt(stream)
        if not order.turn(ticket, self._hold[id(stream)]):
            stats.overtaken += 1  # a later request's answer was already published
            return
        turn_ns = time.monotonic_ns()  # the wait for earlier answers is the link's, not ours
        try:
            stream.handle(response)
        except Exception as exc:
            self._fail(stream, exc)
            return
        stats.record_added(turn_ns, time.monotonic_ns())

    def _fail(self, stream: Stream, exc: BaseException) -> None:
        message = self._describe(exc)
        stream.stats.errors += 1
        stream.stats.last_error = message
        stream.report_error(message)
