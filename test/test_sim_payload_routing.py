"""Payload services reached through the simulated robot, with the official SDK only: a
service registered in the directory is called at its authority through the robot's port,
as a robot's API proxy forwards it."""

import os
import socket
import subprocess
import sys
import time
from concurrent import futures
from pathlib import Path

import bosdyn.client
import grpc
import pytest
from bosdyn.api.mission import remote_pb2, remote_service_pb2_grpc
from bosdyn.client.directory_registration import DirectoryRegistrationClient
from bosdyn.client.exceptions import UnimplementedError
from bosdyn.mission.remote_client import RemoteClient
from test_sim_motion import wait_for

from conftest import MISSING, PASSWORD, USERNAME, running_sim

SERVICE_TYPE = "bosdyn.api.mission.RemoteMissionService"


def _answered(response):
    response.header.error.code = response.header.error.CODE_OK
    return response


class Greeter(remote_service_pb2_grpc.RemoteMissionServiceServicer):
    """A payload's remote mission service: one session, each tick says hello to whom it
    is asked (the caller's token must reach it)."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.tokens: list[str] = []

    def EstablishSession(self, request, context):
        self.tokens += [v for k, v in context.invocation_metadata() if k == "authorization"]
        return _answered(remote_pb2.EstablishSessionResponse(
            status=remote_pb2.EstablishSessionResponse.STATUS_OK, session_id="greeting"))

    def Tick(self, request, context):
        if request.session_id != "greeting":
            return _answered(remote_pb2.TickResponse(
                status=remote_pb2.TickResponse.STATUS_INVALID_SESSION_ID))
        who = request.params.values["who"].string_value.value
        self.said.append(f"hello {who}")
        return _answered(remote_pb2.TickResponse(status=remote_pb2.TickResponse.STATUS_SUCCESS))


def _robot(sim, service_name: str):
    sdk = bosdyn.client.create_standard_sdk("payload-routing-test")
    sdk.register_service_client(RemoteClient, service_name=service_name)
    sdk.load_robot_cert(str(sim.ca_cert))
    robot = sdk.create_robot("127.0.0.1")
    robot.update_secure_channel_port(sim.port)
    robot.authenticate(USERNAME, PASSWORD)
    return robot


def test_a_registered_payload_service_is_called_through_the_robot(tmp_path):
    greeter = Greeter()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    remote_service_pb2_grpc.add_RemoteMissionServiceServicer_to_server(greeter, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with running_sim(tmp_path / "certs") as sim:
            robot = _robot(sim, "greeter")
            registration = robot.ensure_client(DirectoryRegistrationClient.default_service_name)
            registration.register("greeter", SERVICE_TYPE, "greeter.spot.robot", "127.0.0.1",
                                  port)
            remote = robot.ensure_client("greeter")
            session = remote.establish_session(lease_resources=())
            from bosdyn.api import service_customization_pb2

            params = service_customization_pb2.DictParam()
            params.values.get_or_create("who").string_value.value = "Spot"
            assert remote.tick(session, params=params, lease_resources=()).status == \
                remote_pb2.TickResponse.STATUS_SUCCESS
            assert greeter.said == ["hello Spot"]
            assert greeter.tokens and greeter.tokens[0].startswith("Bearer ")
            # Gone from the directory: the robot has nowhere to send the call.
            registration.unregister("greeter")
            with pytest.raises(UnimplementedError):
                remote.tick(session, params=params, lease_resources=())
            robot.time_sync.stop()
    finally:
        server.stop(0)


SDK_DIR = os.environ.get("SPOT_SDK_DIR", "")


@pytest.mark.skipif(not SDK_DIR, reason=MISSING + "a spot-sdk checkout (SPOT_SDK_DIR): its "
                    "example programs are in no package CI can install")
def test_the_sdk_remote_mission_examples_talk_through_the_robot(tmp_path):
    """Boston Dynamics' hello_world_mission_service.py registers itself with the robot;
    remote_mission_client.py then reaches it through the robot's directory."""
    examples = Path(SDK_DIR) / "python/examples/remote_mission_service"
    env = {**os.environ, "BOSDYN_CLIENT_USERNAME": USERNAME, "BOSDYN_CLIENT_PASSWORD": PASSWORD}
    with running_sim(tmp_path / "certs", estop_required=False) as sim:
        def program(name: str, *args: str) -> list[str]:
            return [sys.executable, "-m", "spot_sim.sdk_program", "--port", str(sim.port),
                    "--ca", str(sim.ca_cert), str(examples / name), *args]

        with socket.socket() as probe:  # a free port: the example registers the one it is given
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        service = subprocess.Popen(
            program("hello_world_mission_service.py", "robot", "127.0.0.1", "--host-ip",
                    "127.0.0.1", "--port", str(port)),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
        try:
            assert wait_for(lambda: sim.directory.get("hello-world-callback") is not None,
                            timeout=30), "the service never registered"
            client = subprocess.run(
                program("remote_mission_client.py", "--hello-world", "--user-string", "Spot",
                        "robot", "127.0.0.1"),
                capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
        finally:
            service.terminate()
            output, _ = service.communicate(timeout=10)
        assert client.returncode == 0, output[-3000:] + client.stderr[-2000:]
        assert "Hello Spot" in output + client.stdout + client.stderr, output[-2000:]
    time.sleep(0.1)
