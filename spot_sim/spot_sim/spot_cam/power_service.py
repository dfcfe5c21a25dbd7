"""spot-cam-power: the Spot CAM's power rails (``spot_sim.spot_cam.power``) as the SDK's
``PowerClient`` switches and cycles them. Switching the PTZ off is a BIT event."""

from bosdyn.api.spot_cam import power_pb2, service_pb2_grpc

from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.spot_cam.health import Health
from spot_sim.spot_cam.power import RAILS, PowerRails


def _fill(out: power_pb2.PowerStatus, status: dict[str, bool]) -> None:
    for rail, on in status.items():
        getattr(out, rail).value = on


class PowerServicer(service_pb2_grpc.PowerServiceServicer):
    def __init__(self, clock, rails: PowerRails, health: Health) -> None:
        self.clock, self.rails, self.health = clock, rails, health

    def _ptz_off(self, before: bool, status: dict[str, bool]) -> None:
        if before and not status["ptz"]:
            self.health.report(self.clock.now_nsec(), "ptz_power_off",
                               "the mechanical PTZ was powered off")

    @unary(power_pb2.GetPowerStatusResponse)
    def GetPowerStatus(self, request, response, context):
        _fill(response.status, self.rails.status(self.clock.now_nsec()))

    @unary(power_pb2.SetPowerStatusResponse)
    def SetPowerStatus(self, request, response, context):
        now = self.clock.now_nsec()
        before = self.rails.is_on("ptz", now)
        wanted = {rail: getattr(request.status, rail).value for rail in RAILS
                  if request.status.HasField(rail)}
        status = self.rails.set(wanted, now)
        self._ptz_off(before, status)
        _fill(response.status, status)

    @unary(power_pb2.CyclePowerResponse)
    def CyclePower(self, request, response, context):
        now = self.clock.now_nsec()
        before = self.rails.is_on("ptz", now)
        rails = [rail for rail in RAILS
                 if request.status.HasField(rail) and getattr(request.status, rail).value]
        status = self.rails.cycle(rails, now)
        self._ptz_off(before, status)
        _fill(response.status, status)


def spec() -> ServiceSpec:
    return ServiceSpec("spot-cam-power", "bosdyn.api.spot_cam.PowerService", "api.spot.robot",
                       service_pb2_grpc.add_PowerServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: PowerServicer(
    parts.clock, parts.spot_cam.rails, parts.spot_cam.health), hardware="spot_cam"),)
