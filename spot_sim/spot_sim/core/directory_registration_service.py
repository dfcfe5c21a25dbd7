"""directory-registration: payload services register, update and unregister directory
entries; their liveness is kept by re-registering (DirectoryRegistrationKeepAlive)."""

from bosdyn.api import directory_registration_pb2 as pb
from bosdyn.api import directory_registration_service_pb2_grpc
from bosdyn.api.header_pb2 import CommonError

from spot_sim.core.directory import Directory
from spot_sim.core.rpc import set_error, unary
from spot_sim.core.served import Served, ServiceSpec


def _invalid(request, response) -> bool:
    """A registration without a name, type, authority or endpoint host is refused. Port 0 is
    accepted: Boston Dynamics' service_faults example registers '0.0.0.0':0 for a service
    that only reports faults."""
    entry = request.service_entry
    missing = [name for name in ("name", "type", "authority") if not getattr(entry, name)]
    if not missing and request.endpoint.port >= 0 and request.endpoint.host_ip:
        return False
    set_error(response, CommonError.CODE_INVALID_REQUEST,
              f"service entry needs {', '.join(missing) or 'an endpoint host_ip'}")
    return True


class DirectoryRegistrationServicer(
        directory_registration_service_pb2_grpc.DirectoryRegistrationServiceServicer):
    def __init__(self, clock, directory: Directory) -> None:
        self.clock, self.directory = clock, directory

    def _register(self, request, response, replace: bool, missing: int) -> None:
        if _invalid(request, response):
            return
        done = self.directory.register(request.service_entry, request.endpoint, replace)
        response.status = response.STATUS_OK if done else missing

    @unary(pb.RegisterServiceResponse)
    def RegisterService(self, request, response, context):
        self._register(request, response, False, response.STATUS_ALREADY_EXISTS)

    @unary(pb.UpdateServiceResponse)
    def UpdateService(self, request, response, context):
        self._register(request, response, True, response.STATUS_NONEXISTENT_SERVICE)

    @unary(pb.UnregisterServiceResponse)
    def UnregisterService(self, request, response, context):
        removed = self.directory.unregister(request.service_name)
        response.status = response.STATUS_OK if removed else response.STATUS_NONEXISTENT_SERVICE


def spec() -> ServiceSpec:
    return ServiceSpec(
        "directory-registration", "bosdyn.api.DirectoryRegistrationService", "api.spot.robot",
        directory_registration_service_pb2_grpc.add_DirectoryRegistrationServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: DirectoryRegistrationServicer(
    parts.clock, parts.directory)),)
