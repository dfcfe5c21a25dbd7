"""One authenticated SDK ``Robot`` with time sync and its keep-alives: what
``RobotConnection`` replaces as a whole when the link breaks."""

import socket
import ssl
import threading
from dataclasses import dataclass
from pathlib import Path

import bosdyn.client
from bosdyn.api import time_sync_pb2
from bosdyn.client.estop import EstopKeepAlive
from bosdyn.client.lease import Lease, LeaseClient, LeaseKeepAlive

from spot_driver.core import token_channel
from spot_driver.core.credentials import Credentials
from spot_driver.core.lease_order import LeaseOrderedClient, uses_lease_wallet
from spot_driver.core.transient import RetryingClient


@dataclass(frozen=True)
class ConnectionConfig:
    hostname: str
    port: int = 0  # 0: the SDK default (443)
    certificate: str = ""  # CA certificate; empty: the Boston Dynamics root CA bundled with the SDK
    client_name: str = "spot_ros2_driver"
    estop_endpoint: bool = False
    estop_timeout: float = 9.0
    timeout: float = 10.0


class RobotConnectionError(Exception):
    """The robot could not be reached or refused the session; the message says why."""


class Session:
    """One authenticated SDK ``Robot`` with time sync and its keep-alives."""

    def __init__(self, config: ConnectionConfig, credentials: Credentials, timeout: float,
                 service_clients: list[type], response_processors: list = ()) -> None:
        """``response_processors``: SDK response processors every client of the session runs
        (added before any client is made: clients adopt the robot's)."""
        sdk = bosdyn.client.create_standard_sdk(config.client_name,
                                                service_clients=service_clients)
        if config.certificate:
            path = Path(config.certificate).expanduser()
            if not path.is_file():
                raise RobotConnectionError(
                    f"CA certificate {str(path)!r} not found (parameter 'certificate')")
            sdk.load_robot_cert(str(path))
        self._time_sync: tuple[object, tuple[bool, int, int]] | None = None
        robot = token_channel.create_robot(sdk, config.hostname)
        robot.response_processors.extend(response_processors)
        if config.port:
            robot.update_secure_channel_port(config.port)
        self.robot = robot
        self.lease_keepalive: LeaseKeepAlive | None = None
        self.estop_keepalive: EstopKeepAlive | None = None
        self._clients: dict[type, object] = {}
        self._order_lock = threading.Lock()  # one lease-carrying command at a time
        try:
            robot.authenticate(credentials.username, credentials.password, timeout=timeout)
            robot.time_sync.wait_for_sync(timeout_sec=timeout)
        except bosdyn.client.InvalidLoginError:
            self.close()
            raise RobotConnectionError(
                f"robot {config.hostname!r} rejected the login of user "
                f"{credentials.username!r} (wrong username or password)") from None
        except bosdyn.client.RpcError as exc:
            self.close()
            raise RobotConnectionError(_rpc_failure(config, exc, robot.cert)) from None
        except Exception:
            self.close()
            raise
        if not robot.time_sync.has_established_time_sync:
            self.close()
            raise RobotConnectionError(f"no time sync with {config.hostname!r} within "
                                       f"{timeout:.0f} s")

    def client(self, client_type, service_name: str = ""):
        key = (client_type, service_name)
        client = self._clients.get(key)
        if client is None:
            if service_name:
                self.robot.sync_with_directory()  # payload services register late
            client = self.robot.ensure_client(service_name or client_type.default_service_name)
            if uses_lease_wallet(client):
                client = LeaseOrderedClient(client, self._order_lock, self._wallet_lease)
            client = RetryingClient(client)
            self._clients[key] = client
        return client

    def _wallet_lease(self) -> Lease | None:
        try:
            return self.robot.lease_wallet.get_lease("body")
        except bosdyn.client.lease.Error:
            return None

    def time_sync(self) -> tuple[bool, int, int]:
        """Read from the SDK's last time-sync response, converted once per response (the
        state cycle asks every time; the estimate changes every few seconds)."""
        response = self.robot.time_sync.endpoint.response
        cached = self._time_sync
        if cached is not None and cached[0] is response:
            return cached[1]
        if response is None or response.state.status != time_sync_pb2.TimeSyncState.STATUS_OK:
            values = (False, 0, 0)
        else:
            estimate = response.state.best_estimate
            values = (True, estimate.clock_skew.ToNanoseconds(),
                      estimate.round_trip_time.ToNanoseconds())
        self._time_sync = (response, values)
        return values

    def stop_lease_keepalive(self, return_lease: bool) -> None:
        keepalive, self.lease_keepalive = self.lease_keepalive, None
        if keepalive is None:
            return
        keepalive.shutdown()
        if return_lease:
            try:
                self.client(LeaseClient).return_lease(
                    keepalive.lease_wallet.get_lease("body"), timeout=2.0)
            except bosdyn.client.Error:
                pass  # no longer ours, or the robot is away: nothing to return

    def close(self, return_lease: bool = False) -> None:
        """Stop keep-alives and background threads and close every channel (cancelling calls
        in flight)."""
        self.stop_lease_keepalive(return_lease)
        if self.estop_keepalive is not None:
            self.estop_keepalive.shutdown()
            self.estop_keepalive = None
        self.robot.__exit__(None, None, None)  # stops the time-sync and token threads
        self.robot.shutdown()


def _rpc_failure(config: ConnectionConfig, exc: Exception, ca: bytes | None) -> str:
    """Why an RPC to the robot failed: a TLS verification failure names the certificate
    parameter; anything else is 'not reachable'."""
    port = config.port or 443
    if ca and _tls_rejected(config.hostname, port, ca):
        which = repr(config.certificate) if config.certificate else \
            "empty: the Boston Dynamics root CA"
        return (f"TLS handshake with {config.hostname!r} failed: the robot's certificate is "
                f"not signed by the CA in parameter 'certificate' ({which})")
    return f"robot {config.hostname!r} not reachable on port {port}: {type(exc).__name__}"


def _tls_rejected(hostname: str, port: int, ca: bytes, timeout: float = 2.0) -> bool:
    """Whether the robot answers but its certificate does not verify against ``ca``."""
    context = ssl.create_default_context(cadata=ca.decode())
    context.check_hostname = False  # the SDK checks names through its authority override
    try:
        with socket.create_connection((hostname, port), timeout=timeout) as sock, \
                context.wrap_socket(sock):
            return False
    except ssl.SSLCertVerificationError:
        return True
    except (OSError, ValueError):
        return False
