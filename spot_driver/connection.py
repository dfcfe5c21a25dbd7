"""One SDK session with the robot, shared by every node of the driver process.

It owns authentication, the time-sync thread, the body lease (with its keep-alive) and, when
configured, the driver's own e-stop endpoint. Nodes call into it; it knows nothing of ROS.
"""

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

import bosdyn.client
from bosdyn.client.estop import EstopClient, EstopEndpoint, EstopKeepAlive
from bosdyn.client.lease import LeaseClient, LeaseKeepAlive
from bosdyn.client.power import PowerClient
from bosdyn.client.robot_command import RobotCommandClient
from bosdyn.client.robot_state import RobotStateClient
from bosdyn.mission.client import MissionClient

from spot_driver.credentials import Credentials
from spot_driver.errors import CommandError

_LOG = logging.getLogger(__name__)


class RobotConnectionError(Exception):
    """The robot could not be reached or refused the session; the message says why."""


@dataclass(frozen=True)
class ConnectionConfig:
    hostname: str
    port: int = 0  # 0: the SDK default (443)
    certificate: str = ""  # CA certificate; empty: the Boston Dynamics root CA bundled with the SDK
    client_name: str = "spot_ros2_driver"
    estop_endpoint: bool = False
    estop_timeout: float = 9.0
    timeout: float = 10.0


class RobotConnection:
    """The driver's single authenticated session with one robot."""

    def __init__(self, config: ConnectionConfig, credentials: Credentials) -> None:
        self.config = config
        self._credentials = credentials
        self._lock = threading.RLock()
        self.robot = None
        self._lease_keepalive: LeaseKeepAlive | None = None
        self._estop_keepalive: EstopKeepAlive | None = None

    # ------------------------------------------------------------------ session
    def connect(self) -> None:
        """Authenticate, establish time sync and create the service clients."""
        config = self.config
        sdk = bosdyn.client.create_standard_sdk(config.client_name,
                                                service_clients=[MissionClient])
        if config.certificate:
            path = Path(config.certificate).expanduser()
            if not path.is_file():
                raise RobotConnectionError(
                    f"CA certificate {str(path)!r} not found (parameter 'certificate')")
            sdk.load_robot_cert(str(path))
        robot = sdk.create_robot(config.hostname)
        if config.port:
            robot.update_secure_channel_port(config.port)
        try:
            robot.authenticate(self._credentials.username, self._credentials.password,
                               timeout=config.timeout)
        except bosdyn.client.InvalidLoginError:
            raise RobotConnectionError(
                f"robot {config.hostname!r} rejected the login of user "
                f"{self._credentials.username!r} (wrong username or password)") from None
        except bosdyn.client.RpcError as exc:
            raise RobotConnectionError(_rpc_failure(config, exc)) from None
        robot.time_sync.wait_for_sync(timeout_sec=config.timeout)
        self.state_client: RobotStateClient = robot.ensure_client(
            RobotStateClient.default_service_name)
        self.command_client: RobotCommandClient = robot.ensure_client(
            RobotCommandClient.default_service_name)
        self.lease_client: LeaseClient = robot.ensure_client(LeaseClient.default_service_name)
        self.power_client: PowerClient = robot.ensure_client(PowerClient.default_service_name)
        self.estop_client: EstopClient = robot.ensure_client(EstopClient.default_service_name)
        self.robot = robot
        if config.estop_endpoint:
            self._register_estop()

    def shutdown(self) -> None:
        """Stop keep-alives and return the lease. Motors stay as they are."""
        with self._lock:
            if self._lease_keepalive is not None:
                self._lease_keepalive.shutdown()
                self._lease_keepalive = None
            if self._estop_keepalive is not None:
                self._estop_keepalive.shutdown()
                self._estop_keepalive = None
        if self.robot is not None:
            self.robot.time_sync.stop()

    # ------------------------------------------------------------------ time
    def time_sync(self) -> tuple[bool, int, int]:
        """(established, clock skew ns, round trip ns); skew = robot clock - local clock."""
        endpoint = self.robot.time_sync.endpoint
        if not endpoint.has_established_time_sync:
            return False, 0, 0
        return (True, endpoint.clock_skew.ToNanoseconds(),
                endpoint.round_trip_time.ToNanoseconds())

    @property
    def skew_nsec(self) -> int:
        return self.time_sync()[1]

    # ------------------------------------------------------------------ lease
    @property
    def has_lease(self) -> bool:
        with self._lock:
            return self._lease_keepalive is not None and self._lease_keepalive.is_alive()

    def claim(self, take: bool = False) -> str:
        """Acquire (or take) the body lease and keep it alive."""
        with self._lock:
            if take and self._lease_keepalive is not None:
                # Our keep-alive may hold a lease another client has since taken: replace it.
                self._lease_keepalive.shutdown()
                self._lease_keepalive = None
            if self.has_lease:
                return "lease already held"
            if take:
                self.lease_client.take()
            keepalive = LeaseKeepAlive(self.lease_client, must_acquire=not take,
                                       return_at_exit=True)
            self._lease_keepalive = keepalive
            return "lease taken" if take else "lease acquired"

    def release(self) -> str:
        with self._lock:
            if self._lease_keepalive is None:
                return "no lease held"
            self._lease_keepalive.shutdown()
            self._lease_keepalive = None
            return "lease returned"

    def require_lease(self) -> None:
        if not self.has_lease:
            raise CommandError("no lease: the driver does not hold the body lease; "
                               "call 'claim' first")

    # ------------------------------------------------------------------ e-stop
    def _register_estop(self) -> None:
        endpoint = EstopEndpoint(self.estop_client, f"{self.config.client_name}-estop",
                                 self.config.estop_timeout)
        endpoint.force_simple_setup()
        self._estop_keepalive = EstopKeepAlive(endpoint)

    def _estop(self) -> EstopKeepAlive:
        if self._estop_keepalive is None:
            raise CommandError("the driver has no e-stop endpoint "
                               "(set the parameter 'estop_endpoint' to true)")
        return self._estop_keepalive

    def estop_gentle(self) -> None:
        """Settle then cut: the robot sits, then motor power is cut."""
        self._estop().settle_then_cut()

    def estop_hard(self) -> None:
        """Cut motor power at once."""
        self._estop().stop()

    def estop_release(self) -> None:
        self._estop().allow()


def _rpc_failure(config: ConnectionConfig, exc: Exception) -> str:
    text = str(exc)
    if "certificate" in text.lower() or "handshake" in text.lower() or "ssl" in text.lower():
        return (f"TLS handshake with {config.hostname!r} failed: the robot's certificate is "
                f"not signed by the CA in parameter 'certificate' ({config.certificate!r})")
    return f"robot {config.hostname!r} not reachable on port {config.port or 443}: " \
           f"{type(exc).__name__}"
