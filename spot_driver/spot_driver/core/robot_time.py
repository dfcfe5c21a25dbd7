"""How long the robot itself took over each answer: an SDK response processor.

Every Spot API response header carries the robot's own stamps of when the request was
received and when the response was made (robot clock). Their difference is the time the
robot spent on the request; the rest of a round trip is the link's (and the client's). The
acquisition scheduler sizes a stream's requests in flight by the link's share alone: more
requests in flight cover a long link, but only queue behind a robot that is busy.
"""

import threading


class RobotTime:
    """An SDK response processor (``mutate``) that keeps, per thread, the robot's time on the
    last response that thread received; ``take()`` reads and clears it. Blocking SDK calls
    run their response processors on the calling thread."""

    def __init__(self) -> None:
        self._local = threading.local()

    def mutate(self, response) -> None:
        header = getattr(response, "header", None)
        if header is None:
            return
        received, answered = header.request_received_timestamp, header.response_timestamp
        if received.seconds or received.nanos:
            self._local.ns = (answered.seconds - received.seconds) * 1_000_000_000 + \
                answered.nanos - received.nanos

    def take(self) -> int | None:
        """The robot's time (ns) on this thread's last response since the last ``take``, or
        None when the response had no stamps."""
        ns = getattr(self._local, "ns", None)
        self._local.ns = None
        return ns
