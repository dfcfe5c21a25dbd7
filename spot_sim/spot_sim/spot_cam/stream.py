"""How the Spot CAM sends its live video: the encoder's stream parameters, congestion
control, and the ICE (STUN/TURN) servers WebRTC uses. The simulator serves no video; these
are kept and checked as the robot keeps them."""


from bosdyn.api.spot_cam import network_pb2, streamquality_pb2

from spot_sim.core.lock_order import LEAF, OrderedLock

Params = streamquality_pb2.StreamParams
Ice = network_pb2.ICEServer
MAX_BITRATE = 20_000_000  # bits/s (ours: above what the Spot CAM's encoder is asked for)


class StreamError(ValueError):
    """A stream setting the Spot CAM refuses."""


def _check(params: Params) -> None:
    if params.HasField("targetbitrate") and not 0 < params.targetbitrate.value <= MAX_BITRATE:
        raise StreamError(f"target bitrate {params.targetbitrate.value} is outside "
                          f"(0, {MAX_BITRATE}] bits/s")
    for field in ("refreshinterval", "idrinterval"):
        if params.HasField(field) and getattr(params, field).value < 0:
            raise StreamError(f"{field} {getattr(params, field).value} is negative")
    if params.HasField("awb") and params.awb.awb not in Params.AwbModeEnum.values():
        raise StreamError(f"unknown white balance mode {params.awb.awb}")
    if params.HasField("manual_exposure"):
        manual = params.manual_exposure
        seconds = manual.exposure.seconds + manual.exposure.nanos / 1e9
        if not 0 < seconds <= 1.0 or (manual.HasField("gain") and manual.gain.value < 0):
            raise StreamError("manual exposure needs a time in (0, 1] s and a gain >= 0")


def _check_ice(servers) -> None:
    for server in servers:
        if server.type not in (Ice.STUN, Ice.TURN):
            raise StreamError(f"ICE server {server.address!r} has no type (STUN or TURN)")
        if not server.address or not 0 < server.port < 65536:
            raise StreamError(f"ICE server {server.address!r}:{server.port} is not an address")


class StreamSettings:
    """Stream parameters (merged field by field as the robot does), congestion control and
    ICE servers."""

    def __init__(self) -> None:
        self._lock = OrderedLock("spot_cam stream", LEAF)
        self._params = Params()
        self._params.targetbitrate.value = 2_000_000
        self._params.refreshinterval.value = 30
        self._params.idrinterval.value = 30
        self._params.awb.awb = Params.AUTO
        self._params.auto_exposure.SetInParent()
        self.congestion_control = False
        self._ice: list[Ice] = []

    def set_params(self, params: Params) -> Params:
        _check(params)
        with self._lock:
            self._params.MergeFrom(params)
            return self._copy()

    def params(self) -> Params:
        with self._lock:
            return self._copy()

    def _copy(self) -> Params:
        copy = Params()
        copy.CopyFrom(self._params)
        return copy

    def set_congestion_control(self, enabled: bool) -> None:
        with self._lock:
            self.congestion_control = enabled

    def set_ice(self, servers) -> None:
        _check_ice(servers)
        with self._lock:
            self._ice = [Ice() for _ in servers]
            for out, server in zip(self._ice, servers, strict=True):
                out.CopyFrom(server)

    def ice(self) -> list[Ice]:
        with self._lock:
            return list(self._ice)
