"""The Spot CAM's pan-tilt-zoom heads, over the SDK's ``PtzClient``: their limits (listed
once), positions, and moves checked against the limits before anything is sent."""

import threading

from bosdyn.api.spot_cam import ptz_pb2
from bosdyn.client.spot_cam.ptz import PtzClient

from spot_driver.core.errors import CommandError
from spot_driver.spot_cam.clients import spot_cam_client
from spot_driver.spot_cam.conversions import Limits, check_move, limits


class Ptz:
    def __init__(self, connection) -> None:
        self._connection = connection
        self._lock = threading.Lock()
        self._heads: dict[str, Limits] | None = None

    def _client(self) -> PtzClient:
        return spot_cam_client(self._connection, PtzClient)

    def heads(self, refresh: bool = False) -> dict[str, Limits]:
        """Every head and its limits, as the Spot CAM lists them."""
        with self._lock:
            if self._heads is None or refresh:
                self._heads = {d.name: limits(d) for d in self._client().list_ptz()}
            return self._heads

    def position(self, name: str) -> ptz_pb2.PtzPosition:
        self._known(name)
        return self._client().get_ptz_position(ptz_pb2.PtzDescription(name=name))

    def move(self, name: str, pan: float, tilt: float, zoom: float) -> ptz_pb2.PtzPosition:
        """Send head ``name`` to the pose (degrees, degrees, zoom level); CommandError, with
        nothing sent, when the head is unknown or the pose outside its limits."""
        try:
            check_move(self._known(name), name, pan, tilt, zoom)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        return self._client().set_ptz_position(ptz_pb2.PtzDescription(name=name), pan, tilt,
                                                zoom)

    def initialize_lens(self) -> None:
        self._client().initialize_lens()

    def _known(self, name: str) -> dict[str, Limits]:
        """The heads, listed again once if ``name`` is not among them (a Spot CAM that came
        up after the driver)."""
        heads = self.heads()
        if name not in heads:
            heads = self.heads(refresh=True)
        if name not in heads:
            raise CommandError(f"unknown PTZ name {name!r}; this Spot CAM has "
                               f"{', '.join(sorted(heads))}")
        return heads
