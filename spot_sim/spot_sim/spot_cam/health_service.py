"""spot-cam-health: the Spot CAM's temperatures, BIT events and degradations, and system log
(``spot_sim.spot_cam.health``) as the SDK's ``HealthClient`` reads them."""

from bosdyn.api.spot_cam import health_pb2, service_pb2_grpc

from spot_sim.core.rpc import chunks, stamped, unary
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.spot_cam.health import Health
from spot_sim.spot_cam.power import PowerRails


class HealthServicer(service_pb2_grpc.HealthServiceServicer):
    def __init__(self, clock, rails: PowerRails, health: Health) -> None:
        self.clock, self.rails, self.health = clock, rails, health

    def _ptz_on(self) -> bool:
        return self.rails.is_on("ptz", self.clock.now_nsec())

    @unary(health_pb2.GetTemperatureResponse)
    def GetTemperature(self, request, response, context):
        for name, celsius in self.health.temperatures(self._ptz_on()).items():
            response.temps.add(channel_name=name, temperature=round(celsius * 1000.0))

    @unary(health_pb2.GetBITStatusResponse)
    def GetBITStatus(self, request, response, context):
        for at_ns, name, description in self.health.events():
            event = response.events.add(name=name, error_message=description)
            event.onset_timestamp.CopyFrom(self.clock.timestamp(at_ns))
            event.severity = event.SEVERITY_WARN
        for kind, description in self.health.degradations(self._ptz_on()):
            response.degradations.add(type=kind, description=description)

    @unary(health_pb2.ClearBITEventsResponse)
    def ClearBITEvents(self, request, response, context):
        self.health.clear_events()

    def GetSystemLog(self, request, context):
        for chunk in chunks(self.health.system_log().encode()):
            yield stamped(self.clock, health_pb2.GetSystemLogResponse(data=chunk),
                          request.header)


def spec() -> ServiceSpec:
    return ServiceSpec("spot-cam-health", "bosdyn.api.spot_cam.HealthService",
                       "api.spot.robot", service_pb2_grpc.add_HealthServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: HealthServicer(
    parts.clock, parts.spot_cam.rails, parts.spot_cam.health), hardware="spot_cam"),)
