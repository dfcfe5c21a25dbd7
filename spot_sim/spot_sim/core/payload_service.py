"""payload and payload-registration: payloads register themselves, wait for an administrator
to authorize them (``SimulatedSpot.authorize_payload``, or the admin channel), then get a
user token and may attach/detach. ListPayloads shows them all."""


from bosdyn.api import payload_pb2, payload_registration_service_pb2_grpc, payload_service_pb2_grpc
from bosdyn.api import payload_registration_pb2 as reg
from bosdyn.api.header_pb2 import CommonError

from spot_sim.core.payloads import PayloadRegistry
from spot_sim.core.rpc import TokenIssuer, set_error, unary
from spot_sim.core.served import Served, ServiceSpec


def _credentials(request) -> tuple[str, str]:
    if request.HasField("payload_credentials"):
        return request.payload_credentials.guid, request.payload_credentials.secret
    return request.payload_guid, request.payload_secret


class PayloadServicer(payload_service_pb2_grpc.PayloadServiceServicer):
    def __init__(self, clock, registry: PayloadRegistry) -> None:
        self.clock, self.registry = clock, registry

    @unary(payload_pb2.ListPayloadsResponse)
    def ListPayloads(self, request, response, context):
        response.payloads.extend(self.registry.all())


class PayloadRegistrationServicer(
        payload_registration_service_pb2_grpc.PayloadRegistrationServiceServicer):
    def __init__(self, clock, registry: PayloadRegistry, tokens: TokenIssuer) -> None:
        self.clock, self.registry, self.tokens = clock, registry, tokens

    @unary(reg.RegisterPayloadResponse)
    def RegisterPayload(self, request, response, context):
        if not request.payload.GUID or not request.payload_secret:
            set_error(response, CommonError.CODE_INVALID_REQUEST,
                      "a payload needs a GUID and a secret")
            return
        added = self.registry.register(request.payload, request.payload_secret)
        response.status = response.STATUS_OK if added else response.STATUS_ALREADY_EXISTS

    @unary(reg.UpdatePayloadVersionResponse)
    def UpdatePayloadVersion(self, request, response, context):
        guid, secret = _credentials(request)
        payload = self.registry.check(guid, secret)
        if payload is None:
            response.status = (response.STATUS_INVALID_CREDENTIALS
                               if self.registry.exists(guid) else response.STATUS_DOES_NOT_EXIST)
            return
        payload.version.CopyFrom(request.updated_version)
        response.status = response.STATUS_OK

    @unary(reg.GetPayloadAuthTokenResponse)
    def GetPayloadAuthToken(self, request, response, context):
        guid, secret = _credentials(request)
        payload = self.registry.check(guid, secret)
        if payload is None:
            response.status = response.STATUS_INVALID_CREDENTIALS
        elif not payload.is_authorized:
            response.status = response.STATUS_PAYLOAD_NOT_AUTHORIZED
        else:
            response.status = response.STATUS_OK
            response.token = self.tokens.issue(f"payload-{guid}")

    @unary(reg.UpdatePayloadAttachedResponse)
    def UpdatePayloadAttached(self, request, response, context):
        guid, secret = _credentials(request)
        payload = self.registry.check(guid, secret)
        if payload is None:
            response.status = (response.STATUS_INVALID_CREDENTIALS
                               if self.registry.exists(guid) else response.STATUS_DOES_NOT_EXIST)
        elif not payload.is_authorized:
            response.status = response.STATUS_PAYLOAD_NOT_AUTHORIZED
        else:
            payload.is_enabled = request.request == request.REQUEST_ATTACH
            response.status = response.STATUS_OK


def specs() -> list[ServiceSpec]:
    return [
        ServiceSpec("payload", "bosdyn.api.PayloadService", "api.spot.robot",
                    payload_service_pb2_grpc.add_PayloadServiceServicer_to_server),
        ServiceSpec("payload-registration", "bosdyn.api.PayloadRegistrationService",
                    "payload-registration.spot.robot",
                    payload_registration_service_pb2_grpc
                    .add_PayloadRegistrationServiceServicer_to_server,
                    user_token_required=False),
    ]


SERVICES = (
    Served(specs()[0], lambda parts: PayloadServicer(parts.clock, parts.payloads)),
    Served(specs()[1], lambda parts: PayloadRegistrationServicer(parts.clock, parts.payloads,
                                                                 parts.tokens)),
)
