"""One SDK session with the robot, shared by every node of the driver process.

``RobotConnection`` owns authentication, time sync, the body lease (with its keep-alive) and,
when configured, the driver's own e-stop endpoint. A session that breaks (link loss, robot
reboot, clock jump) is replaced as a whole by ``reconnect()``, which ``ConnectionSupervisor``
calls; while it is down every client request fails at once with ``NotConnectedError``.
Nodes call into it; it knows nothing of ROS.
"""

import logging
import threading
import time
from dataclasses import dataclass

import bosdyn.client
from bosdyn.api import lease_pb2
from bosdyn.client.estop import EstopClient, EstopEndpoint, EstopKeepAlive
from bosdyn.client.lease import Lease, LeaseClient, LeaseKeepAlive, ResourceAlreadyClaimedError
from bosdyn.client.power import PowerClient
from bosdyn.client.robot_command import RobotCommandClient
from bosdyn.client.robot_state import RobotStateClient

from spot_driver.conversions.time import robot_to_local_nsec, timestamp_to_nsec
from spot_driver.core.credentials import Credentials
from spot_driver.core.errors import CommandError, NotConnectedError
from spot_driver.core.robot_time import RobotTime
from spot_driver.core.session import ConnectionConfig, RobotConnectionError, Session

_LOG = logging.getLogger(__name__)
CLOCK_JUMP_NSEC = 1_000_000_000  # a robot timestamp this far from the synced estimate: resync


class SessionBrokenError(Exception):
    """The session still answers but cannot be trusted (robot rebooted, clock jumped)."""


@dataclass(frozen=True)
class LeaseStatus:
    held: bool  # the driver holds the body lease
    owner: str  # who the robot says owns the body ("" when nobody)
    lost_to: str  # set when another client took the driver's lease


class RobotConnection:
    """The driver's single authenticated session with one robot, replaced when it breaks."""

    def __init__(self, config: ConnectionConfig, credentials: Credentials,
                 service_clients: list[type] = ()) -> None:
        """``service_clients``: SDK clients to register beyond the standard ones (the
        registry's ``sdk_clients`` of the enabled capabilities)."""
        self.config = config
        self._service_clients = list(service_clients)
        self._credentials = credentials
        self._lock = threading.RLock()
        self._session: Session | None = None
        self._down_reason = "not connected yet"
        self._down_since = time.monotonic()
        self.reconnects = 0
        self._lease_wanted = False  # the driver held the lease: re-acquire after a reconnect
        self._lease_lost_to = ""
        self._robot_lease_owner = ""
        self._last_skew = 0
        self._estop_problem = ""
        self._estop_id = ""  # our endpoint's id in the robot's e-stop configuration
        self._leases: list[lease_pb2.LeaseResource] = []
        # the robot's own time on each answer, per thread (the acquisition scheduler's lanes)
        self.robot_time = RobotTime()

    # ------------------------------------------------------------------ session
    def connect(self, timeout: float | None = None) -> None:
        """Open a session: authenticate, time-sync, register the e-stop endpoint and, when the
        driver held it before, re-acquire the lease. Raises ``RobotConnectionError``."""
        session = Session(self.config, self._credentials, timeout or self.config.timeout,
                           self._service_clients, [self.robot_time])
        try:
            if self.config.estop_endpoint:
                session.estop_keepalive = self._register_estop(session)
        except bosdyn.client.Error as exc:
            session.close()
            raise RobotConnectionError(f"cannot register the e-stop endpoint: "
                                       f"{type(exc).__name__}") from None
        with self._lock:
            old, self._session = self._session, session
            self._last_skew = session.time_sync()[1]
            self._estop_problem = ""
            wanted = self._lease_wanted
        if old is not None:
            old.close()
        if wanted:
            self._reacquire_lease()

    def reconnect(self, timeout: float) -> None:
        """Replace a broken session (``RobotConnectionError`` while the robot is away)."""
        self.connect(timeout)
        with self._lock:
            self.reconnects += 1

    def mark_down(self, reason: str) -> None:
        """Drop the session: requests fail at once with ``reason`` until ``reconnect()``."""
        with self._lock:
            session, self._session = self._session, None
            self._down_reason, self._down_since = reason, time.monotonic()
        if session is not None:
            session.close()
        _LOG.warning("robot connection down: %s", reason)

    @property
    def connected(self) -> bool:
        with self._lock:
            return self._session is not None

    def status(self) -> tuple[bool, str, float]:
        """(connected, why not, seconds since the connection went down)."""
        with self._lock:
            return (self._session is not None, self._down_reason,
                    time.monotonic() - self._down_since)

    def _current(self) -> Session:
        with self._lock:
            session = self._session
            reason = self._down_reason
        if session is None:
            raise NotConnectedError(f"robot not connected ({reason}); reconnecting")
        return session

    def shutdown(self) -> None:
        """Return the lease and close the session. Motors stay as they are."""
        with self._lock:
            session, self._session = self._session, None
            self._down_reason = "driver shut down"
        if session is not None:
            session.close(return_lease=True)

    # ------------------------------------------------------------------ clients
    def client(self, client_type, service_name: str = ""):
        """The current session's client of ``client_type`` (for ``service_name``, default: the
        type's own service); ``NotConnectedError`` while the connection is down."""
        return self._current().client(client_type, service_name)

    @property
    def robot(self):
        return self._current().robot

    @property
    def state_client(self) -> RobotStateClient:
        return self.client(RobotStateClient)

    @property
    def command_client(self) -> RobotCommandClient:
        return self.client(RobotCommandClient)

    @property
    def lease_client(self) -> LeaseClient:
        return self.client(LeaseClient)

    @property
    def power_client(self) -> PowerClient:
        return self.client(PowerClient)

    @property
    def estop_client(self) -> EstopClient:
        return self.client(EstopClient)

    # ------------------------------------------------------------------ health
    def heartbeat(self, timeout: float) -> list[lease_pb2.LeaseResource]:
        """One ListLeases round trip: proves the link, follows the lease owner and detects a
        reboot (new lease epoch) or a robot clock jump (``SessionBrokenError``)."""
        session = self._current()
        response = session.client(LeaseClient).list_leases_full(timeout=timeout)
        received = time.time_ns()
        synced, skew, rtt = session.time_sync()
        if synced:
            with self._lock:
                self._last_skew = skew
            error = robot_to_local_nsec(
                timestamp_to_nsec(response.header.response_timestamp), skew) - received
            if abs(error) > CLOCK_JUMP_NSEC + rtt:
                raise SessionBrokenError(f"robot clock jumped by {error / 1e9:+.1f} s")
        resources = list(response.resources)
        with self._lock:
            self._leases = resources
        self._follow_lease(session, resources)
        return resources

    def _follow_lease(self, session: Session, resources: list[lease_pb2.LeaseResource]) -> None:
        body = _body_resource(resources)
        owner = _owner_name(body.lease_owner) if body is not None else ""
        with self._lock:
            self._robot_lease_owner = owner
        keepalive = session.lease_keepalive
        if body is None or keepalive is None:
            return
        try:
            ours = keepalive.lease_wallet.get_lease("body")
        except bosdyn.client.lease.Error:
            return
        theirs = Lease(body.lease)
        comparison = ours.compare(theirs, ignore_resources=True)
        if comparison == Lease.CompareResult.DIFFERENT_EPOCHS:
            raise SessionBrokenError("robot rebooted (new lease epoch)")
        if comparison == Lease.CompareResult.OLDER and body.HasField("lease_owner"):
            with self._lock:
                self._lease_lost_to = owner or "another client"
                self._lease_wanted = False
            session.stop_lease_keepalive(return_lease=False)
            _LOG.warning("lease taken by %s; commands refused until 'claim_lease' with take",
                         owner)

    # ------------------------------------------------------------------ time
    def time_sync(self) -> tuple[bool, int, int]:
        """(established, clock skew ns, round trip ns); skew = robot clock - local clock."""
        with self._lock:
            session = self._session
        if session is None:
            return False, self._last_skew, 0
        return session.time_sync()

    @property
    def skew_nsec(self) -> int:
        synced, skew, _ = self.time_sync()
        return skew if synced else self._last_skew

    # ------------------------------------------------------------------ lease
    def wallet_lease(self) -> Lease | None:
        """The driver's current body lease (None while down or without one)."""
        with self._lock:
            session = self._session
        return session._wallet_lease() if session is not None else None

    @property
    def has_lease(self) -> bool:
        with self._lock:
            session = self._session
        keepalive = session.lease_keepalive if session is not None else None
        return keepalive is not None and keepalive.is_alive()

    def leases(self) -> list[lease_pb2.LeaseResource]:
        """The robot's lease resources as of the last heartbeat."""
        with self._lock:
            return list(self._leases)

    def lease_status(self) -> LeaseStatus:
        with self._lock:
            return LeaseStatus(self.has_lease, self._robot_lease_owner, self._lease_lost_to)

    def claim(self, take: bool = False) -> str:
        """Acquire (or take) the body lease and keep it alive."""
        session = self._current()
        with self._lock:
            if take:
                # Our keep-alive may hold a lease another client has since taken: replace it.
                session.stop_lease_keepalive(return_lease=False)
            if self.has_lease:
                return "lease already held"
            lease_client = session.client(LeaseClient)
            if take:
                lease_client.take()
            else:
                lease_client.acquire()
            session.lease_keepalive = LeaseKeepAlive(lease_client, must_acquire=True,
                                                     return_at_exit=False)
            self._lease_wanted, self._lease_lost_to = True, ""
            return "lease taken" if take else "lease acquired"

    def release(self) -> str:
        session = self._current()
        with self._lock:
            self._lease_wanted = False
            if session.lease_keepalive is None:
                return "no lease held"
            session.stop_lease_keepalive(return_lease=True)
            return "lease returned"

    def _reacquire_lease(self) -> None:
        """After a reconnect: acquire again the lease the driver held, when it is free (or
        still ours)."""
        try:
            self.claim()
            _LOG.info("lease re-acquired after reconnecting")
        except ResourceAlreadyClaimedError as exc:
            owner = _owner_name(exc.response.lease_owner)
            with self._lock:
                self._lease_lost_to, self._lease_wanted = owner, False
            _LOG.warning("lease not re-acquired: held by %s", owner)
        except (bosdyn.client.Error, NotConnectedError) as exc:
            _LOG.warning("lease not re-acquired: %s", type(exc).__name__)

    def require_lease(self) -> None:
        if self.has_lease:
            return
        with self._lock:
            lost_to = self._lease_lost_to
        if lost_to:
            raise CommandError(f"lease held by {lost_to}; call 'claim_lease' with take=true "
                               f"to take it back")
        self._current()  # not connected: say so rather than 'no lease'
        raise CommandError("no lease: the driver does not hold the body lease; "
                           "call 'claim' first")

    # ------------------------------------------------------------------ e-stop
    def _register_estop(self, session: Session) -> EstopKeepAlive:
        """Register the driver's e-stop endpoint. After a reconnect within the e-stop timeout
        the endpoint is still registered and simply resumes checking in, so motor power is not
        interrupted; after a reboot it installs a fresh single-endpoint configuration."""
        client = session.client(EstopClient)
        endpoint = EstopEndpoint(client, f"{self.config.client_name}-estop",
                                 self.config.estop_timeout)
        registered = [e.endpoint for e in client.get_status().endpoints]
        ours = next((e for e in registered
                     if self._estop_id and e.unique_id == self._estop_id), None)
        if ours is not None:
            endpoint.from_proto(ours)  # resume: the first check-in fetches a new challenge
        else:
            endpoint.force_simple_setup()
        self._estop_id = endpoint.unique_id
        return EstopKeepAlive(endpoint)

    def _estop(self) -> EstopKeepAlive:
        keepalive = self._current().estop_keepalive
        if keepalive is None:
            raise CommandError("the driver has no e-stop endpoint "
                               "(set the parameter 'estop_endpoint' to true)")
        return keepalive

    def estop_status(self) -> str:
        """'none' (no endpoint), 'ok', or the endpoint's last check-in problem."""
        with self._lock:
            session = self._session
        if session is None or session.estop_keepalive is None:
            return "none" if not self.config.estop_endpoint else "not registered"
        keepalive = session.estop_keepalive
        with self._lock:
            while not keepalive.status_queue.empty():
                status, message = keepalive.status_queue.get_nowait()
                self._estop_problem = "" if status == EstopKeepAlive.KeepAliveStatus.OK \
                    else str(message)
            return self._estop_problem or "ok"

    def estop_gentle(self) -> None:
        """Settle then cut: the robot sits, then motor power is cut."""
        self._estop().settle_then_cut()

    def estop_hard(self) -> None:
        """Cut motor power at once."""
        self._estop().stop()

    def estop_release(self) -> None:
        self._estop().allow()


def _body_resource(resources) -> lease_pb2.LeaseResource | None:
    by_name = {r.resource: r for r in resources}
    return by_name.get("body") or by_name.get("mobility")


def _owner_name(owner: lease_pb2.LeaseOwner) -> str:
    if owner.client_name and owner.user_name:
        return f"{owner.client_name} (user {owner.user_name})"
    return owner.client_name or owner.user_name
