"""The Spot CAM's SDK clients, or a clear error on a robot without a Spot CAM."""

import time
from collections.abc import Callable

from bosdyn.client.robot import UnregisteredServiceNameError

from spot_driver.core.errors import CommandError

NO_SPOT_CAM = "this robot has no Spot CAM (its directory lists no {service} service)"
ABSENT_RETRY_S = 30.0  # a poll that found no Spot CAM asks again after this long


class NoSpotCamError(CommandError):
    """The robot's directory lists no such Spot CAM service."""


class PollGate:
    """Whether a periodic Spot CAM poll should call the robot now. Each call for an unlisted
    service re-reads the robot's directory, so after a "no Spot CAM" answer a poll waits
    ``retry_s`` before asking again (a Spot CAM powered up later is still found)."""

    def __init__(self, retry_s: float = ABSENT_RETRY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._retry_s, self._clock = retry_s, clock
        self._next = float("-inf")

    def open(self) -> bool:
        return self._clock() >= self._next

    def found_absent(self) -> None:
        self._next = self._clock() + self._retry_s


def spot_cam_client(connection, client_type, service: str = ""):
    """The connection's ``client_type`` client (of ``service``, default the type's own);
    CommandError when the robot has no Spot CAM."""
    service = service or client_type.default_service_name
    try:
        return connection.client(client_type, service)
    except UnregisteredServiceNameError as exc:
        raise NoSpotCamError(NO_SPOT_CAM.format(service=service)) from exc
