"""One data stream's health as a diagnostic status (pure): configured and delivered rate, round
trip, requests in flight, skipped ticks, and why a stream delivers less than it is configured
for."""

import math
from dataclasses import dataclass

from diagnostic_msgs.msg import DiagnosticStatus

from spot_driver.diagnostics.status import OK, WARN, diagnostic

RATE_TOLERANCE = 0.95  # a stream below 95 % of its configured rate is a warning


@dataclass(frozen=True)
class StreamReading:
    """What diagnostics read of one stream between two cycles."""

    name: str
    configured_hz: float
    delivered_hz: float
    active: bool  # someone consumes it (an idle stream is not requested)
    round_trip_ms: tuple[float, float] | None  # p50, p95 of the last seconds
    in_flight: int
    lanes: int  # requests allowed in flight now
    cap: int  # max_in_flight
    skipped: int  # ticks skipped since the last reading
    overtaken: int  # answers dropped since the last reading: a newer one was published
    errors: int  # failed requests since the last reading
    last_error: str = ""
    dropped: int = 0  # messages held back for slow readers (total)
    added_ms: tuple[float, float] | None = None  # the driver's own latency, p50 and p99
    robot_ms: float | None = None  # the robot's own time on a request (header stamps), p50


def shortfall(reading: StreamReading) -> str:
    """Why a stream delivers less than it is configured for, in one sentence."""
    r = reading
    period_ms = 1e3 / r.configured_hz
    if r.errors:
        return f"{r.errors} requests failed ({r.last_error or 'no reason given'})"
    if r.robot_ms is not None and r.robot_ms > period_ms:
        return (f"the robot takes {r.robot_ms:.0f} ms over each request, more than the "
                f"{period_ms:.0f} ms period (it is busy; more requests would only queue)")
    if r.round_trip_ms is not None:
        p95 = r.round_trip_ms[1]
        if math.ceil(p95 / period_ms) + 1 > r.cap:
            return (f"the round trip (p95 {p95:.0f} ms) needs more than max_in_flight "
                    f"{r.cap} requests in flight at {r.configured_hz:g} Hz")
    if r.skipped:
        trip = (f"; round trip p95 {r.round_trip_ms[1]:.0f} ms" if r.round_trip_ms else "")
        return f"{r.skipped} ticks skipped with all {r.lanes} requests outstanding{trip}"
    if r.overtaken:
        return f"{r.overtaken} answers arrived after newer ones and were dropped"
    if r.dropped:
        return "messages held back while readers had not acknowledged the previous one"
    return "answers came slower than requested (the robot or this computer is busy)"


def stream_status(prefix: str, hw: str, reading: StreamReading) -> DiagnosticStatus:
    """The stream's status: OK, idle, or WARN with the reason below ``RATE_TOLERANCE``."""
    r = reading
    values = dict(configured_hz=f"{r.configured_hz:.2f}", delivered_hz=f"{r.delivered_hz:.2f}",
                  in_flight=r.in_flight, in_flight_allowed=r.lanes, max_in_flight=r.cap,
                  skipped_ticks=r.skipped, overtaken=r.overtaken, errors=r.errors,
                  dropped_for_slow_readers=r.dropped)
    if r.round_trip_ms is not None:
        values["round_trip_ms_p50"] = f"{r.round_trip_ms[0]:.1f}"
        values["round_trip_ms_p95"] = f"{r.round_trip_ms[1]:.1f}"
    if r.robot_ms is not None:
        values["robot_ms_p50"] = f"{r.robot_ms:.1f}"
    if r.added_ms is not None:
        values["added_latency_ms_p50"] = f"{r.added_ms[0]:.2f}"
        values["added_latency_ms_p99"] = f"{r.added_ms[1]:.2f}"
    if r.last_error:
        values["last_error"] = r.last_error
    name = f"{prefix}stream {r.name}"
    if not r.active:
        return diagnostic(name, OK, "idle (no subscriber)", hw, **values)
    if r.delivered_hz < RATE_TOLERANCE * r.configured_hz:
        return diagnostic(name, WARN, f"{r.delivered_hz:.1f} Hz of {r.configured_hz:.1f} Hz: "
                       f"{shortfall(r)}", hw, **values)
    return diagnostic(name, OK, f"{r.delivered_hz:.1f} Hz", hw, **values)


class StreamMeter:
    """Turns a stream's running counters into a reading's rates and changes between two
    readings (the first reading has no rate)."""

    def __init__(self) -> None:
        self._last: tuple[float, int, int, int, int] | None = None

    def read(self, stream, active: bool, now: float) -> StreamReading:
        """``stream``: an ``acquisition.Stream``; ``now``: monotonic seconds."""
        stats = stream.stats
        counts = (now, stats.delivered, stats.skipped, stats.overtaken, stats.errors)
        last, self._last = self._last, counts
        if last is None or now <= last[0]:
            rate, changes = 0.0, (0, 0, 0)
        else:
            rate = max(0, counts[1] - last[1]) / (now - last[0])
            changes = tuple(max(0, a - b) for a, b in zip(counts[2:], last[2:], strict=True))
        return StreamReading(
            stream.name, stream.rate, rate, active, stats.round_trip_ms(0.5, 0.95),
            stats.in_flight, stats.lanes, stream.max_in_flight, *changes,
            last_error=stats.last_error, dropped=stats.dropped,
            added_ms=stats.added_ms(0.5, 0.99),
            robot_ms=(stats.robot.quantiles_ms(0.5) or (None,))[0])
