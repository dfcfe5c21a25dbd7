"""Calls to payload services through the robot: a request addressed (by its authority) to a
service a payload registered in the directory is forwarded, as raw bytes, to the endpoint it
registered, and the answers are relayed back, as a robot's API proxy does.

Only calls the robot's own services do not handle reach here (the gRPC server asks its own
services first), so a payload service whose gRPC type the robot also serves (an image
service, say) is not routed. Payload services listen without TLS on the payload network, as
on a robot.
"""


import grpc

from spot_sim.core.directory import Directory
from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.core.rpc import authority

_FORWARDED_METADATA = ("authorization",)


class PayloadRouter(grpc.GenericRpcHandler):
    """A gRPC handler for every method the robot's own services leave unhandled."""

    def __init__(self, directory: Directory) -> None:
        self._directory = directory
        self._channels: dict[str, grpc.Channel] = {}
        self._lock = OrderedLock("payload router", LEAF)  # the channels

    def service(self, handler_call_details):
        method = handler_call_details.method
        return grpc.stream_stream_rpc_method_handler(
            lambda requests, context: self._forward(method, requests, context))

    def _forward(self, method: str, requests, context):
        address = authority(context)
        target = self._directory.endpoint_for(address, method)
        if target is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED,
                          f"no service registered at {address or 'this authority'} "
                          f"serves {method}")
        call = self._channel(target).stream_stream(method)
        metadata = [(k, v) for k, v in context.invocation_metadata()
                    if k in _FORWARDED_METADATA]
        try:
            yield from call(requests, metadata=metadata, timeout=context.time_remaining())
        except grpc.RpcError as error:
            context.abort(error.code(), error.details() or "the payload service failed")

    def _channel(self, target: str) -> grpc.Channel:
        with self._lock:
            if target not in self._channels:
                self._channels[target] = grpc.insecure_channel(target)
            return self._channels[target]

    def close(self) -> None:
        with self._lock:
            channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            channel.close()
