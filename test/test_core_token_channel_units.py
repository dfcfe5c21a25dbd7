"""The driver's SDK channels carry the user token as call metadata (``token_channel``):
through the SDK's own clients against the simulated robot, over TLS, every call shape
authenticates, a call without a token is refused, and no thread is started per call."""

import threading

import bosdyn.client
import grpc
import pytest
from bosdyn.api.graph_nav import map_pb2
from bosdyn.client.graph_nav import GraphNavClient
from bosdyn.client.robot_state import RobotStateClient, RobotStateStreamingClient

from conftest import PASSWORD, USERNAME
from spot_driver.core import token_channel


def token_robot(sim):
    sdk = bosdyn.client.create_standard_sdk("token-channel-test",
                                            service_clients=[RobotStateStreamingClient])
    sdk.load_robot_cert(str(sim.ca_cert))
    robot = token_channel.create_robot(sdk, "127.0.0.1")
    robot.update_secure_channel_port(sim.port)
    return robot


def test_a_call_without_the_token_is_refused_and_with_it_answered(sim):
    robot = token_robot(sim)
    robot.authenticate(USERNAME, PASSWORD)
    state = robot.ensure_client(RobotStateClient.default_service_name)
    token, robot.user_token = robot.user_token, None
    with pytest.raises(bosdyn.client.UnauthenticatedError):
        state.get_robot_state(timeout=5)
    robot.user_token = token  # read again on every call
    assert state.get_robot_state(timeout=5).HasField("kinematic_state")
    assert state.get_robot_state_async(timeout=5).result().HasField("kinematic_state")
    stream = robot.ensure_client(RobotStateStreamingClient.default_service_name)
    first = next(iter(stream.get_robot_state_stream(timeout=5)))
    assert first.HasField("joint_states")


def test_no_thread_is_started_per_call(sim):
    robot = token_robot(sim)
    robot.authenticate(USERNAME, PASSWORD)
    state = robot.ensure_client(RobotStateClient.default_service_name)
    state.get_robot_state(timeout=5)
    started = []
    original = threading.Thread.start

    def counting(thread):
        started.append(thread.name)
        return original(thread)

    threading.Thread.start = counting
    try:
        for _ in range(50):
            state.get_robot_state(timeout=5)
    finally:
        threading.Thread.start = original
    # the SDK's call-credentials plugin starts one thread per call (50 here)
    assert len(started) < 5, started


def test_the_robot_is_created_once_per_address(sim):
    sdk = bosdyn.client.create_standard_sdk("token-channel-test")
    first = token_channel.create_robot(sdk, "127.0.0.1")
    assert token_channel.create_robot(sdk, "127.0.0.1") is first
    assert isinstance(first, token_channel.TokenRobot)


def test_every_call_shape_is_what_the_sdk_expects(sim):
    """The SDK tells streaming calls apart by grpc's multicallable base classes; a chunked
    upload (stream -> unary) and a download (unary -> stream) go through."""
    robot = token_robot(sim)
    robot.authenticate(USERNAME, PASSWORD)
    channel = robot.ensure_secure_channel("api.spot.robot")
    assert isinstance(channel.unary_unary("/a/b"), grpc.UnaryUnaryMultiCallable)
    assert isinstance(channel.unary_stream("/a/b"), grpc.UnaryStreamMultiCallable)
    assert isinstance(channel.stream_unary("/a/b"), grpc.StreamUnaryMultiCallable)
    assert isinstance(channel.stream_stream("/a/b"), grpc.StreamStreamMultiCallable)
    graph_nav = robot.ensure_client(GraphNavClient.default_service_name)
    graph_nav.upload_graph(graph=map_pb2.Graph(), timeout=10)
    assert graph_nav.download_graph(timeout=10) is not None
