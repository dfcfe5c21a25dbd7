"""Human-readable explanations of why the robot refused or could not do something."""

import logging

from bosdyn.api import lease_pb2
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client import power as sdk_power
from bosdyn.client import robot_command as sdk_command
from bosdyn.client.lease import (
    LeaseNotOwnedByWallet,
    NoSuchLease,
    ResourceAlreadyClaimedError,
)
from bosdyn.mission import client as sdk_mission

from spot_common import crash_log
from spot_driver.conversions.robot_data import RobotDataError


class CommandError(Exception):
    """A request the driver refuses or the robot rejected; ``str()`` is for people."""


class NotConnectedError(CommandError):
    """The robot connection is down; the driver is reconnecting."""


_LEASE_STATUS = {
    lease_pb2.LeaseUseResult.STATUS_OLDER: "the lease was taken by another client",
    lease_pb2.LeaseUseResult.STATUS_REVOKED: "the lease was revoked",
    lease_pb2.LeaseUseResult.STATUS_WRONG_EPOCH: "the lease is from before a robot reboot",
    lease_pb2.LeaseUseResult.STATUS_INVALID_LEASE: "no valid lease",
    lease_pb2.LeaseUseResult.STATUS_UNMANAGED: "the lease resource is not managed",
}


# Errors whose explanation does not depend on the response, in the order they are tried.
_PLAIN = (
    ((NoSuchLease, LeaseNotOwnedByWallet),
     "no lease: the driver does not hold the body lease; call 'claim' first"),
    (sdk_command.NotPoweredOnError, "robot is not powered on; call 'power_on' first"),
    (sdk_power.EstoppedError, "robot is e-stopped; release the e-stop first"),
    (sdk_command.BehaviorFaultError,
     "robot has a behavior fault; call 'clear_behavior_fault' (or self_right)"),
    (sdk_command.UnknownFrameError, "robot refused the command: unknown frame"),
    (sdk_command.ExpiredError,
     "robot refused the command: it expired before it arrived (check time sync)"),
    (sdk_command.NoTimeSyncError, "robot refused the command: time sync is not established"),
    (sdk_command.DockedError, "robot is docked; undock first"),
    ((sdk_command.CommandTimedOutError, sdk_errors.TimedOutError),
     "timed out waiting for the robot"),
    (sdk_mission.NoMissionError, "no mission is loaded"),
    (sdk_mission.NoMissionPlayingError, "no mission is playing"),
    (sdk_mission.InvalidQuestionId, "no open question with that id"),
    (sdk_mission.InvalidAnswerCode, "that code is not an answer to the question"),
    (sdk_mission.QuestionAlreadyAnswered, "the question is already answered"),
)


_LOG = logging.getLogger("spot_driver.internal_error")
INTERNAL = "internal error"  # how describe() starts the sentence for an unexpected exception


# grpc's plain ValueError for a call on a closed channel: this sentence, or "Cannot invoke RPC:
# <the reason the channel was closed with>" (cygrpc, e.g. "Channel closed!": a CI run's)
CLOSED_CHANNEL = "Cannot invoke RPC on closed channel!"
CLOSED_CHANNEL_PREFIX = "Cannot invoke RPC: "


def closed_channel(exc: BaseException) -> bool:
    """A call that went out on a channel closed under it: a session the driver replaced while
    reconnecting (grpc raises a plain ``ValueError``). The connection's state, not a defect."""
    return isinstance(exc, ValueError) and (str(exc) == CLOSED_CHANNEL
                                            or str(exc).startswith(CLOSED_CHANNEL_PREFIX))


def unexpected(exc: BaseException) -> bool:
    """``exc`` is neither one of the driver's refusals (``CommandError``: decided, with a
    sentence) nor an error the SDK or gRPC raised for the robot's answer: a defect of the
    driver. A ``ValueError`` from deep inside a callback (``int(nan)``, protobuf's "Value out
    of range") is one: what a callback refuses it checks before building anything."""
    if isinstance(exc, (CommandError, RobotDataError)) or closed_channel(exc):
        return False
    return not type(exc).__module__.startswith(("bosdyn.", "grpc"))


def _lease_refusal(exc: sdk_errors.LeaseUseError) -> str:
    result = exc.response.lease_use_result if hasattr(exc.response, "lease_use_result") \
        else None
    reason = _LEASE_STATUS.get(result.status, "lease error") if result else "lease error"
    owner = ""
    if result is not None and result.latest_known_lease.client_names:
        owner = f" (now held by {result.latest_known_lease.client_names[0]})"
    return f"no lease: {reason}{owner}; call 'claim' first"


def describe(exc: BaseException) -> str:
    """A sentence saying what went wrong, for service responses and action results. The one
    place every caught exception is explained, so also where an unexpected one is noted
    (``crash_log``, for the tests) and said to be an internal error."""
    if isinstance(exc, (CommandError, RobotDataError)):
        return str(exc)
    if isinstance(exc, sdk_errors.LeaseUseError):
        return _lease_refusal(exc)
    if isinstance(exc, ResourceAlreadyClaimedError):
        owner = exc.response.lease_owner
        who = owner.client_name or owner.user_name or "another client"
        return f"lease held by {who}"
    for types, message in _PLAIN:
        if isinstance(exc, types):
            return message
    if isinstance(exc, sdk_errors.RpcError):
        return f"robot not reachable: {type(exc).__name__}"
    if closed_channel(exc):
        return "robot not reachable: the call went out on a session being replaced"
    if isinstance(exc, sdk_errors.ResponseError):
        said = exc.response.header.error.message if hasattr(exc.response, "header") else ""
        return f"robot refused the request: {type(exc).__name__}" + (f": {said}" if said else "")
    if unexpected(exc):
        _LOG.error("internal error: %s: %s", type(exc).__name__, exc, exc_info=exc)
        crash_log.record("driver", exc)
        return f"{INTERNAL}: {type(exc).__name__}: {exc}"
    return f"{type(exc).__name__}: {exc}"
