"""The simulated robot's shared services through the unmodified SDK clients, as ordinary SDK
programs call them: directory registration, license (with a withheld feature), keepalive and
payloads; and every service the directory lists answers a representative call (never
UNIMPLEMENTED). Each capability's own services are tested in its ``test_<capability>_sim``."""

import time

import pytest
from bosdyn.api import (
    arm_surface_contact_service_pb2,
    gripper_camera_param_pb2,
    lease_pb2,
    manipulation_api_pb2,
    payload_pb2,
    ray_cast_pb2,
    service_fault_pb2,
)
from bosdyn.api.spot import inverse_kinematics_pb2, spot_check_pb2
from bosdyn.client import exceptions as sdk_errors
from bosdyn.client.arm_surface_contact import ArmSurfaceContactClient
from bosdyn.client.audio_visual import AudioVisualClient
from bosdyn.client.auto_return import AutoReturnClient
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
)
from bosdyn.client.gripper_camera_param import GripperCameraParamClient
from bosdyn.client.image import ImageClient
from bosdyn.client.inverse_kinematics import InverseKinematicsClient
from bosdyn.client.ir_enable_disable import IREnableDisableServiceClient
from bosdyn.client.keepalive import InvalidPolicyError, KeepaliveClient, Policy
from bosdyn.client.license import LicenseClient
from bosdyn.client.log_status import (
    LogStatusClient,
)
from bosdyn.client.manipulation_api_client import ManipulationApiClient
from bosdyn.client.payload import PayloadClient
from bosdyn.client.payload_registration import (
    InvalidPayloadCredentialsError,
    PayloadNotAuthorizedError,
    PayloadRegistrationClient,
)
from bosdyn.client.point_cloud import PointCloudClient
from bosdyn.client.power import power_on_motors
from bosdyn.client.ray_cast import RayCastClient
from bosdyn.client.robot_command import RobotCommandBuilder, UnsupportedError
from bosdyn.client.robot_state import RobotStateClient
from bosdyn.client.spot_check import SpotCheckClient
from test_body_sim import commander, operated, state_of, wait_for

from conftest import client, connect, holds, running_sim
from spot_sim.core.directory import LIVENESS_FAULT


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


def test_every_listed_service_answers_a_representative_rpc(equipped_sim, equipped_robot):
    """No service the directory lists answers UNIMPLEMENTED (or has no gRPC service)."""
    calls = representative_calls()
    listed = {entry.name for entry in equipped_robot.list_services()}
    assert listed - set(calls) == set(), f"no representative call for {listed - set(calls)}"
    for name in sorted(listed):
        refusal = REFUSALS.get(name)
        try:
            calls[name](equipped_robot)
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


def _first_streamed_state(robot):
    stream = robot.ensure_client("robot-state-streaming").get_robot_state_stream()
    first = next(stream)
    stream.cancel()
    assert len(first.joint_states.position) == 19  # the arm robot


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




# ---------------------------------------------------------------------------------- robot state






# ---------------------------------------------------------------------------------- data


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


# ---------------------------------------------------------------------------------- faults








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
            time.sleep(0.2)  # sleep: check-ins 0.2 s apart, inside the 0.6 s policy
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


# ---------------------------------------------------------------------------------- arm tools










# ---------------------------------------------------------------------------------- ray cast


# ---------------------------------------------------------------------------------- spot check


# ---------------------------------------------------------------------------------- point cloud
