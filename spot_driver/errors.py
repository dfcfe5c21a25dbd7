"""Human-readable explanations of why the robot refused or could not do something."""

from bosdyn.api import lease_pb2
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client import power as sdk_power
from bosdyn.client import robot_command as sdk_command
from bosdyn.client.lease import NoSuchLease, ResourceAlreadyClaimedError


class CommandError(Exception):
    """A request the driver refuses or the robot rejected; ``str()`` is for people."""


_LEASE_STATUS = {
    lease_pb2.LeaseUseResult.STATUS_OLDER: "the lease was taken by another client",
    lease_pb2.LeaseUseResult.STATUS_REVOKED: "the lease was revoked",
    lease_pb2.LeaseUseResult.STATUS_WRONG_EPOCH: "the lease is from before a robot reboot",
    lease_pb2.LeaseUseResult.STATUS_INVALID_LEASE: "no valid lease",
    lease_pb2.LeaseUseResult.STATUS_UNMANAGED: "the lease resource is not managed",
}


def describe(exc: BaseException) -> str:
    """A sentence saying what went wrong, for service responses and action results."""
    if isinstance(exc, CommandError):
        return str(exc)
    if isinstance(exc, sdk_errors.LeaseUseError):
        result = exc.response.lease_use_result if hasattr(exc.response, "lease_use_result") \
            else None
        reason = _LEASE_STATUS.get(result.status, "lease error") if result else "lease error"
        owner = ""
        if result is not None and result.latest_known_lease.client_names:
            owner = f" (now held by {result.latest_known_lease.client_names[0]})"
        return f"no lease: {reason}{owner}; call 'claim' first"
    if isinstance(exc, NoSuchLease):
        return "no lease: the driver does not hold the body lease; call 'claim' first"
    if isinstance(exc, ResourceAlreadyClaimedError):
        owner = exc.response.lease_owner
        who = owner.client_name or owner.user_name or "another client"
        return f"lease held by {who}"
    if isinstance(exc, sdk_command.NotPoweredOnError):
        return "robot is not powered on; call 'power_on' first"
    if isinstance(exc, sdk_power.EstoppedError):
        return "robot is e-stopped; release the e-stop first"
    if isinstance(exc, sdk_command.BehaviorFaultError):
        return "robot has a behavior fault; call 'clear_behavior_fault' (or self_right)"
    if isinstance(exc, sdk_command.UnknownFrameError):
        return "robot refused the command: unknown frame"
    if isinstance(exc, sdk_command.ExpiredError):
        return "robot refused the command: it expired before it arrived (check time sync)"
    if isinstance(exc, sdk_command.NoTimeSyncError):
        return "robot refused the command: time sync is not established"
    if isinstance(exc, sdk_command.DockedError):
        return "robot is docked; undock first"
    if isinstance(exc, sdk_command.CommandTimedOutError | sdk_errors.TimedOutError):
        return "timed out waiting for the robot"
    if isinstance(exc, sdk_errors.RpcError):
        return f"robot not reachable: {type(exc).__name__}"
    if isinstance(exc, sdk_errors.ResponseError):
        return f"robot refused the request: {type(exc).__name__}"
    return f"{type(exc).__name__}: {exc}"
