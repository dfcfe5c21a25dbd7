"""Assemble the simulated robot's services into one TLS gRPC server on 127.0.0.1."""

import logging
import os
import secrets
import threading
from concurrent import futures
from pathlib import Path

import grpc

from spot_sim.certs import CertPaths, ensure_certificates
from spot_sim.clock import RobotClock
from spot_sim.command_log import CommandLog
from spot_sim.config import SimConfig
from spot_sim.directory import Directory
from spot_sim.faults import FaultControl, RpcFaults
from spot_sim.graph_nav.navigation import GraphNav
from spot_sim.graph_nav.recording import Recorder
from spot_sim.robot import SimRobot
from spot_sim.rpc import AuthInterceptor, TokenIssuer
from spot_sim.sensors import Sensors
from spot_sim.services import (
    autowalk,
    camera_settings,
    choreography,
    data_buffer,
    directory_registration,
    docking,
    estop,
    fault,
    graph_nav,
    identity,
    image,
    inverse_kinematics,
    joint_streaming,
    keepalive,
    lease,
    license,
    local_grid,
    log_status,
    manipulation,
    map_processing,
    mission,
    payload,
    point_cloud,
    power,
    ray_cast,
    recording,
    robot_command,
    robot_state,
    spot_check,
    time_sync,
    world_object,
)

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
                 port: int = 0, max_workers: int = 96) -> None:
        self.config = config or SimConfig()
        self.certs: CertPaths = ensure_certificates(certs_dir)
        self.clock = RobotClock(self.config.clock_offset_sec, self.config.field.clock_drift_ppm)
        self.robot = SimRobot(self.config, self.clock)
        self.tokens = TokenIssuer(secrets.token_bytes(32))
        self._requested_port = port
        self._max_workers = max_workers
        self._server: grpc.Server | None = None
        self._server_lock = threading.Lock()
        self.port = 0
        self.rpc_faults = RpcFaults(self.config.field)
        self.commands = CommandLog((self.config.max_vel_x, self.config.max_vel_y,
                                    self.config.max_vel_yaw))
        self.faults = FaultControl(self)
        self.time_sync = time_sync.TimeSyncServicer(self.clock)
        self.sensors = Sensors(self.config.has_arm, self.config.color_cameras)
        command = robot_command.RobotCommandServicer(self.robot, self.time_sync)
        power_servicer = power.PowerServicer(self.robot)
        docking_servicer = docking.DockingServicer(self.robot)
        self.graph_nav = GraphNav(self.sensors.scene)
        self.recorder = Recorder(self.graph_nav, self.sensors)
        self.robot.step_hooks += [self.graph_nav.step, self.recorder.step]
        graph_nav_servicer = graph_nav.GraphNavServicer(self.robot, self.graph_nav,
                                                        self.recorder, self.time_sync)
        self.choreography = choreography.ChoreographyServicer(self.robot)
        self.mission = mission.MissionServicer(self.robot, mission.RobotServices(
            self.robot, command, power_servicer, docking_servicer, graph_nav_servicer))
        self.data = data_buffer.DataStore(self.clock)
        self.payloads = payload.PayloadRegistry()
        self.keepalive = keepalive.KeepaliveServicer(self.robot, self.data)
        self.ir = camera_settings.IREnableDisableServicer(self.clock)
        pc_servicer = point_cloud.PointCloudServicer(self.robot, self.sensors,
                                                     self.config.has_lidar)
        data_specs, payload_specs = data_buffer.specs(), payload.specs()
        streaming_specs = joint_streaming.specs()
        self._servicers = [
            (identity.specs()[0], identity.RobotIdServicer(self.config, self.clock)),
            (identity.specs()[1], identity.AuthServicer(self.config, self.clock, self.tokens)),
            (time_sync.spec(), self.time_sync),
            (lease.spec(), lease.LeaseServicer(self.robot, self.tokens)),
            (estop.spec(), estop.EstopServicer(self.robot)),
            (power.spec(), power_servicer),
            (robot_command.spec(), command),
            (image.spec(), image.ImageServicer(self.robot, self.sensors)),
            (docking.spec(), docking_servicer),
            (world_object.spec(), world_object.WorldObjectServicer(self.robot)),
            (mission.spec(), self.mission),
            (graph_nav.spec(), graph_nav_servicer),
            (recording.spec(), recording.RecordingServicer(self.robot, self.recorder)),
            (map_processing.spec(), map_processing.MapProcessingServicer(self.robot,
                                                                         self.graph_nav)),
            (local_grid.spec(), local_grid.LocalGridServicer(self.robot, self.sensors.scene)),
            (autowalk.spec(), autowalk.AutowalkServicer(self.clock, self.mission)),
            (choreography.spec(), self.choreography),
            (license.spec(), license.LicenseServicer(self.clock, self.robot.license)),
            (fault.spec(), fault.FaultServicer(self.clock, self.robot.service_faults)),
            (data_specs[0], data_buffer.DataBufferServicer(self.clock, self.data)),
            (data_specs[1], data_buffer.DataServicer(self.clock, self.data)),
            (keepalive.spec(), self.keepalive),
            (payload_specs[0], payload.PayloadServicer(self.clock, self.payloads)),
            (payload_specs[1], payload.PayloadRegistrationServicer(self.clock, self.payloads,
                                                                   self.tokens)),
            (log_status.spec(), log_status.LogStatusServicer(self.clock)),
            (ray_cast.spec(), ray_cast.RayCastServicer(self.robot, self.sensors.scene)),
            (camera_settings.ir_spec(), self.ir),
            (spot_check.spec(), spot_check.SpotCheckServicer(self.robot, self.config.field)),
            (streaming_specs[0], joint_streaming.RobotStateStreamingServicer(self.robot)),
            (streaming_specs[1], joint_streaming.RobotCommandStreamingServicer(self.robot)),
            *[(spec, pc_servicer) for spec in point_cloud.specs(self.config.has_lidar)],
        ]
        if self.config.has_arm:
            self._servicers += [
                (manipulation.spec(), manipulation.ManipulationServicer(
                    self.robot, self.sensors.scene)),
                (inverse_kinematics.spec(),
                 inverse_kinematics.InverseKinematicsServicer(self.robot)),
                (camera_settings.gripper_spec(),
                 camera_settings.GripperCameraParamServicer(self.clock)),
            ]
        directory_spec = identity.specs()[2]
        registration_spec = directory_registration.spec()
        all_specs = [spec for spec, _ in self._servicers] + [directory_spec, registration_spec,
                                                             robot_state.spec()]
        self.directory = Directory(self.clock, self.robot.service_faults,
                                   identity.directory_entries(self.clock, all_specs))
        self._servicers += [
            (directory_spec, identity.DirectoryServicer(self.clock, self.directory)),
            (registration_spec,
             directory_registration.DirectoryRegistrationServicer(self.clock, self.directory)),
            (robot_state.spec(), robot_state.RobotStateServicer(self.robot, self.directory)),
        ]

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
        _LOG.info("simulated Spot listening on %s:%d", LOOPBACK, self.port)
        return self.port

    def _serve(self, port: int) -> None:
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=self._max_workers,
                                       thread_name_prefix="spot-sim-rpc"),
            interceptors=[self.rpc_faults, AuthInterceptor(self.tokens), self.commands],
            options=[("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                     ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                     ("grpc.so_reuseport", 0)])
        for spec, servicer in self._servicers:
            spec.add_to_server(servicer, server)
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
        self.mission.runner.stop()
        self.keepalive.stop()
        self.robot.stop()

    def wait(self) -> None:
        if self._server is not None:
            self._server.wait_for_termination()

    def __enter__(self) -> "SimulatedSpot":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
