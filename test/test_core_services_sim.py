"""The simulated robot's standard services through the unmodified SDK clients, as ordinary SDK
programs call them: directory registration, hardware configuration and link models, metrics,
data buffer and data service, license (with a withheld feature), stance, faults, keepalive,
payloads, log status, inverse kinematics, ray cast, gripper camera parameters, IR, Spot Check
and point-cloud; and every service the directory lists answers (never UNIMPLEMENTED)."""

import time

import numpy as np
import pytest
from bosdyn.api import (
    arm_surface_contact_service_pb2,
    data_buffer_pb2,
    data_index_pb2,
    gripper_camera_param_pb2,
    image_pb2,
    ir_enable_disable_pb2,
    lease_pb2,
    manipulation_api_pb2,
    payload_pb2,
    power_pb2,
    ray_cast_pb2,
    service_fault_pb2,
    time_range_pb2,
)
from bosdyn.api.spot import inverse_kinematics_pb2, spot_check_pb2
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.arm_surface_contact import ArmSurfaceContactClient
from bosdyn.client.audio_visual import AudioVisualClient
from bosdyn.client.auto_return import AutoReturnClient
from bosdyn.client.common import common_header_errors
from bosdyn.client.data_buffer import DataBufferClient
from bosdyn.client.data_service import DataServiceClient
from bosdyn.client.directory_registration import (
    DirectoryRegistrationClient,
    DirectoryRegistrationKeepAlive,
    ServiceAlreadyExistsError,
    ServiceDoesNotExistError,
)
from bosdyn.client.docking import DockingClient
from bosdyn.client.fault import (
    FaultClient,
    ServiceFaultAlreadyExistsError,
    ServiceFaultDoesNotExistError,
)
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.gripper_camera_param import GripperCameraParamClient
from bosdyn.client.image import ImageClient, build_image_request
from bosdyn.client.inverse_kinematics import InverseKinematicsClient
from bosdyn.client.ir_enable_disable import IREnableDisableServiceClient
from bosdyn.client.keepalive import InvalidPolicyError, KeepaliveClient, Policy
from bosdyn.client.license import LicenseClient
from bosdyn.client.log_status import (
    ExperimentAlreadyRunningError,
    LogStatusClient,
    RequestIdDoesNotExistError,
)
from bosdyn.client.manipulation_api_client import ManipulationApiClient
from bosdyn.client.math_helpers import Quat, SE3Pose, Vec2
from bosdyn.client.payload import PayloadClient
from bosdyn.client.payload_registration import (
    InvalidPayloadCredentialsError,
    PayloadNotAuthorizedError,
    PayloadRegistrationClient,
)
from bosdyn.client.point_cloud import PointCloudClient
from bosdyn.client.power import power_on_motors
from bosdyn.client.ray_cast import RayCastClient
from bosdyn.client.ray_cast import UnknownFrameError as RayCastUnknownFrameError
from bosdyn.client.robot_command import RobotCommandBuilder, UnsupportedError, blocking_stand
from bosdyn.client.robot_state import RobotStateClient
from bosdyn.client.spot_check import SpotCheckClient, run_spot_check
from test_body_sim import commander, operated, state_of, wait_for

from conftest import connect, holds, running_sim
from spot_sim.core.directory import LIVENESS_FAULT


@pytest.fixture(scope="module")
def arm_sim(tmp_path_factory):
    with running_sim(tmp_path_factory.mktemp("certs"), has_arm=True, has_spot_cam=True,
                     has_audio_visual=True) as spot:
        yield spot


@pytest.fixture
def arm_robot(arm_sim):
    robot = connect(arm_sim)
    yield robot
    robot.time_sync.stop()


def client(robot, client_type):
    return robot.ensure_client(client_type.default_service_name)


# ---------------------------------------------------------------------------------- directory
def test_directory_registration_register_update_unregister_and_liveness(sim, robot):
    registration = client(robot, DirectoryRegistrationClient)
    registration.register("my-payload-service", "my.package.MyService",
                          "my-payload-service.spot.robot", "127.0.0.1", 50051,
                          liveness_timeout_secs=0.5)
    robot.sync_with_directory()
    entry = robot.list_services() and next(
        s for s in robot.list_services() if s.name == "my-payload-service")
    assert entry.type == "my.package.MyService"
    with pytest.raises(ServiceAlreadyExistsError):
        registration.register("my-payload-service", "my.package.MyService",
                              "my-payload-service.spot.robot", "127.0.0.1", 50051)
    registration.update("my-payload-service", "my.package.MyService2",
                        "my-payload-service.spot.robot", "127.0.0.1", 50052,
                        liveness_timeout_secs=0.5)
    assert next(s for s in robot.list_services()
                if s.name == "my-payload-service").type == "my.package.MyService2"

    def liveness_faults():
        faults = state_of(robot).service_fault_state.faults
        return [f for f in faults if f.fault_id.fault_name == LIVENESS_FAULT]

    assert wait_for(lambda: liveness_faults(), timeout=3)  # nobody re-registered in 0.5 s
    assert liveness_faults()[0].fault_id.service_name == "my-payload-service"
    with DirectoryRegistrationKeepAlive(registration, rpc_interval_seconds=0.2) as keepalive:
        keepalive.start("kept-alive", "my.package.Kept", "kept.spot.robot", "127.0.0.1", 50053,
                        liveness_timeout_secs=0.6, reset_service=True)
        # the keep-alive re-registers in time, over 2.5 liveness timeouts
        assert holds(lambda: "kept-alive" not in [f.fault_id.service_name
                                                  for f in liveness_faults()], 1.5, period=0.1)
    registration.unregister("my-payload-service")
    assert "my-payload-service" not in {s.name for s in robot.list_services()}
    with pytest.raises(ServiceDoesNotExistError):
        registration.unregister("my-payload-service")
    with pytest.raises(sdk_errors.InvalidRequestError):
        registration.register("", "t", "a.spot.robot", "127.0.0.1", 1)


def test_every_listed_service_answers_a_representative_rpc(arm_sim, arm_robot):
    """No service the directory lists answers UNIMPLEMENTED (or has no gRPC service)."""
    calls = representative_calls()
    listed = {entry.name for entry in arm_robot.list_services()}
    assert listed - set(calls) == set(), f"no representative call for {listed - set(calls)}"
    for name in sorted(listed):
        refusal = REFUSALS.get(name)
        try:
            calls[name](arm_robot)
        except sdk_errors.Error as exc:  # a transport error (RpcError) is never an answer
            assert refusal is not None and isinstance(exc, refusal), f"{name}: {exc!r}"
        else:
            assert refusal is None, f"{name} answered where it must refuse with {refusal}"


def _refusals() -> dict:
    """The representative calls that ask for a refusal, and the SDK error each must raise."""
    from bosdyn.client.auth import InvalidLoginError
    from bosdyn.client.autowalk import CompilationError
    from bosdyn.client.directory_registration import ServiceDoesNotExistError
    from bosdyn.client.fault import ServiceFaultDoesNotExistError
    from bosdyn.client.payload_registration import InvalidPayloadCredentialsError

    return {"auth": InvalidLoginError,  # wrong password
            "autowalk-service": CompilationError,  # an empty walk
            "directory-registration": ServiceDoesNotExistError,
            "fault": ServiceFaultDoesNotExistError,
            "manipulation": sdk_errors.InvalidRequestError,  # unknown command id
            "payload-registration": InvalidPayloadCredentialsError,
            "power": sdk_errors.UnsetStatusError,  # unknown command id: STATUS_UNKNOWN
            "robot-command": sdk_errors.InvalidRequestError}  # unknown command id


REFUSALS = _refusals()


def _stale_lease_surface_contact(robot) -> None:
    """A stale lease: an answer the SDK does not raise for, so its header is read."""
    response = robot.ensure_client(ArmSurfaceContactClient.default_service_name) \
        .arm_surface_contact_command(arm_surface_contact_service_pb2.ArmSurfaceContactCommand(
            lease=lease_pb2.Lease(resource="body", epoch="stale", sequence=[1])))
    error = response.header.error
    assert error.code == error.CODE_INVALID_REQUEST and "lease is not valid" in error.message, \
        response


def representative_calls() -> dict:
    from bosdyn.api.autowalk import walks_pb2
    from bosdyn.api.graph_nav import map_processing_pb2
    from bosdyn.choreography.client.choreography import ChoreographyClient
    from bosdyn.client.auth import AuthClient
    from bosdyn.client.autowalk import AutowalkClient
    from bosdyn.client.directory import DirectoryClient
    from bosdyn.client.estop import EstopClient
    from bosdyn.client.graph_nav import GraphNavClient
    from bosdyn.client.lease import LeaseClient
    from bosdyn.client.local_grid import LocalGridClient
    from bosdyn.client.map_processing import MapProcessingServiceClient
    from bosdyn.client.power import PowerClient
    from bosdyn.client.recording import GraphNavRecordingServiceClient
    from bosdyn.client.robot_command import RobotCommandClient
    from bosdyn.client.robot_id import RobotIdClient
    from bosdyn.client.time_sync import TimeSyncClient
    from bosdyn.client.world_object import WorldObjectClient
    from bosdyn.mission.client import MissionClient

    def c(robot, name):
        return robot.ensure_client(name)

    return {
        "robot-id": lambda r: c(r, RobotIdClient.default_service_name).get_id(),
        "auth": lambda r: c(r, AuthClient.default_service_name).auth("nobody", "wrong"),
        "directory": lambda r: c(r, DirectoryClient.default_service_name).list(),
        "directory-registration": lambda r: c(
            r, DirectoryRegistrationClient.default_service_name).unregister("nothing"),
        "time-sync": lambda r: c(r, TimeSyncClient.default_service_name).get_time_sync_update(
            None, "test"),
        "lease": lambda r: c(r, LeaseClient.default_service_name).list_leases(),
        "estop": lambda r: c(r, EstopClient.default_service_name).get_status(),
        "power": lambda r: c(r, PowerClient.default_service_name).power_command_feedback(1),
        "robot-command": lambda r: c(r, RobotCommandClient.default_service_name)
        .robot_command_feedback(1),
        "robot-state": lambda r: c(r, RobotStateClient.default_service_name).get_robot_state(),
        "image": lambda r: c(r, ImageClient.default_service_name).list_image_sources(),
        "docking": lambda r: c(r, DockingClient.default_service_name).get_docking_config(),
        "world-objects": lambda r: c(r, WorldObjectClient.default_service_name)
        .list_world_objects(),
        "robot-mission": lambda r: c(r, MissionClient.default_service_name).get_state(),
        "graph-nav-service": lambda r: c(r, GraphNavClient.default_service_name)
        .get_localization_state(),
        "recording-service": lambda r: c(
            r, GraphNavRecordingServiceClient.default_service_name).get_record_status(),
        "map-processing-service": lambda r: c(
            r, MapProcessingServiceClient.default_service_name).process_anchoring(
            map_processing_pb2.ProcessAnchoringRequest.Params(), False, False),
        "local-grid-service": lambda r: c(r, LocalGridClient.default_service_name)
        .get_local_grid_types(),
        "autowalk-service": lambda r: c(r, AutowalkClient.default_service_name)
        .compile_autowalk(walks_pb2.Walk()),
        "choreography": lambda r: c(r, ChoreographyClient.default_service_name)
        .list_all_sequences(),
        "license": lambda r: c(r, LicenseClient.default_service_name).get_license_info(),
        "fault": lambda r: c(r, FaultClient.default_service_name).clear_service_fault(
            service_fault_pb2.ServiceFaultId(fault_name="none", service_name="none")),
        "data-buffer": lambda r: c(r, DataBufferClient.default_service_name)
        .add_operator_comment("hello"),
        "data": lambda r: c(r, DataServiceClient.default_service_name)
        .get_data_buffer_status(),
        "keepalive": lambda r: c(r, KeepaliveClient.default_service_name).get_status(),
        "payload": lambda r: c(r, PayloadClient.default_service_name).list_payloads(),
        "payload-registration": lambda r: c(
            r, PayloadRegistrationClient.default_service_name).get_payload_auth_token(
            "nobody", "wrong"),
        "log-status": lambda r: c(r, LogStatusClient.default_service_name)
        .get_active_log_statuses(),
        "ray-cast": lambda r: c(r, RayCastClient.default_service_name).raycast(
            (0, 0, 1), (0, 0, -1), [ray_cast_pb2.RayIntersection.TYPE_GROUND_PLANE],
            frame_name="odom"),
        "ir-enable-disable-service": lambda r: c(
            r, IREnableDisableServiceClient.default_service_name).set_ir_enabled(True),
        "audio-visual": lambda r: c(r, AudioVisualClient.default_service_name)
        .list_behaviors(),
        "auto-return": lambda r: c(r, AutoReturnClient.default_service_name)
        .get_configuration(),
        "spot-check": lambda r: c(r, SpotCheckClient.default_service_name).spot_check_feedback(
            spot_check_pb2.SpotCheckFeedbackRequest()),
        "point-cloud": lambda r: c(r, PointCloudClient.default_service_name)
        .list_point_cloud_sources(),
        "velodyne-point-cloud": lambda r: (r.sync_with_directory(), r.ensure_client(
            "velodyne-point-cloud").list_point_cloud_sources()),
        "manipulation": lambda r: c(r, ManipulationApiClient.default_service_name)
        .manipulation_api_feedback_command(
            manipulation_api_pb2.ManipulationApiFeedbackRequest(manipulation_cmd_id=1)),
        "arm-surface-contact": _stale_lease_surface_contact,
        "inverse-kinematics": lambda r: c(r, InverseKinematicsClient.default_service_name)
        .inverse_kinematics(inverse_kinematics_pb2.InverseKinematicsRequest(
            root_frame_name="odom", tool_pose_task=inverse_kinematics_pb2
            .InverseKinematicsRequest.ToolPoseTask())),
        "gripper-camera-param": lambda r: c(r, GripperCameraParamClient.default_service_name)
        .get_camera_params(gripper_camera_param_pb2.GripperCameraGetParamRequest()),
        "robot-state-streaming": _first_streamed_state,
        "robot-command-streaming": lambda r: c(r, "robot-command-streaming")
        .send_joint_control_commands(iter(())),  # no command: answered INACTIVE
        "spot-cam-ptz": lambda r: c(r, "spot-cam-ptz").list_ptz(),
        "spot-cam-audio": lambda r: c(r, "spot-cam-audio").list_sounds(),
        "spot-cam-lighting": lambda r: c(r, "spot-cam-lighting").get_led_brightness(),
        "spot-cam-power": lambda r: c(r, "spot-cam-power").get_power_status(),
        "spot-cam-health": lambda r: c(r, "spot-cam-health").get_temperature(),
        "spot-cam-compositor": lambda r: c(r, "spot-cam-compositor").list_screens(),
        "spot-cam-stream-quality": lambda r: c(r, "spot-cam-stream-quality")
        .get_stream_params(),
        "spot-cam-network": lambda r: c(r, "spot-cam-network").get_ice_configuration(),
        "spot-cam-version": lambda r: c(r, "spot-cam-version").get_software_version(),
        "spot-cam-media-log": lambda r: c(r, "spot-cam-media-log").list_cameras(),
        "spot-cam-image": lambda r: (r.sync_with_directory(), c(r, "spot-cam-image")
                                     .list_image_sources())[1],
        "data-acquisition": lambda r: c(r, "data-acquisition").get_service_info(),
        "data-acquisition-store": lambda r: c(r, "data-acquisition-store")
        .query_max_capture_id(),
    }


def _first_streamed_state(robot):
    stream = robot.ensure_client("robot-state-streaming").get_robot_state_stream()
    first = next(stream)
    stream.cancel()
    assert len(first.joint_states.position) == 19  # the arm robot


# ---------------------------------------------------------------------------------- robot state
def test_hardware_configuration_link_models_and_metrics(arm_sim, arm_robot):
    state_client = client(arm_robot, RobotStateClient)
    skeleton = state_client.get_robot_hardware_configuration().skeleton
    names = [link.name for link in skeleton.links]
    for expected in ("body", "front_left_upper_leg", "rear_right_lower_leg", "arm0.link_sh0",
                     "arm0.link_wr1", "arm0.link_fngr"):
        assert expected in names
    model = state_client.get_robot_link_model("front_left_upper_leg")
    vertices = [line for line in model.file_contents.splitlines() if line.startswith("v ")]
    faces = [line for line in model.file_contents.splitlines() if line.startswith("f ")]
    assert len(vertices) == 8 and len(faces) == 6
    zs = [float(v.split()[3]) for v in vertices]
    assert max(zs) - min(zs) == pytest.approx(0.3205, abs=1e-3)  # the upper leg's length
    with pytest.raises(sdk_errors.InvalidRequestError):
        state_client.get_robot_link_model("no_such_link")
    metrics = {m.label: m for m in state_client.get_robot_metrics().metrics}
    assert {"distance", "gait cycles", "time moving", "electric power"} <= set(metrics)
    assert metrics["distance"].units == "m"


def test_hardware_configuration_without_arm_has_no_arm_links(sim, robot):
    names = [link.name for link in
             client(robot, RobotStateClient).get_robot_hardware_configuration().skeleton.links]
    assert "body" in names and not any(n.startswith("arm0") for n in names)


def test_metrics_count_walking(sim, robot):
    state_client = client(robot, RobotStateClient)
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        commander(robot).robot_command(RobotCommandBuilder.synchro_velocity_command(0.5, 0, 0),
                                       end_time_secs=time.time() + 1.0)
        time.sleep(1.5)  # sleep: past the walk's 1 s end (velocity has no feedback)
    metrics = {m.label: m for m in state_client.get_robot_metrics().metrics}
    assert metrics["distance"].float_value > 0.2
    assert metrics["time moving"].duration.ToNanoseconds() > 0.5e9


# ---------------------------------------------------------------------------------- data
def test_data_buffer_stores_and_the_data_service_reads_back(sim, robot):
    buffer = client(robot, DataBufferClient)
    data = client(robot, DataServiceClient)
    buffer.add_operator_comment("the robot looked at the gauge")
    buffer.add_text_messages([data_buffer_pb2.TextMessage(message="hello", source="test")])
    event = data_buffer_pb2.Event(type="inspection", description="gauge read", source="test",
                                  level=data_buffer_pb2.Event.LEVEL_MEDIUM)
    robot.time_sync.wait_for_sync(timeout_sec=5)
    event.start_time.CopyFrom(robot.time_sync.robot_timestamp_from_local_secs(time.time()))
    event.end_time.CopyFrom(event.start_time)
    buffer.add_events([event])
    buffer.add_blob(b"\x01\x02\x03", "my.BlobType", channel="blobs")
    schema_id = buffer.register_signal_schema(
        [data_buffer_pb2.SignalSchema.Variable(name="x", type=data_buffer_pb2.SignalSchema
                                               .Variable.TYPE_FLOAT64)], "signals")
    assert schema_id > 0
    comments = data.get_events_comments(data_index_pb2.EventsCommentsSpec(
        comments=True, events=[{}])).events_comments
    assert [c.message for c in comments.operator_comments] == ["the robot looked at the gauge"]
    assert [e.type for e in comments.events] == ["inspection"]
    status = data.get_data_buffer_status(get_blob_specs=True).data_buffer_status
    assert status.num_comments == 1 and status.num_events == 1
    assert [s.channel for s in status.blob_specs] == ["blobs"]
    index = data.get_data_index(data_index_pb2.DataQuery(
        text_messages=True, blobs=[data_index_pb2.BlobSpec(channel="blobs")])).data_index
    assert index.text_messages.pages[0].num_ticks == 1
    assert index.blobs[0].pages[0].page.num_ticks == 1
    pages = data.get_data_pages(time_range_pb2.TimeRange()).pages
    deleted = data.delete_data_pages(time_range_pb2.TimeRange(), [p.id for p in pages])
    assert deleted.bytes_deleted > 0
    assert data.get_data_buffer_status().data_buffer_status.num_comments == 0
    with pytest.raises(sdk_errors.InvalidRequestError):
        buffer.register_signal_schema([], "empty")


# ---------------------------------------------------------------------------------- license
def test_license_lists_features_and_a_withheld_feature_is_refused(certs_dir):
    with running_sim(certs_dir, has_arm=True, withheld_features=("docking", "arm")) as spot:
        robot = connect(spot)
        try:
            licenses = client(robot, LicenseClient)
            info = licenses.get_license_info()
            assert info.status == info.STATUS_VALID and info.robot_serial
            assert "docking" not in info.licensed_features
            assert "choreography" in info.licensed_features
            enabled = licenses.get_feature_enabled(["docking", "choreography", "arm"])
            assert dict(enabled) == {"docking": False, "choreography": True, "arm": False}
            with operated(robot):
                power_on_motors(robot.ensure_client("power"), timeout_sec=10)
                docking = client(robot, DockingClient)
                end = robot.time_sync.robot_timestamp_from_local_secs(time.time() + 20)
                with pytest.raises(sdk_errors.InvalidRequestError, match="docking"):
                    docking.docking_command(520, robot.time_sync.endpoint.clock_identifier, end)
                with pytest.raises(UnsupportedError) as refused:
                    commander(robot).robot_command(RobotCommandBuilder.arm_ready_command())
                assert "'arm'" in refused.value.response.message
        finally:
            robot.time_sync.stop()


# ---------------------------------------------------------------------------------- stance
def test_stance_command_with_feedback(sim, robot):
    from bosdyn.api import basic_command_pb2

    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        blocking_stand(commander(robot), timeout_sec=10)
        snapshot = state_of(robot).kinematic_state.transforms_snapshot
        odom_t_body = get_a_tform_b(snapshot, "odom", "body")
        feet = [odom_t_body * SE3Pose(x, y, 0, Quat())
                for x, y in ((0.3, 0.15), (0.3, -0.15), (-0.3, 0.15), (-0.3, -0.15))]
        command = RobotCommandBuilder.stance_command(
            "odom", *[Vec2(f.x, f.y).to_proto() for f in feet])
        command_id = commander(robot).robot_command(command, end_time_secs=time.time() + 5)
        Stance = basic_command_pb2.StanceCommand.Feedback

        def status():
            feedback = commander(robot).robot_command_feedback(command_id)
            return (feedback.feedback.synchronized_feedback.mobility_command_feedback
                    .stance_feedback.status)

        assert wait_for(lambda: status() == Stance.STATUS_STANCED, timeout=5)
        far = RobotCommandBuilder.stance_command(
            "odom", *[Vec2(f.x + 3.0, f.y).to_proto() for f in feet])
        far_id = commander(robot).robot_command(far, end_time_secs=time.time() + 5)
        command_id = far_id
        assert status() == Stance.STATUS_TOO_FAR_AWAY
        missing = RobotCommandBuilder.stance_command(
            "odom", *[Vec2(f.x, f.y).to_proto() for f in feet])
        del missing.synchronized_command.mobility_command.stance_request.stance \
            .foot_positions["hr"]
        with pytest.raises(sdk_errors.InvalidRequestError):
            commander(robot).robot_command(missing, end_time_secs=time.time() + 5)


# ---------------------------------------------------------------------------------- faults
def test_service_faults_trigger_show_in_state_and_clear(sim, robot):
    faults = client(robot, FaultClient)
    fault = service_fault_pb2.ServiceFault(error_message="camera unplugged",
                                           severity=service_fault_pb2.ServiceFault.SEVERITY_WARN)
    fault.fault_id.fault_name = "camera"
    fault.fault_id.service_name = "my-service"
    faults.trigger_service_fault(fault)
    active = state_of(robot).service_fault_state.faults
    assert [f.error_message for f in active] == ["camera unplugged"]
    with pytest.raises(ServiceFaultAlreadyExistsError):
        faults.trigger_service_fault(fault)  # already active
    faults.clear_service_fault(fault.fault_id)
    assert not state_of(robot).service_fault_state.faults
    with pytest.raises(ServiceFaultDoesNotExistError):
        faults.clear_service_fault(fault.fault_id)


def test_fan_commands_run_for_their_duration_and_a_newer_one_takes_over(sim, robot):
    from bosdyn.client.power import PowerClient

    power = client(robot, PowerClient)
    Feedback = power_pb2.FanPowerCommandFeedbackResponse
    with operated(robot):
        with pytest.raises(sdk_errors.InvalidRequestError):
            power.fan_power_command(percent_power=150, duration=1)
        first = power.fan_power_command(percent_power=50, duration=10)
        assert first.status == first.STATUS_OK
        assert power.fan_power_command_feedback(first.command_id).status == \
            Feedback.STATUS_RUNNING
        second = power.fan_power_command(percent_power=100, duration=1)
        overridden = power.fan_power_command_feedback(first.command_id)
        assert overridden.status == Feedback.STATUS_OVERRIDDEN_BY_COMMAND
        assert overridden.HasField("early_stop_time")
        assert wait_for(lambda: power.fan_power_command_feedback(second.command_id).status
                        == Feedback.STATUS_COMPLETE, 3.0)


def test_a_safety_stop_resets_only_on_a_robot_with_the_safety_rated_stop(tmp_path):
    """The plain robot has no safety-rated stop function (its hardware configuration says
    so) and refuses; one fitted with it (``safety_rated_stop``) resets either stop."""
    from bosdyn.client.power import (
        PowerClient,
        SafetyStopIncompatibleHardwareError,
        SafetyStopUnknownStopTypeError,
    )

    Request = power_pb2.ResetSafetyStopRequest
    for config, works in (({}, False), ({"safety_rated_stop": True}, True)):
        with running_sim(tmp_path / f"certs{works}", **config) as fitted:
            spot = connect(fitted)
            hardware = spot.ensure_client(RobotStateClient.default_service_name) \
                .get_robot_hardware_configuration()
            assert hardware.redundant_safety_stop_enabled == works
            power = client(spot, PowerClient)
            with operated(spot):
                with pytest.raises(SafetyStopUnknownStopTypeError):
                    power.reset_safety_stop(Request.SAFETY_STOP_UNKNOWN)
                for kind in (Request.SAFETY_STOP_PRIMARY, Request.SAFETY_STOP_REDUNDANT):
                    if works:
                        assert power.reset_safety_stop(kind).status == \
                            power_pb2.ResetSafetyStopResponse.STATUS_OK
                    else:
                        with pytest.raises(SafetyStopIncompatibleHardwareError):
                            power.reset_safety_stop(kind)
            spot.time_sync.stop()


def test_audio_visual_behaviours_play_by_priority_and_bad_ones_change_nothing(arm_sim,
                                                                              arm_robot):
    from bosdyn.api import audio_visual_pb2 as av
    from bosdyn.client import audio_visual as av_client

    lights = client(arm_robot, AudioVisualClient)
    arm_robot.time_sync.wait_for_sync(timeout_sec=5.0)  # end times are in robot time
    permanent = {b.name for b in lights.list_behaviors() if b.permanent}
    assert permanent == {"robot_normal", "robot_warning", "robot_danger"}
    behavior = av.AudioVisualBehavior(enabled=True, priority=15)
    blink = behavior.led_sequence_group.front_center.blink_sequence
    blink.color.rgb.r, blink.period.nanos, blink.duty_cycle = 255, 500_000_000, 0.5
    lights.add_or_modify_behavior("beacon", behavior)
    bad = av.AudioVisualBehavior()
    bad.CopyFrom(behavior)
    bad.led_sequence_group.front_center.blink_sequence.period.seconds = 30
    with pytest.raises(av_client.InvalidBehaviorError):
        lights.add_or_modify_behavior("beacon", bad)
    with pytest.raises(av_client.PermanentBehaviorError):
        lights.add_or_modify_behavior("robot_normal", behavior)
    assert next(b for b in lights.list_behaviors() if b.name == "beacon").behavior == behavior
    Result = av.RunBehaviorResponse
    soon = time.time() + 5.0
    assert lights.run_behavior("beacon", soon).run_result == Result.RESULT_BEHAVIOR_RUN
    assert lights.run_behavior("robot_normal", soon).run_result == Result.RESULT_LOW_PRIORITY
    assert lights.run_behavior("beacon", soon).run_result == Result.RESULT_ALREADY_RUNNING
    with pytest.raises(av_client.BehaviorExpiredError):
        lights.run_behavior("beacon", time.time() - 60.0)
    with pytest.raises(av_client.DoesNotExistError):
        lights.run_behavior("nothing", soon)
    other = connect(arm_sim)
    with pytest.raises(av_client.InvalidClientError):  # not the client that ran it
        client(other, AudioVisualClient).stop_behavior("beacon")
    other.time_sync.stop()
    lights.stop_behavior("beacon")
    with pytest.raises(sdk_errors.InvalidRequestError):
        lights.set_system_params(max_brightness=1.5)
    assert lights.get_system_params().params.max_brightness == pytest.approx(1.0)
    lights.set_system_params(enabled=False, max_brightness=0.4)
    assert lights.run_behavior("beacon", soon).run_result == Result.RESULT_SYSTEM_DISABLED
    lights.set_system_params(enabled=True)
    with pytest.raises(av_client.PermanentBehaviorError):
        lights.delete_behaviors(["robot_danger"])
    assert [b.name for b in lights.delete_behaviors(["beacon"])] == ["beacon"]
    with pytest.raises(av_client.DoesNotExistError):
        lights.delete_behaviors(["beacon"])


# ---------------------------------------------------------------------------------- keepalive
def test_keepalive_policy_cuts_power_when_checkins_stop(sim, robot):
    keepalive = client(robot, KeepaliveClient)
    with operated(robot):
        power_on_motors(robot.ensure_client("power"), timeout_sec=10)
        policy = Policy()
        policy.name = "operator heartbeat"
        policy.add_controlled_motors_off_action(0.6)
        added = keepalive.modify_policy(to_add=policy).added_policy
        for _ in range(5):
            keepalive.check_in(added.policy_id)
            time.sleep(0.2)
        assert sim.robot.powered  # checked in often enough
        assert [p.policy.name for p in keepalive.get_status().status] == ["operator heartbeat"]
        assert wait_for(lambda: not sim.robot.powered, timeout=5)  # stopped checking in
        keepalive.modify_policy(policy_ids_to_remove=[added.policy_id])
        with pytest.raises(InvalidPolicyError):
            keepalive.check_in(added.policy_id)


# ---------------------------------------------------------------------------------- payloads
def test_payload_registration_needs_authorization(sim, robot):
    registration = client(robot, PayloadRegistrationClient)
    payload = payload_pb2.Payload(GUID="3e2c6e0f-sim-payload", name="inspection kit",
                                  description="test payload")
    registration.register_payload(payload, "payload-secret")
    listed = client(robot, PayloadClient).list_payloads()
    assert [(p.name, p.is_authorized) for p in listed] == [("inspection kit", False)]
    with pytest.raises(PayloadNotAuthorizedError):
        registration.get_payload_auth_token(payload.GUID, "payload-secret")
    assert sim.authorize_payload(payload.GUID)
    assert registration.get_payload_auth_token(payload.GUID, "payload-secret")
    with pytest.raises(InvalidPayloadCredentialsError):
        registration.get_payload_auth_token(payload.GUID, "wrong secret")


# ---------------------------------------------------------------------------------- logs
def test_log_status_experiment_and_retro_logs(sim, robot):
    logs = client(robot, LogStatusClient)
    started = logs.start_experiment_log(0.5)
    log_id = started.log_status.id
    assert logs.get_log_status(log_id).log_status.status == \
        started.log_status.STATUS_IN_PROGRESS
    assert [s.id for s in logs.get_active_log_statuses().log_statuses] == [log_id]
    with pytest.raises(ExperimentAlreadyRunningError):
        logs.start_experiment_log(1.0)  # one experiment log at a time
    assert wait_for(lambda: logs.get_log_status(log_id).log_status.status
                    == started.log_status.STATUS_DONE, 3.0)
    retro = logs.start_retro_log(5.0)
    logs.terminate_log(retro.log_status.id)
    with pytest.raises(RequestIdDoesNotExistError):
        logs.get_log_status("no-such-log")


# ---------------------------------------------------------------------------------- arm tools
def test_inverse_kinematics_from_the_arm_kinematics(arm_sim, arm_robot):
    from spot_sim.manipulation import arm_kinematics

    ik = client(arm_robot, InverseKinematicsClient)
    snapshot = state_of(arm_robot).kinematic_state.transforms_snapshot
    odom_t_body = get_a_tform_b(snapshot, "odom", "body")
    body_t_tool = SE3Pose(0.7, 0.0, 0.3, Quat())  # no wrist-mounted tool: the tool is the hand
    task = inverse_kinematics_pb2.InverseKinematicsRequest.ToolPoseTask(
        task_tform_desired_tool=body_t_tool.to_proto())
    request = inverse_kinematics_pb2.InverseKinematicsRequest(
        root_frame_name="odom", scene_tform_task=odom_t_body.to_proto(), tool_pose_task=task)
    response = ik.inverse_kinematics(request)
    assert response.status == response.STATUS_OK
    q = [j.position.value for j in response.robot_configuration.joint_states][:6]
    hand = arm_kinematics.hand_pose(q)
    assert hand[:3, 3] == pytest.approx([0.7, 0.0, 0.3], abs=2e-3)  # the sim arm's own FK
    reported = get_a_tform_b(response.robot_configuration.transforms_snapshot, "body", "hand")
    assert (reported.x, reported.y, reported.z) == pytest.approx((0.7, 0.0, 0.3), abs=2e-3)
    far = inverse_kinematics_pb2.InverseKinematicsRequest(
        root_frame_name="odom", scene_tform_task=odom_t_body.to_proto(),
        tool_pose_task=inverse_kinematics_pb2.InverseKinematicsRequest.ToolPoseTask(
            task_tform_desired_tool=SE3Pose(5.0, 0, 0, Quat()).to_proto()))
    assert ik.inverse_kinematics(far).status == response.STATUS_NO_SOLUTION_FOUND
    with pytest.raises(sdk_errors.InvalidRequestError):
        ik.inverse_kinematics(inverse_kinematics_pb2.InverseKinematicsRequest(
            root_frame_name="hand", tool_pose_task=task))


def test_gripper_camera_params_round_trip(arm_sim, arm_robot):
    params = client(arm_robot, GripperCameraParamClient)
    request = gripper_camera_param_pb2.GripperCameraParamRequest()
    request.params.brightness.value = 0.8
    request.params.camera_mode = request.params.MODE_1920_1080
    params.set_camera_params(request)
    got = params.get_camera_params(gripper_camera_param_pb2.GripperCameraGetParamRequest())
    assert got.params.brightness.value == pytest.approx(0.8)
    assert got.params.camera_mode == request.params.MODE_1920_1080
    request.params.brightness.value = 3.0
    with pytest.raises(sdk_errors.InvalidRequestError):
        params.set_camera_params(request)
    assert params.get_camera_params(gripper_camera_param_pb2.GripperCameraGetParamRequest()) \
        .params.brightness.value == pytest.approx(0.8)  # the refused request changed nothing
    request.params.brightness.value = 0.5
    request.params.camera_mode = request.params.MODE_640_480
    params.set_camera_params(request)


def _hand_image(robot) -> tuple[int, int, float]:
    """(cols, rows, mean grey level) of one hand colour image, and what ListImageSources
    says of its size."""
    images = client(robot, ImageClient)
    listed = {s.name: s for s in images.list_image_sources()}["hand_color_image"]
    shot = images.get_image([build_image_request(
        "hand_color_image", image_format=image_pb2.Image.FORMAT_RAW)])[0].shot.image
    assert (listed.cols, listed.rows) == (shot.cols, shot.rows)
    pixels = np.frombuffer(shot.data, np.uint8)
    assert pixels.size == shot.cols * shot.rows * 3
    return shot.cols, shot.rows, float(pixels.mean())


def test_gripper_camera_settings_change_the_hand_images(arm_sim, arm_robot):
    params = client(arm_robot, GripperCameraParamClient)
    cols, rows, auto = _hand_image(arm_robot)
    assert (cols, rows) == (640, 480)
    Params = gripper_camera_param_pb2.GripperCameraParams
    request = gripper_camera_param_pb2.GripperCameraParamRequest()
    request.params.camera_mode = Params.MODE_1280_720
    request.params.exposure_auto.value = False
    request.params.exposure_absolute.value = 0.05  # a fifth of what auto exposure chooses
    params.set_camera_params(request)
    cols, rows, dark = _hand_image(arm_robot)
    assert (cols, rows) == (1280, 720)
    assert dark < 0.5 * auto
    request = gripper_camera_param_pb2.GripperCameraParamRequest()
    request.params.camera_mode = Params.MODE_4208_3120
    request.params.exposure_auto.value = True
    params.set_camera_params(request)
    cols, rows, bright = _hand_image(arm_robot)
    assert (cols, rows) == (4208, 3120)
    assert bright == pytest.approx(auto, rel=0.1)
    request.params.camera_mode = Params.MODE_640_480
    params.set_camera_params(request)


def test_ir_enable_disable(sim, robot):
    ir = client(robot, IREnableDisableServiceClient)
    ir.set_ir_enabled(False)
    assert sim.ir.ir_enabled is False
    ir.set_ir_enabled(True)
    assert sim.ir.ir_enabled is True
    unknown = ir_enable_disable_pb2.IREnableDisableRequest()  # neither ON nor OFF
    with pytest.raises(sdk_errors.InvalidRequestError):
        ir.call(ir._stub.IREnableDisable, unknown, error_from_response=common_header_errors)
    assert sim.ir.ir_enabled is True  # a refused request changes nothing


# ---------------------------------------------------------------------------------- ray cast
def test_ray_cast_hits_the_floor_and_boxes(sim, robot):
    rays = client(robot, RayCastClient)
    Hit = ray_cast_pb2.RayIntersection
    down = rays.raycast((0, 0, 2), (0, 0, -1), [Hit.TYPE_GROUND_PLANE], frame_name="odom")
    assert down.hits[0].distance_meters == pytest.approx(2.0, abs=1e-4)
    # The red box spans x 2.2-2.8 at y 0.4-1.0, 0.8 m high: a ray along +x at y 0.7, z 0.4.
    box = rays.raycast((0, 0.7, 0.4), (1, 0, 0), [Hit.TYPE_VOXEL_MAP], frame_name="odom")
    assert box.hits[0].type == Hit.TYPE_VOXEL_MAP
    assert box.hits[0].hit_position_in_hit_frame.x == pytest.approx(2.2, abs=1e-3)
    body = rays.raycast((0, 0, 0), (0, 0, -1), [Hit.TYPE_GROUND_PLANE], frame_name="body")
    assert body.hit_frame_name == "body" and body.hits[0].distance_meters > 0.1
    with pytest.raises(RayCastUnknownFrameError):
        rays.raycast((0, 0, 0), (0, 0, -1), [Hit.TYPE_GROUND_PLANE], frame_name="no_such_frame")


# ---------------------------------------------------------------------------------- spot check
def test_spot_check_runs_with_feedback_and_refuses_a_standing_robot(sim, robot):
    from bosdyn.client.spot_check import SpotCheckNotSittingError

    checks = client(robot, SpotCheckClient)
    with operated(robot):
        result = run_spot_check(checks, robot.lease_wallet.get_lease(), timeout_sec=20,
                                update_frequency=2.0)
        assert result.state == result.STATE_FINISHED and result.progress == pytest.approx(1.0)
        assert set(result.camera_results) == {"frontleft", "frontright", "left", "right",
                                              "back"}
        assert sim.robot.powered  # Spot Check powers the motors on itself
        blocking_stand(commander(robot), timeout_sec=10)
        with pytest.raises(SpotCheckNotSittingError):
            run_spot_check(checks, robot.lease_wallet.get_lease(), timeout_sec=10,
                           update_frequency=2.0)


# ---------------------------------------------------------------------------------- point cloud
def test_point_cloud_under_its_standard_name(sim, robot):
    clouds = client(robot, PointCloudClient)
    sources = [s.name for s in clouds.list_point_cloud_sources()]
    assert sources == ["velodyne-point-cloud"]
    (response,) = clouds.get_point_cloud_from_sources(sources)
    assert response.point_cloud.num_points > 1000
