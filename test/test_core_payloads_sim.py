"""Payload services reached through the simulated robot, with the official SDK only: a
service registered in the directory is called at its authority through the robot's port,
as a robot's API proxy forwards it."""

import os
import socket
import subprocess
import sys
from concurrent import futures

import bosdyn.client
import grpc
import pytest
from bosdyn.api import service_customization_pb2
from bosdyn.api.mission import mission_pb2, nodes_pb2, remote_pb2, remote_service_pb2_grpc
from bosdyn.client.directory_registration import DirectoryRegistrationClient
from bosdyn.client.exceptions import UnimplementedError
from bosdyn.mission.client import MissionClient
from bosdyn.mission.remote_client import RemoteClient
from test_body_sim import operated, wait_for
from test_missions_sim import run

from conftest import PASSWORD, SDK_EXAMPLES, USERNAME, missing, running_sim
from spot_sim import SimConfig, SimulatedSpot

SERVICE_TYPE = "bosdyn.api.mission.RemoteMissionService"
State = mission_pb2.State


def _answered(response):
    response.header.error.code = response.header.error.CODE_OK
    return response


class Greeter(remote_service_pb2_grpc.RemoteMissionServiceServicer):
    """A payload's remote mission service: one session, each tick says hello to whom it
    is asked (the caller's token must reach it)."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.tokens: list[str] = []
        self.torn_down: list[str] = []

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
        if who == "nobody":
            return _answered(remote_pb2.TickResponse(status=remote_pb2.TickResponse.STATUS_FAILURE))
        return _answered(remote_pb2.TickResponse(status=remote_pb2.TickResponse.STATUS_SUCCESS))

    def TeardownSession(self, request, context):
        self.torn_down.append(request.session_id)
        return _answered(remote_pb2.TeardownSessionResponse(
            status=remote_pb2.TeardownSessionResponse.STATUS_OK))


def _robot(sim, service_name: str):
    sdk = bosdyn.client.create_standard_sdk("payload-routing-test",
                                            service_clients=[MissionClient])
    sdk.register_service_client(RemoteClient, service_name=service_name)
    sdk.load_robot_cert(str(sim.ca_cert))
    robot = sdk.create_robot("127.0.0.1")
    robot.update_secure_channel_port(sim.port)
    robot.authenticate(USERNAME, PASSWORD)
    return robot


@pytest.fixture
def greeter():
    """A Greeter serving on a port of 127.0.0.1 (the payload's network, here)."""
    servicer = Greeter()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    remote_service_pb2_grpc.add_RemoteMissionServiceServicer_to_server(servicer, server)
    servicer.port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer
    server.stop(0)


def test_a_registered_payload_service_is_called_through_the_robot(tmp_path, greeter):
    with running_sim(tmp_path / "certs") as sim:
        robot = _robot(sim, "greeter")
        registration = robot.ensure_client(DirectoryRegistrationClient.default_service_name)
        registration.register("greeter", SERVICE_TYPE, "greeter.spot.robot", "127.0.0.1",
                              greeter.port)
        remote = robot.ensure_client("greeter")
        session = remote.establish_session(lease_resources=())
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


def _remote_node(who: str, service: str = "greeter") -> nodes_pb2.Node:
    spec = nodes_pb2.RemoteGrpc(service_name=service, timeout=5.0)
    spec.params.values.get_or_create("who").string_value.value = who
    node = nodes_pb2.Node(name=f"greet {who}")
    node.impl.Pack(spec)
    return node


def test_a_missions_remote_grpc_node_runs_on_the_payload_service(tmp_path, greeter):
    """The mission ticks the payload's service through the directory: its answers are the
    node's results, the session is torn down at the end; an unregistered service is an
    error at play."""
    with running_sim(tmp_path / "certs") as sim:
        robot = _robot(sim, "greeter")
        robot.ensure_client(DirectoryRegistrationClient.default_service_name).register(
            "greeter", SERVICE_TYPE, "greeter.spot.robot", "127.0.0.1", greeter.port)
        with operated(robot):
            run(robot, _remote_node("Spot"), State.STATUS_SUCCESS)
            assert greeter.said == ["hello Spot"] and greeter.torn_down == ["greeting"]
            run(robot, _remote_node("nobody"), State.STATUS_FAILURE)
            state = run(robot, _remote_node("Spot", "no-such-service"), State.STATUS_ERROR)
            assert "no-such-service" in str(state)
        robot.time_sync.stop()


@pytest.mark.usefixtures("sdk_examples")
@pytest.mark.parametrize("folder, service, name, client, says", [
    ("remote_mission_service", ("hello_world_mission_service.py", "robot"),
     "hello-world-callback",
     ("remote_mission_client.py", "--hello-world", "--user-string", "Spot", "robot",
      "127.0.0.1"), "Hello Spot"),
    ("area_callback", ("area_callback_dummy.py",), "area-callback-dummy",
     ("area_callback_test_runner.py", "127.0.0.1", "--service-name", "area-callback-dummy",
      "--walk-duration", "1"), "Callback has started"),
    ("data_acquisition_service/save_file_plugin",
     ("save_file_plugin_service.py", "--file-path", "notes.txt"),
     "data-acquisition-save-file-plugin",
     ("../../tester_programs/plugin_tester.py", "127.0.0.1", "--service-name",
      "data-acquisition-save-file-plugin"), "All tests passed"),
], ids=["remote_mission_service", "area_callback", "save_file_plugin"])
def test_the_sdk_payload_service_examples_talk_through_the_robot(tmp_path, folder, service,
                                                                  name, client, says):
    """A Boston Dynamics example service registers itself with the robot; its example
    client then reaches it through the robot's directory."""
    examples = SDK_EXAMPLES / folder
    env = {**os.environ, "BOSDYN_CLIENT_USERNAME": USERNAME, "BOSDYN_CLIENT_PASSWORD": PASSWORD}
    (tmp_path / "notes.txt").write_text("a file on the payload\n")  # the save-file plugin's
    config = SimConfig(username=USERNAME, password=PASSWORD, estop_required=False)
    sim = SimulatedSpot(config, certs_dir=tmp_path / "certs", rest_port=443)  # the plugin
    try:  # tester downloads over REST from port 443, as from a robot
        sim.start()
    except OSError:
        sim.stop()
        missing("port 443 of 127.0.0.1 (run as root, as scripts/run_tests.sh does)")
    try:
        def program(file: str, *args: str) -> list[str]:
            return [sys.executable, "-m", "spot_sim.sdk_program", "--port", str(sim.port),
                    "--ca", str(sim.ca_cert), str(examples / file), *args]

        with socket.socket() as probe:  # a free port: the example registers the one it is given
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = subprocess.Popen(
            program(*service, "127.0.0.1", "--host-ip", "127.0.0.1", "--port", str(port)),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
        try:
            assert wait_for(lambda: sim.directory.get(name) is not None, timeout=30), \
                "the service never registered"
            result = subprocess.run(program(*client), capture_output=True, text=True,
                                    timeout=60, env=env, cwd=tmp_path)
        finally:
            server.terminate()
            output, _ = server.communicate(timeout=10)
        assert result.returncode == 0, output[-3000:] + result.stderr[-2000:]
        assert "Traceback" not in result.stderr, result.stderr[-3000:]
        assert says in output + result.stdout + result.stderr, output[-2000:]
    finally:
        sim.stop()
