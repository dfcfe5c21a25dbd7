"""The robot side of leases: who owns which resource and which leases are current.

Leases are compared with the SDK's own ``bosdyn.client.lease.Lease`` so the ordering rules are
exactly those the client uses (same / newer / sub-lease accepted, older rejected).
"""

import secrets
import time
from dataclasses import dataclass

from bosdyn.api import lease_pb2
from bosdyn.client.lease import Lease

from spot_sim.core.lock_order import LEAF, OrderedLock

Compare = Lease.CompareResult


def resource_tree(has_arm: bool) -> lease_pb2.ResourceTree:
    """The robot's lease resource hierarchy."""
    tree = lease_pb2.ResourceTree(resource="body")
    tree.sub_resources.add(resource="mobility")
    if has_arm:
        full_arm = tree.sub_resources.add(resource="full-arm")
        full_arm.sub_resources.add(resource="arm")
        full_arm.sub_resources.add(resource="gripper")
    return tree


def _leaves(tree: lease_pb2.ResourceTree) -> list[str]:
    if not tree.sub_resources:
        return [tree.resource]
    return [leaf for sub in tree.sub_resources for leaf in _leaves(sub)]


def _find(tree: lease_pb2.ResourceTree, resource: str) -> lease_pb2.ResourceTree | None:
    if tree.resource == resource:
        return tree
    for sub in tree.sub_resources:
        found = _find(sub, resource)
        if found is not None:
            return found
    return None


@dataclass
class _LeafState:
    lease: lease_pb2.Lease
    owner: lease_pb2.LeaseOwner | None = None
    last_use_ns: int = 0


class LeaseManager:
    """Issues, validates and revokes leases over the resource tree.

    A leaf's lease goes stale when its owner has not used or retained it for
    ``stale_timeout_sec`` (monotonic time); a stale lease can be acquired by another client.
    """

    def __init__(self, has_arm: bool, stale_timeout_sec: float = 10.0) -> None:
        self._lock = OrderedLock("leases", LEAF)
        self._tree = resource_tree(has_arm)
        self._stale_ns = int(stale_timeout_sec * 1e9)
        self.epoch = secrets.token_hex(8)
        self._leaves = {
            leaf: _LeafState(lease_pb2.Lease(resource=leaf, epoch=self.epoch, sequence=[0]))
            for leaf in _leaves(self._tree)
        }

    @property
    def tree(self) -> lease_pb2.ResourceTree:
        return self._tree

    def _leaf_names(self, resource: str) -> list[str] | None:
        sub = _find(self._tree, resource)
        return None if sub is None else _leaves(sub)

    def _is_stale(self, state: _LeafState, now_ns: int) -> bool:
        return state.owner is None or now_ns - state.last_use_ns > self._stale_ns

    def _issue(self, resource: str, leaves: list[str],
               owner: lease_pb2.LeaseOwner) -> lease_pb2.Lease:
        now = time.monotonic_ns()
        root = 1 + max(self._leaves[leaf].lease.sequence[0] for leaf in leaves)
        for leaf in leaves:
            self._leaves[leaf] = _LeafState(
                lease_pb2.Lease(resource=leaf, epoch=self.epoch, sequence=[root]), owner, now)
        return lease_pb2.Lease(resource=resource, epoch=self.epoch, sequence=[root])

    def acquire(self, resource: str, owner: lease_pb2.LeaseOwner, take: bool):
        """AcquireLease / TakeLease: (status, lease, current owner)."""
        Response = lease_pb2.AcquireLeaseResponse if not take else lease_pb2.TakeLeaseResponse
        with self._lock:
            leaves = self._leaf_names(resource)
            if leaves is None:
                return Response.STATUS_INVALID_RESOURCE, None, None
            now = time.monotonic_ns()
            if not take:
                for leaf in leaves:
                    state = self._leaves[leaf]
                    if not self._is_stale(state, now) and state.owner != owner:
                        return Response.STATUS_RESOURCE_ALREADY_CLAIMED, None, state.owner
            return Response.STATUS_OK, self._issue(resource, leaves, owner), owner

    def use(self, lease: lease_pb2.Lease, allow_super: bool = False) -> lease_pb2.LeaseUseResult:
        """Check a lease attached to a command; when valid, record it as the newest seen."""
        result = lease_pb2.LeaseUseResult()
        result.attempted_lease.CopyFrom(lease)
        if not Lease.is_valid_proto(lease):
            result.status = result.STATUS_INVALID_LEASE
            return result
        with self._lock:
            leaves = self._leaf_names(lease.resource)
            if leaves is None:
                result.status = result.STATUS_UNMANAGED
                return result
            incoming = Lease(lease)
            status, state = self._refusal(incoming, leaves, allow_super)
            if state is not None:
                result.previous_lease.CopyFrom(state.lease)
                result.latest_known_lease.CopyFrom(
                    lease_pb2.Lease(resource=lease.resource, epoch=self.epoch,
                                    sequence=state.lease.sequence,
                                    client_names=state.lease.client_names))
            result.status = status
            if status == result.STATUS_OK:
                now = time.monotonic_ns()
                for leaf in leaves:
                    state = self._leaves[leaf]
                    if incoming.compare(Lease(state.lease), ignore_resources=True) in (
                            Compare.NEWER, Compare.SUB_LEASE):
                        state.lease = lease_pb2.Lease(
                            resource=leaf, epoch=lease.epoch, sequence=lease.sequence,
                            client_names=lease.client_names)
                    state.last_use_ns = now
                result.latest_known_lease.CopyFrom(lease)
            return result

    def _refusal(self, incoming: Lease, leaves, allow_super: bool) -> tuple:
        """(LeaseUseResult status, the leaf state that refuses ``incoming``); (STATUS_OK,
        None) when every leaf accepts it."""
        Result = lease_pb2.LeaseUseResult
        for leaf in leaves:
            state = self._leaves[leaf]
            comparison = incoming.compare(Lease(state.lease), ignore_resources=True)
            if comparison == Compare.DIFFERENT_EPOCHS:
                return Result.STATUS_WRONG_EPOCH, state
            if state.owner is None:
                return Result.STATUS_REVOKED, state
            if comparison == Compare.OLDER or (
                    comparison == Compare.SUPER_LEASE and not allow_super):
                return Result.STATUS_OLDER, state
        return Result.STATUS_OK, None

    def release(self, lease: lease_pb2.Lease) -> int:
        """ReturnLease: the status for a ReturnLeaseResponse."""
        Response = lease_pb2.ReturnLeaseResponse
        use = self.use(lease, allow_super=True)
        if use.status == use.STATUS_INVALID_LEASE or use.status == use.STATUS_UNMANAGED:
            return Response.STATUS_INVALID_RESOURCE
        if use.status != use.STATUS_OK:
            return Response.STATUS_NOT_ACTIVE_LEASE
        with self._lock:
            for leaf in self._leaf_names(lease.resource):
                self._leaves[leaf].owner = None
        return Response.STATUS_OK

    def mark_stale(self, resource: str) -> None:
        """Make the owner's lease on ``resource`` stale at once (keepalive's lease_stale)."""
        with self._lock:
            for leaf in self._leaf_names(resource) or []:
                self._leaves[leaf].last_use_ns = -self._stale_ns - 1

    def owner_of(self, resource: str) -> lease_pb2.LeaseOwner | None:
        with self._lock:
            leaves = self._leaf_names(resource) or []
            owners = [self._leaves[leaf].owner for leaf in leaves]
            return owners[0] if owners and all(o == owners[0] for o in owners) else None

    def list_resources(self) -> list[lease_pb2.LeaseResource]:
        """ListLeases: one entry per managed resource, with owner and staleness."""
        with self._lock:
            now = time.monotonic_ns()
            out = []
            for leaf, state in self._leaves.items():
                entry = lease_pb2.LeaseResource(resource=leaf, lease=state.lease)
                if state.owner is not None:
                    entry.lease_owner.CopyFrom(state.owner)
                    entry.is_stale = self._is_stale(state, now)
                out.append(entry)
            return out

    def forget_all(self) -> None:
        """A reboot: a new epoch, no owners."""
        with self._lock:
            self.epoch = secrets.token_hex(8)
            for leaf in self._leaves:
                self._leaves[leaf] = _LeafState(
                    lease_pb2.Lease(resource=leaf, epoch=self.epoch, sequence=[0]))
