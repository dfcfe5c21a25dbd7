"""Arm, gripper and manipulation commands to the robot, checked before they are sent.

Every method raises ``CommandError`` with a sentence for people when the driver refuses (no
arm, no lease, invalid input) or the robot does; nothing is sent for invalid input.
"""

import math
import threading
import time

import numpy as np
from bosdyn.api import (
    arm_command_pb2,
    arm_surface_contact_pb2,
    arm_surface_contact_service_pb2,
    geometry_pb2,
    manipulation_api_pb2,
    robot_command_pb2,
    robot_state_pb2,
)
from bosdyn.client.arm_surface_contact import ArmSurfaceContactClient
from bosdyn.client.image import ImageClient
from bosdyn.client.manipulation_api_client import ManipulationApiClient
from bosdyn.client.math_helpers import SE3Pose
from bosdyn.client.robot_command import RobotCommandBuilder
from google.protobuf.timestamp_pb2 import Timestamp

from spot_driver.core.connection import RobotConnection
from spot_driver.core.errors import CommandError, describe
from spot_driver.manipulation import arm_trajectory
from spot_driver.manipulation.arm_trajectory import ARM_JOINTS, GRIPPER_OPEN, ArmTrajectory
from spot_driver.perception.cameras import UnknownCameraError, camera_sources

NO_ARM = "this robot has no arm"
POSTURES = {"stow": RobotCommandBuilder.arm_stow_command,
            "unstow": RobotCommandBuilder.arm_ready_command,
            "carry": RobotCommandBuilder.arm_carry_command}
Carry = robot_state_pb2.ManipulatorState


class ArmCommander:
    """Sends arm, gripper and manipulation-API commands through the shared connection."""

    def __init__(self, connection: RobotConnection) -> None:
        self._connection = connection
        self._has_arm: bool | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ plumbing
    @property
    def has_arm(self) -> bool:
        """Whether the robot reports arm joints (asked once)."""
        with self._lock:
            if self._has_arm is None:
                state = self._call("robot state", lambda:
                                   self._connection.state_client.get_robot_state(timeout=5.0))
                names = {j.name for j in state.kinematic_state.joint_states}
                self._has_arm = ARM_JOINTS[0] in names
            return self._has_arm

    def require_arm(self) -> None:
        if not self.has_arm:
            raise CommandError(NO_ARM)

    @staticmethod
    def _call(name: str, action):
        try:
            return action()
        except CommandError:
            raise
        except Exception as exc:
            raise CommandError(f"{name} failed: {describe(exc)}") from exc

    def _send(self, name: str, command: robot_command_pb2.RobotCommand,
              end_time_secs: float | None = None) -> int:
        self.require_arm()
        self._connection.require_lease()
        return self._call(name, lambda: self._connection.command_client.robot_command(
            command, end_time_secs=end_time_secs, timeout=5.0))

    def velocity(self, command: robot_command_pb2.RobotCommand, duration: float) -> int:
        """An arm velocity command (``arm_velocity.arm_velocity``) that the robot holds for
        ``duration`` s: the arm stops by itself when commands stop coming."""
        return self._send("arm velocity", command, end_time_secs=time.time() + duration)

    def feedback(self, command_id: int):
        """The robot's synchronized feedback (arm, gripper, mobility) of a command."""
        response = self._call("feedback", lambda: self._connection.command_client
                              .robot_command_feedback(command_id, timeout=2.0))
        return response.feedback.synchronized_feedback

    # ------------------------------------------------------------------ arm
    def joint_move(self, positions: np.ndarray, seconds: float, max_velocity: float = 0.0) -> int:
        """Move the six arm joints (ARM_JOINTS order) to ``positions`` in ``seconds``."""
        arm_trajectory.check_positions(np.asarray(positions, dtype=float))
        if not math.isfinite(seconds) or seconds < 0:
            raise CommandError("duration must be finite and not negative")
        if not math.isfinite(max_velocity) or max_velocity < 0:
            raise CommandError("max_velocity must be finite and not negative")
        command = RobotCommandBuilder.arm_joint_move_helper(
            [list(map(float, positions))], [seconds], max_vel=max_velocity or None)
        return self._send("arm joint move", command)

    def joint_trajectory(self, trajectory: ArmTrajectory, first: int, end: int,
                         start_local: float) -> int:
        """Send points [first, end) of ``trajectory``, timed from ``start_local`` (local clock
        seconds; the SDK converts it to robot time)."""
        reference = Timestamp()
        reference.FromNanoseconds(int(start_local * 1e9))
        velocities = None
        if trajectory.velocities is not None:
            velocities = trajectory.velocities[first:end].tolist()
        command = RobotCommandBuilder.arm_joint_move_helper(
            trajectory.positions[first:end].tolist(), trajectory.times[first:end].tolist(),
            joint_velocities=velocities, ref_time=reference, max_vel=10.0, max_acc=50.0)
        return self._send("arm joint trajectory", command)

    def pose(self, frame: str, pose: SE3Pose, seconds: float, known_frames) -> int:
        """Move the hand to ``pose`` in ``frame`` (a frame on the robot's tree)."""
        values = (pose.x, pose.y, pose.z, pose.rot.w, pose.rot.x, pose.rot.y, pose.rot.z)
        if not all(math.isfinite(v) for v in values):
            raise CommandError("hand pose must be finite")
        if abs(pose.rot.w) + abs(pose.rot.x) + abs(pose.rot.y) + abs(pose.rot.z) < 1e-6:
            raise CommandError("hand orientation is not a valid quaternion (zero length)")
        if frame not in known_frames:
            raise CommandError(f"unknown frame {frame!r} (frame_id); the robot knows "
                               f"{', '.join(sorted(known_frames))}")
        if not math.isfinite(seconds) or seconds <= 0:
            raise CommandError("duration must be positive")
        pose.rot.normalize()
        command = RobotCommandBuilder.arm_pose_command(
            pose.x, pose.y, pose.z, pose.rot.w, pose.rot.x, pose.rot.y, pose.rot.z, frame,
            seconds)
        return self._send("arm pose", command)

    def posture(self, name: str) -> int:
        if name not in POSTURES:
            raise CommandError(f"unknown arm posture {name!r}; use {', '.join(POSTURES)}")
        return self._send(f"arm {name}", POSTURES[name]())

    def stop_all(self) -> int:
        """Stop the body and the arm (a full-body stop)."""
        return self._send("stop", RobotCommandBuilder.stop_command())

    def stop(self) -> int:
        command = robot_command_pb2.RobotCommand()
        command.synchronized_command.arm_command.arm_stop_command.SetInParent()
        return self._send("arm stop", command)

    # ------------------------------------------------------------------ gripper
    def gripper(self, angle: float, max_torque: float = 0.0,
                fields: tuple[str, str] = ("angle", "max_torque")) -> int:
        """Move the claw to ``angle`` (rad, GRIPPER_OPEN .. 0 closed); a refusal names the
        request's ``fields`` for the angle and the torque."""
        if not math.isfinite(angle) or not GRIPPER_OPEN - 1e-6 <= angle <= 1e-6:
            raise CommandError(f"gripper {fields[0]} must be within [{GRIPPER_OPEN}, 0] rad "
                               "(0 is closed)")
        if not math.isfinite(max_torque) or max_torque < 0:
            raise CommandError(f"{fields[1]} must be finite and not negative")
        command = RobotCommandBuilder.claw_gripper_command_helper(
            [min(0.0, max(GRIPPER_OPEN, angle))], [0.0], max_torque=max_torque or None)
        return self._send("gripper", command)

    # ------------------------------------------------------------------ manipulation
    def _manipulation_client(self) -> ManipulationApiClient:
        self.require_arm()
        return self._call("manipulation API",
                          lambda: self._connection.client(ManipulationApiClient))

    def pick_object_in_image(self, camera: str, x: float, y: float, walk_only: bool = False,
                             offset: float = 0.0) -> int:
        """Ask the robot to pick up (or walk to) what is at pixel (x, y) of ``camera``."""
        if not (math.isfinite(x) and math.isfinite(y)):
            raise CommandError("pixel must be finite")
        if not math.isfinite(offset) or offset < 0:
            raise CommandError("offset_distance must be finite and not negative")
        try:
            source = camera_sources(camera, color=True).visual
        except UnknownCameraError as exc:
            raise CommandError(str(exc)) from None
        client = self._manipulation_client()
        self._connection.require_lease()
        responses = self._call("image", lambda: self._connection.client(ImageClient)
                               .get_image_from_sources([source], timeout=5.0))
        image = responses[0]
        if image.status != image.STATUS_OK:
            raise CommandError(f"camera {camera!r} has no image ({source} is not available)")
        cols, rows = image.shot.image.cols, image.shot.image.rows
        if not (0 <= x < cols and 0 <= y < rows):
            raise CommandError(f"pixel ({x:g}, {y:g}) is outside the {cols}x{rows} image")
        target = dict(pixel_xy=geometry_pb2.Vec2(x=x, y=y),
                      transforms_snapshot_for_camera=image.shot.transforms_snapshot,
                      frame_name_image_sensor=image.shot.frame_name_image_sensor,
                      camera_model=image.source.pinhole)
        if walk_only:
            request = manipulation_api_pb2.ManipulationApiRequest(
                walk_to_object_in_image=manipulation_api_pb2.WalkToObjectInImage(**target))
            if offset:
                request.walk_to_object_in_image.offset_distance.value = offset
        else:
            request = manipulation_api_pb2.ManipulationApiRequest(
                pick_object_in_image=manipulation_api_pb2.PickObjectInImage(**target))
        response = self._call("manipulation", lambda: client.manipulation_api_command(
            request, timeout=5.0))
        return response.manipulation_cmd_id

    def manipulation_request(self, request: manipulation_api_pb2.ManipulationApiRequest) -> int:
        """Send a checked manipulation API request (any kind); its command id."""
        client = self._manipulation_client()
        self._connection.require_lease()
        return self._call("manipulation", lambda: client.manipulation_api_command(
            request, timeout=5.0)).manipulation_cmd_id

    def manipulation_state(self, command_id: int) -> int:
        response = self._call("manipulation feedback", lambda: self._manipulation_client()
                              .manipulation_api_feedback_command(
                                  manipulation_api_pb2.ManipulationApiFeedbackRequest(
                                      manipulation_cmd_id=command_id), timeout=2.0))
        return response.current_state

    def surface_contact(self, request: arm_surface_contact_pb2.ArmSurfaceContact.Request) -> None:
        """Send a checked arm surface contact request (the lease is added by the client).
        The robot answers with a header only: its error is raised as a CommandError."""
        self.require_arm()
        client = self._call("arm surface contact",
                            lambda: self._connection.client(ArmSurfaceContactClient))
        self._connection.require_lease()
        command = arm_surface_contact_service_pb2.ArmSurfaceContactCommand(request=request)
        response = self._call("arm surface contact", lambda: client.arm_surface_contact_command(
            command, timeout=5.0))
        error = response.header.error
        if error.code not in (error.CODE_UNSPECIFIED, error.CODE_OK):
            raise CommandError(f"the robot refused the surface contact: {error.message}")

    def override_grasp(self, holding: bool, carry_state: int = 0) -> str:
        request = manipulation_api_pb2.ApiGraspOverrideRequest()
        request.api_grasp_override.override_request = (
            manipulation_api_pb2.ApiGraspOverride.OVERRIDE_HOLDING if holding
            else manipulation_api_pb2.ApiGraspOverride.OVERRIDE_NOT_HOLDING)
        if carry_state:
            if carry_state not in (Carry.CARRY_STATE_NOT_CARRIABLE, Carry.CARRY_STATE_CARRIABLE,
                                   Carry.CARRY_STATE_CARRIABLE_AND_STOWABLE):
                raise CommandError(f"unknown carry state {carry_state}")
            request.carry_state_override.override_request = carry_state
        client = self._manipulation_client()
        self._connection.require_lease()
        self._call("grasp override", lambda: client.grasp_override_command(request, timeout=5.0))
        return "holding an item" if holding else "not holding an item"


def arm_status_name(feedback: arm_command_pb2.ArmCommand.Feedback) -> str:
    """The status name of whichever arm command the feedback is for."""
    which = feedback.WhichOneof("feedback")
    if which is None:
        return "STATUS_UNKNOWN"
    detail = getattr(feedback, which)
    if "status" not in detail.DESCRIPTOR.fields_by_name:
        return which.replace("_feedback", "").upper()
    return detail.DESCRIPTOR.fields_by_name["status"].enum_type.values_by_number[
        detail.status].name

