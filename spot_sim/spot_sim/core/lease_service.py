"""lease: acquire, take, return, retain and list leases."""

from bosdyn.api import lease_pb2, lease_service_pb2_grpc

from spot_sim.core.clock import RobotClock
from spot_sim.core.lease_manager import LeaseManager
from spot_sim.core.rpc import TokenIssuer, token_from_metadata, unary
from spot_sim.core.served import Served, ServiceSpec


class LeaseServicer(lease_service_pb2_grpc.LeaseServiceServicer):
    def __init__(self, leases: LeaseManager, clock: RobotClock, tokens: TokenIssuer) -> None:
        self.leases, self.clock, self.tokens = leases, clock, tokens

    def _owner(self, request, context) -> lease_pb2.LeaseOwner:
        token = token_from_metadata(context.invocation_metadata())
        user = (self.tokens.user_of(token) if token else None) or ""
        return lease_pb2.LeaseOwner(client_name=request.header.client_name, user_name=user)

    def _acquire(self, request, response, context, take: bool) -> None:
        status, lease, owner = self.leases.acquire(
            request.resource, self._owner(request, context), take)
        response.status = status
        if lease is not None:
            response.lease.CopyFrom(lease)
        if owner is not None:
            response.lease_owner.CopyFrom(owner)

    @unary(lease_pb2.AcquireLeaseResponse)
    def AcquireLease(self, request, response, context):
        self._acquire(request, response, context, take=False)

    @unary(lease_pb2.TakeLeaseResponse)
    def TakeLease(self, request, response, context):
        self._acquire(request, response, context, take=True)

    @unary(lease_pb2.ReturnLeaseResponse)
    def ReturnLease(self, request, response, context):
        response.status = self.leases.release(request.lease)

    @unary(lease_pb2.RetainLeaseResponse)
    def RetainLease(self, request, response, context):
        response.lease_use_result.CopyFrom(self.leases.use(request.lease, allow_super=True))

    @unary(lease_pb2.ListLeasesResponse)
    def ListLeases(self, request, response, context):
        response.resources.extend(self.leases.list_resources())
        response.resource_tree.CopyFrom(self.leases.tree)


def spec() -> ServiceSpec:
    return ServiceSpec("lease", "bosdyn.api.LeaseService", "api.spot.robot",
                       lease_service_pb2_grpc.add_LeaseServiceServicer_to_server)


SERVICES = (Served(spec(), lambda parts: LeaseServicer(parts.robot.leases, parts.clock,
                                                     parts.tokens)),)
