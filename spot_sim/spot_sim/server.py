"""Assemble the simulated robot's services into one TLS gRPC server on 127.0.0.1."""

import logging
import os
import secrets
from concurrent import futures
from pathlib import Path

import grpc
from bosdyn.api import data_buffer_pb2

from spot_sim import registry
from spot_sim.autonomy.navigation import GraphNav
from spot_sim.autonomy.recording import Recorder
from spot_sim.body.keepalive_service import KeepaliveServicer
from spot_sim.body.robot import SimRobot
from spot_sim.choreography.choreography_service import ChoreographyServicer
from spot_sim.core.certs import CertPaths, ensure_certificates
from spot_sim.core.clock import RobotClock
from spot_sim.core.command_log import CommandLog
from spot_sim.core.config import SimConfig
from spot_sim.core.directory import Directory
from spot_sim.core.fault_injection import FaultControl, RpcFaults
from spot_sim.core.identity_service import directory_entries
from spot_sim.core.lock_order import LEAF, OrderedLock
from spot_sim.core.payload_router import PayloadRouter
from spot_sim.core.payloads import PayloadRegistry
from spot_sim.core.rpc import AuthInterceptor, CrashInterceptor, TokenIssuer
from spot_sim.core.time_sync_service import TimeSyncServicer
from spot_sim.data_acquisition.data_buffer import DataStore
from spot_sim.data_acquisition.rest import DaqRest
from spot_sim.data_acquisition.store import CaptureStore
from spot_sim.docking.docking import Docking
from spot_sim.docking.world import DockWorld
from spot_sim.missions.mission_service import MissionServicer
from spot_sim.parts import SimParts
from spot_sim.perception.camera_settings_service import IREnableDisableServicer
from spot_sim.perception.sensors import Sensors
from spot_sim.spot_cam.parts import SpotCam

_LOG = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"
MAX_MESSAGE_BYTES = 100 * 1024 * 1024


class SimulatedSpot:
    """One simulated robot: its state, physics loop and gRPC server.

    Use as a context manager, or call ``start()`` / ``stop()``. The server only ever binds a
    loopback address. ``max_workers``: the profile's link latency is slept in the handler's
    worker thread (on a robot it is in the air and holds no server thread), so the pool is
    large enough for every request a driver keeps in flight over a long round trip.
    """

    def __init__(self, config: SimConfig | None = None, certs_dir: str | os.PathLike = ".",
                 port: int = 0, max_workers: int = 96, rest_port: int | None = None) -> None:
        self.config = config or SimConfig()
        self.certs: CertPaths = ensure_certificates(certs_dir)
        self.clock = RobotClock(self.config.clock_offset_sec, self.config.field.clock_drift_ppm)
        self.robot = SimRobot(self.config, self.clock)
        self.tokens = TokenIssuer(secrets.token_bytes(32))
        self._requested_port, self._rest_port, self.rest = port, rest_port, None
        self._max_workers = max_workers
        self._server: grpc.Server | None = None
        self._server_lock = OrderedLock("server", LEAF)
        self.port = 0
        self.rpc_faults = RpcFaults(self.config.field)
        self.commands = CommandLog((self.config.max_vel_x, self.config.max_vel_y,
                                    self.config.max_vel_yaw))
        self.faults = FaultControl(self)
        self.sensors = Sensors(self.config.has_arm, self.config.color_cameras,
                              render_workers=self.config.render_workers)
        self.world = DockWorld()
        self.docking = Docking(self.robot, self.world, self.config.start_docked_id)
        self.graph_nav = GraphNav(self.sensors.scene, self.world)
        self.recorder = Recorder(self.graph_nav, self.sensors, self.world)
        self.robot.add_step_hook(self.graph_nav.step)
        self.robot.add_step_hook(self.recorder.step)
        self.data = DataStore(self.clock)
        self.payloads = PayloadRegistry()
        self.captures = CaptureStore()
        self.spot_cam = SpotCam.build(self.clock) if self.config.has_spot_cam else None
        served = registry.served(self.config)
        self.directory = Directory(self.clock, self.robot.service_faults,
                                   directory_entries(self.clock, [s.spec for s in served]))
        parts = SimParts(self.config, self.clock, self.robot, self.tokens, self.sensors,
                         self.graph_nav, self.recorder, self.data, self.payloads, self.directory,
                         self.captures, self.spot_cam, self.world, self.docking)
        self.router = PayloadRouter(self.directory)
        self._servicers = []
        for service in served:
            parts.servicers[service.spec.name] = service.build(parts)
            self._servicers.append((service.spec, parts.servicers[service.spec.name]))
        # The servicers that tests, the admin channel and start/stop reach by name.
        self.time_sync = parts.servicer(TimeSyncServicer)
        self.choreography = parts.servicer(ChoreographyServicer)
        self.mission = parts.servicer(MissionServicer)
        self.keepalive = parts.servicer(KeepaliveServicer)
        self.ir = parts.servicer(IREnableDisableServicer)

    def authorize_payload(self, guid: str, authorized: bool = True) -> bool:
        """What an administrator does in the robot's web interface for a new payload."""
        return self.payloads.authorize(guid, authorized)

    @property
    def ca_cert(self) -> Path:
        return self.certs.ca_cert

    def start(self) -> int:
        """Start the physics loop and the server; returns the bound port."""
        self.robot.start()
        self.mission.runner.start()
        self.keepalive.start()
        self._serve(self._requested_port)
        # a robot's data buffer always holds its own recent logs, so a download over a
        # program's default window (bddf_download: the last five minutes) finds data
        self.data.record("text", "robot", data_buffer_pb2.TextMessage(
            message=f"robot services up on port {self.port}", source="robot",
            level=data_buffer_pb2.TextMessage.LEVEL_INFO, timestamp=self.clock.timestamp()))
        if self._rest_port is not None:  # the data-acquisition store's REST download
            self.rest = DaqRest(self.captures, self.data, self.tokens,
                                self.certs.server_cert, self.certs.server_key,
                                self._rest_port).start()
        _LOG.info("simulated Spot listening on %s:%d", LOOPBACK, self.port)
        return self.port

    def _serve(self, port: int) -> None:
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=self._max_workers,
                                       thread_name_prefix="spot-sim-rpc"),
            interceptors=[self.rpc_faults, AuthInterceptor(self.tokens), self.commands,
                          CrashInterceptor()],
            options=[("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                     ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                     ("grpc.so_reuseport", 0)])
        for spec, servicer in self._servicers:
            spec.add_to_server(servicer, server)
        server.add_generic_rpc_handlers((self.router,))  # last: what the robot leaves
        credentials = grpc.ssl_server_credentials(
            [(self.certs.server_key.read_bytes(), self.certs.server_cert.read_bytes())])
        bound = server.add_secure_port(f"{LOOPBACK}:{port}", credentials)
        if bound == 0:
            raise OSError(f"could not bind {LOOPBACK}:{port}")
        server.start()
        with self._server_lock:
            self._server, self.port = server, bound

    def drop_link(self) -> None:
        """Close the listener and every connection; the robot itself keeps running."""
        with self._server_lock:
            server, self._server = self._server, None
        if server is not None:
            server.stop(0).wait(2.0)

    def restore_link(self) -> None:
        """Listen again on the same port."""
        with self._server_lock:
            if self._server is not None:
                return
        self._serve(self.port)

    @property
    def link_up(self) -> bool:
        with self._server_lock:
            return self._server is not None

    def stop(self, grace: float = 0.5) -> None:
        with self._server_lock:
            server, self._server = self._server, None
        if server is not None:
            server.stop(grace).wait(grace + 1.0)
        if self.rest is not None:
            self.rest.stop()
        self.mission.runner.stop()
        self.router.close()
        self.keepalive.stop()
        self.robot.stop()
        self.sensors.close()

    def wait(self) -> None:
        if self._server is not None:
            self._server.wait_for_termination()

    def __enter__(self) -> "SimulatedSpot":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
