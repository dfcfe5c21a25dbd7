"""Keeps the driver's own lease-carrying requests in order.

The SDK attaches a new sub-lease (the wallet's lease, advanced by one) to every command it
sends. The robot rejects a command whose lease is older than one it has already seen
(``STATUS_OLDER``), so two commands sent at once from two threads can make the robot refuse
the one that arrives second although both came from the lease holder. ``LeaseOrderedClient``
wraps an SDK client so that its lease-carrying calls are serialised by one lock per session:
each blocking call advances the lease and is answered before the next one starts; an
asynchronous call (cmd_vel's velocity commands) holds the lock only while its request is
advanced and sent, so a stream of them stays pipelined (should the robot still take two out of
order, the older one is refused and the newer one, which the driver sent last, stands).
Queries (state, feedback, lists) pass straight through.
"""

import threading
from collections.abc import Callable

from bosdyn.api import lease_pb2
from bosdyn.client.exceptions import LeaseUseError
from bosdyn.client.lease import Lease, LeaseWalletRequestProcessor

_QUERY_PREFIXES = ("get_", "list_", "download_")
_QUERY_WORDS = ("feedback", "_state", "_status")
_OLDER = lease_pb2.LeaseUseResult.STATUS_OLDER


def uses_lease_wallet(client: object) -> bool:
    """Whether the SDK client attaches leases from a wallet to its requests."""
    return any(isinstance(p, LeaseWalletRequestProcessor)
               for p in getattr(client, "request_processors", ()))


def is_ordered_call(name: str) -> bool:
    """Whether a client method sends a lease-carrying command (not a query)."""
    base = name[:-len("_async")] if name.endswith("_async") else name
    return not (name.startswith("_") or base.startswith(_QUERY_PREFIXES)
                or any(word in base for word in _QUERY_WORDS))


def is_own_older_lease(exc: BaseException, wallet_lease: Lease | None) -> bool:
    """A ``STATUS_OLDER`` refusal caused by the driver's own newer lease (two of its own
    commands crossing), not by another client taking the lease."""
    if not isinstance(exc, LeaseUseError) or wallet_lease is None:
        return False
    result = exc.lease_use_result
    if result is None or result.status != _OLDER:
        return False
    latest = Lease(result.latest_known_lease)
    if not latest.is_valid_lease():
        return False
    return wallet_lease.compare(latest, ignore_resources=True) in (
        Lease.CompareResult.SAME, Lease.CompareResult.NEWER, Lease.CompareResult.SUPER_LEASE)


class LeaseOrderedClient:
    """An SDK client whose lease-carrying calls run one at a time, in the order they start.

    ``wallet_lease`` returns the wallet's current body lease (or None); a call refused as
    older than the driver's own lease is sent once more, which a concurrent keep-alive or an
    older SDK helper could otherwise cause.
    """

    def __init__(self, client: object, order_lock: threading.Lock,
                 wallet_lease: Callable[[], Lease | None]) -> None:
        self._client = client
        self._lock = order_lock
        self._wallet_lease = wallet_lease

    def __getattr__(self, name: str):
        """Called once per attribute name: ordered wrappers are kept on the instance (cmd_vel
        looks one up 50 times a second)."""
        attribute = getattr(self._client, name)
        if not callable(attribute) or not is_ordered_call(name):
            return attribute
        wrapped = (self._ordered_async if name.endswith("_async") else self._ordered)(attribute)
        setattr(self, name, wrapped)
        return wrapped

    def _ordered(self, method):
        def call(*args, **kwargs):
            with self._lock:
                try:
                    return method(*args, **kwargs)
                except LeaseUseError as exc:
                    if not is_own_older_lease(exc, self._wallet_lease()):
                        raise
                    return method(*args, **kwargs)

        return call

    def _ordered_async(self, method):
        def call(*args, **kwargs):
            with self._lock:
                return method(*args, **kwargs)

        return call
