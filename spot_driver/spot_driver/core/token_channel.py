"""The robot's user token on every call, added in the calling thread.

The SDK puts the token on its channels as call credentials (a ``grpc.AuthMetadataPlugin``).
gRPC runs such a plugin on a new Python thread for every call, which costs a thread start and
two GIL handoffs per RPC: at a few hundred calls per second (state, five cameras, the lidar)
that was a visible share of the driver's CPU. ``TokenRobot`` makes the same TLS channels (the
robot's CA, the authority as the TLS name: verification unchanged) and passes the token as
each call's metadata, in the thread making the call.
"""

from collections.abc import Callable

import bosdyn.client.channel
import grpc
from bosdyn.client.robot import Robot
from bosdyn.client.sdk import Sdk


class _WithToken:
    """A multicallable of the wrapped channel whose calls carry the token."""

    def __init__(self, inner, token: Callable[[], str]) -> None:
        self._inner, self._token = inner, token
        self._method = getattr(inner, "_method", None)  # the SDK names its loggers from it

    def _metadata(self, metadata) -> tuple:
        return (*(metadata or ()), ("authorization", f"Bearer {self._token()}"))

    def __call__(self, request, timeout=None, metadata=None, **kwargs):
        return self._inner(request, timeout=timeout, metadata=self._metadata(metadata), **kwargs)

    def with_call(self, request, timeout=None, metadata=None, **kwargs):
        return self._inner.with_call(request, timeout=timeout,
                                     metadata=self._metadata(metadata), **kwargs)

    def future(self, request, timeout=None, metadata=None, **kwargs):
        return self._inner.future(request, timeout=timeout, metadata=self._metadata(metadata),
                                  **kwargs)


# The SDK tells streaming calls apart by these base classes.
class _UnaryUnary(_WithToken, grpc.UnaryUnaryMultiCallable):
    pass


class _UnaryStream(_WithToken, grpc.UnaryStreamMultiCallable):
    pass


class _StreamUnary(_WithToken, grpc.StreamUnaryMultiCallable):
    pass


class _StreamStream(_WithToken, grpc.StreamStreamMultiCallable):
    pass


class TokenChannel(grpc.Channel):
    """``channel`` with ``authorization: Bearer <token()>`` on every call's metadata."""

    def __init__(self, channel: grpc.Channel, token: Callable[[], str]) -> None:
        self._channel, self._token = channel, token

    def subscribe(self, callback, try_to_connect=False):
        self._channel.subscribe(callback, try_to_connect)

    def unsubscribe(self, callback):
        self._channel.unsubscribe(callback)

    def unary_unary(self, method, *args, **kwargs):
        return _UnaryUnary(self._channel.unary_unary(method, *args, **kwargs), self._token)

    def unary_stream(self, method, *args, **kwargs):
        return _UnaryStream(self._channel.unary_stream(method, *args, **kwargs), self._token)

    def stream_unary(self, method, *args, **kwargs):
        return _StreamUnary(self._channel.stream_unary(method, *args, **kwargs), self._token)

    def stream_stream(self, method, *args, **kwargs):
        return _StreamStream(self._channel.stream_stream(method, *args, **kwargs), self._token)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class TokenRobot(Robot):
    """An SDK ``Robot`` whose secure channels carry the token (``TokenChannel``)."""

    def ensure_secure_channel(self, authority, options=()):
        if authority in self.channels_by_authority:
            return self.channels_by_authority[authority]
        options = list(options)
        names = {name for name, _ in options}
        if "grpc.max_receive_message_length" not in names:
            options.append(("grpc.max_receive_message_length", self.max_receive_message_length))
        if "grpc.max_send_message_length" not in names:
            options.append(("grpc.max_send_message_length", self.max_send_message_length))
        secure = bosdyn.client.channel.create_secure_channel(
            self.address, self._secure_channel_port,
            grpc.ssl_channel_credentials(root_certificates=self.cert), authority, options)
        channel = TokenChannel(secure, lambda: self.user_token)
        self.channels_by_authority[authority] = channel
        return channel


def create_robot(sdk: Sdk, address: str) -> TokenRobot:
    """``sdk.create_robot(address)``, as a ``TokenRobot``."""
    if address in sdk.robots:
        return sdk.robots[address]
    robot = TokenRobot(name=address)
    robot.address = address
    robot.update_from(sdk)
    sdk.robots[address] = robot
    return robot
