"""Plumbing shared by every service: response headers in robot time, and authentication."""

import functools
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import jwt
from bosdyn.api import data_chunk_pb2, header_pb2, lease_pb2

from spot_common import crash_log

_LOG = logging.getLogger(__name__)
_OK = header_pb2.CommonError.CODE_OK
_INTERNAL = header_pb2.CommonError.CODE_INTERNAL_SERVER_ERROR
_UNSET = header_pb2.CommonError.CODE_UNSPECIFIED


@dataclass(frozen=True)
class LeaseCheck:
    """How an RPC uses the lease(s) its request carries (``self.robot.leases``).

    ``field``: the request's ``lease`` (one, result in ``lease_use_result``) or ``leases``
    (repeated, results in ``lease_use_results``; none sent is an invalid lease).
    ``optional``: a request without a lease is served (the SDK sends none with some map
    calls). ``refused(response, uses)`` fills what the RPC reports besides the results."""

    field: str = "lease"
    optional: bool = False
    allow_super: bool = False
    refused: Callable[[object, list], None] | None = None

    def use(self, robot, request, response) -> bool:
        """Use the request's lease(s); whether the handler may run."""
        return self.use_sent(robot, getattr(request, self.field), response)

    def use_sent(self, robot, sent, response) -> bool:
        """Use ``sent`` (this check's field of a request)."""
        if self.field == "lease":
            if self.optional and not sent.resource:
                return True
            uses = [robot.leases.use(sent, allow_super=self.allow_super)]
            response.lease_use_result.CopyFrom(uses[0])
        else:
            uses = [robot.leases.use(lease, allow_super=self.allow_super) for lease in sent]
            if not uses:
                uses = [lease_pb2.LeaseUseResult(
                    status=lease_pb2.LeaseUseResult.STATUS_INVALID_LEASE)]
            response.lease_use_results.extend(uses)
        if all(use.status == use.STATUS_OK for use in uses):
            return True
        if self.refused is not None:
            self.refused(response, uses)
        return False


LEASE = LeaseCheck()


def unary(response_type, lease: LeaseCheck | None = None):
    """Wrap ``handler(self, request, response, context)`` into a gRPC unary method.

    The wrapper echoes the request header, stamps receive/response times in robot time
    (``self.clock``), uses the request's lease when ``lease`` says how (the handler runs only
    when the lease is valid) and turns an unexpected exception into
    CODE_INTERNAL_SERVER_ERROR, as the robot does. The handler fills ``response`` in place.
    """

    def decorate(handler):
        @functools.wraps(handler)
        def method(self, request, context):
            response = response_type()
            header = response.header
            header.request_header.CopyFrom(request.header)
            header.request_received_timestamp.CopyFrom(self.clock.timestamp())
            try:
                if lease is None or lease.use(self.robot, request, response):
                    handler(self, request, response, context)
            except grpc.RpcError:
                raise
            except Exception as exc:  # reported to the client in the header, like the robot
                _LOG.exception("%s failed", handler.__name__)
                crash_log.record(handler.__qualname__, exc)
                header.error.code = _INTERNAL
                header.error.message = f"[{type(exc).__name__}] {exc}"
            if header.error.code == _UNSET:
                header.error.code = _OK
            header.response_timestamp.CopyFrom(self.clock.timestamp())
            return response

        return method

    return decorate


def stamped(clock, response, request_header=None):
    """``response`` with its header filled as ``unary`` fills it (for streamed responses)."""
    header = response.header
    if request_header is not None:
        header.request_header.CopyFrom(request_header)
    header.request_received_timestamp.CopyFrom(clock.timestamp())
    header.response_timestamp.CopyFrom(clock.timestamp())
    header.error.code = header.error.code or _OK
    return response


def authority(context) -> str:
    """The authority a call was addressed to: a directory entry's (``api.spot.robot``,
    ``spot-cam-image.spot.robot``), by which a robot routes services that share a gRPC type.
    grpc's Python server keeps it only on the call's event; "" when it cannot be read."""
    details = getattr(getattr(context, "_rpc_event", None), "call_details", None)
    host = getattr(details, "host", b"") or b""
    return host.decode() if isinstance(host, bytes) else str(host)


def set_error(response, code: int, message: str) -> None:
    """Set a header error (for example CODE_INVALID_REQUEST) on ``response``."""
    response.header.error.code = code
    response.header.error.message = message


class TokenIssuer:
    """Mints and checks the user tokens (JWTs) the auth service hands out."""

    def __init__(self, secret: bytes, lifetime_sec: float = 12 * 3600) -> None:
        self._secret = secret
        self._lifetime = lifetime_sec

    def rotate(self) -> None:
        """A new signing secret: every token issued so far becomes invalid (a reboot)."""
        self._secret = secrets.token_bytes(32)

    def issue(self, username: str) -> str:
        now = int(time.time())
        claims = {"sub": username, "iss": "spot-sim", "iat": now,
                  "exp": now + int(self._lifetime)}
        return jwt.encode(claims, self._secret, algorithm="HS256")

    def user_of(self, token: str) -> str | None:
        try:
            return jwt.decode(token, self._secret, algorithms=["HS256"])["sub"]
        except jwt.PyJWTError:
            return None


def token_from_metadata(metadata) -> str | None:
    for key, value in metadata or ():
        if key == "authorization" and value.startswith("Bearer "):
            return value[len("Bearer "):]
    return None


class AuthInterceptor(grpc.ServerInterceptor):
    """Rejects calls without a valid token, except to services a client needs to log in."""

    OPEN_SERVICES = ("/bosdyn.api.AuthService/", "/bosdyn.api.RobotIdService/",
                     "/bosdyn.api.PayloadRegistrationService/")  # payloads have no token yet

    def __init__(self, tokens: TokenIssuer) -> None:
        self._tokens = tokens

        def deny(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid user token")

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method
        if method.startswith(self.OPEN_SERVICES):
            return continuation(handler_call_details)
        token = token_from_metadata(handler_call_details.invocation_metadata)
        if token is None or self._tokens.user_of(token) is None:
            return self._deny
        return continuation(handler_call_details)


class CrashInterceptor(grpc.ServerInterceptor):
    """Every handler, unary or streaming, writes an exception it did not expect to the crash
    log (``crash_log``) before gRPC answers the call with UNKNOWN, as ``unary`` does for the
    handlers it wraps. A deliberate ``context.abort(...)`` (a status code set) is not one."""

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        for kind in ("unary_unary", "stream_unary"):
            if getattr(handler, kind) is not None:
                return handler._replace(**{kind: _watched(getattr(handler, kind), method)})
        for kind in ("unary_stream", "stream_stream"):
            if getattr(handler, kind) is not None:
                return handler._replace(**{kind: _watched_stream(getattr(handler, kind),
                                                                 method)})
        return handler


def _noted(method: str, context, exc: Exception) -> None:
    """Record ``exc`` unless the handler aborted the call on purpose."""
    code = context.code()
    if isinstance(exc, grpc.RpcError) or (code is not None and code != grpc.StatusCode.OK):
        return
    _LOG.exception("%s failed", method)
    crash_log.record(method, exc)


def _watched(behaviour, method: str):
    def call(request, context):
        try:
            return behaviour(request, context)
        except Exception as exc:
            _noted(method, context, exc)
            raise
    return call


def _watched_stream(behaviour, method: str):
    def call(request, context):
        try:
            yield from behaviour(request, context)
        except Exception as exc:
            _noted(method, context, exc)
            raise
    return call


CHUNK_BYTES = 1_000_000


def chunks(data: bytes):
    """``data`` as DataChunks of at most CHUNK_BYTES (at least one, even when empty)."""
    for start in range(0, max(len(data), 1), CHUNK_BYTES):
        yield data_chunk_pb2.DataChunk(total_size=len(data), data=data[start:start + CHUNK_BYTES])


def assemble(requests) -> tuple[bytes, list]:
    """The bytes of a streamed upload, and the requests (for their header and lease)."""
    parts, seen = [], []
    for request in requests:
        seen.append(request)
        parts.append(request.chunk.data)
    return b"".join(parts), seen


# Map and recording RPCs check a lease when one is sent; the SDK sends none with snapshot
# uploads or (without a lease wallet) recording requests. Navigation needs its leases.
OPTIONAL_LEASE = LeaseCheck(optional=True)
NAVIGATION_LEASES = LeaseCheck("leases")
