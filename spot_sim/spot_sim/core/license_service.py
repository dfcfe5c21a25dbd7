"""license: the installed license and which features it enables."""

from bosdyn.api import license_pb2, license_service_pb2_grpc

from spot_sim.core.license import License
from spot_sim.core.rpc import unary
from spot_sim.core.served import Served, ServiceSpec

VALID_FROM_SEC = 1_700_000_000  # 2023-11
VALID_FOR_SEC = 20 * 365 * 86400


class LicenseServicer(license_service_pb2_grpc.LicenseServiceServicer):
    def __init__(self, clock, license_: License) -> None:
        self.clock, self.license = clock, license_

    @unary(license_pb2.GetLicenseInfoResponse)
    def GetLicenseInfo(self, request, response, context):
        info = response.license
        info.status = info.STATUS_VALID
        info.id = f"SIM-{self.license.serial}"
        info.robot_serial = self.license.serial
        info.not_valid_before.seconds = VALID_FROM_SEC
        info.not_valid_after.seconds = VALID_FROM_SEC + VALID_FOR_SEC
        info.licensed_features.extend(self.license.features)

    @unary(license_pb2.GetFeatureEnabledResponse)
    def GetFeatureEnabled(self, request, response, context):
        for code in request.feature_codes:
            response.feature_enabled[code] = self.license.allows(code)


def spec() -> ServiceSpec:
    return ServiceSpec("license", "bosdyn.api.LicenseService", "api.spot.robot",
                       license_service_pb2_grpc.add_LicenseServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: LicenseServicer(parts.clock, parts.robot.license)),)
