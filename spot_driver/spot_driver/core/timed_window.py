"""Timed samples of the last seconds (a stream's round trips, the driver's added latency), and
their quantiles: what is happening now, not since start-up."""

import time
from collections import deque


class Window:
    """Timed samples (monotonic ns, value ns) of the last ``window_s``, at most ``size``."""

    def __init__(self, window_s: float, size: int) -> None:
        self.window_ns = int(window_s * 1e9)
        self.samples: deque = deque(maxlen=size)

    def record(self, at_ns: int, value_ns: int) -> None:
        """One sample; samples older than the window are dropped as new ones come, so the
        kept samples stop growing once the window is full."""
        samples = self.samples
        samples.append((at_ns, value_ns))
        try:
            while samples[0][0] < at_ns - self.window_ns:
                samples.popleft()
        except IndexError:  # another lane of the stream emptied it meanwhile
            pass

    def quantiles_ms(self, *quantiles: float, window_s: float | None = None
                     ) -> tuple[float, ...] | None:
        """The ``quantiles`` (0-1) of the values of the last ``window_s`` (default: the
        window) in ms; None when there is no sample in that time."""
        span = self.window_ns if window_s is None else int(window_s * 1e9)
        since = time.monotonic_ns() - span
        samples = tuple(self.samples)  # a snapshot: one C call under the GIL
        values = sorted(value for at, value in samples if at >= since)
        if not values:
            return None
        return tuple(values[min(len(values) - 1, int(q * len(values)))] / 1e6
                     for q in quantiles)
