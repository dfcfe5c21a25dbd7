"""Power and motion commands to the robot, checked before they are sent.

Every method raises ``CommandError`` with a sentence for people when the driver refuses
(no lease, invalid input) or the robot does; nothing is sent for invalid input.
"""

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from bosdyn.api import basic_command_pb2, geometry_pb2
from bosdyn.client import power as sdk_power
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import SE2Pose, SE3Pose
from bosdyn.client.robot_command import RobotCommandBuilder, blocking_sit, blocking_stand

from spot_driver.body.mobility import MobilitySettings
from spot_driver.core.connection import RobotConnection
from spot_driver.core.errors import CommandError, describe

GRAVITY_ALIGNED = ("odom", "vision")
TRAJECTORY_SPEED = 0.5  # m/s assumed when choosing a default trajectory duration
MAX_TRAJECTORY_DISTANCE = 30.0  # m; longer routes are a job for navigation (GraphNav, Nav2)
MAX_TRAJECTORY_DURATION = 300.0  # s


@dataclass(frozen=True)
class Se2Goal:
    """A planar goal in a gravity-aligned robot frame."""

    x: float
    y: float
    yaw: float
    frame: str


class Commander:
    """Turns driver requests into robot commands through the shared connection."""

    def __init__(self, connection: RobotConnection) -> None:
        self._connection = connection
        self.mobility = MobilitySettings()
        self.last_command: tuple[str, int] | None = None  # (name, robot command id)

    @property
    def _client(self):
        return self._connection.command_client

    def _run(self, name: str, action: Callable[[], object], needs_lease: bool = True):
        if needs_lease:
            self._connection.require_lease()
        try:
            return action()
        except CommandError:
            raise
        except Exception as exc:  # SDK errors become sentences
            raise CommandError(f"{name} failed: {describe(exc)}") from exc

    def _command(self, name: str, command, end_time_secs: float | None = None) -> int:
        command_id = self._run(name, lambda: self._client.robot_command(
            command, end_time_secs=end_time_secs))
        self.last_command = (name, command_id)
        return command_id

    def any_command(self, command, duration: float = 0.0) -> int:
        """Send a RobotCommand checked by the caller (``raw_command.check``); a ``duration``
        > 0 sets every end time it takes to that many seconds from now. Its id."""
        end = time.time() + duration if duration > 0.0 else None
        if end is not None and command.full_body_command.HasField(
                "constrained_manipulation_request"):  # not in the SDK's end-time tree
            command.full_body_command.constrained_manipulation_request.end_time.CopyFrom(
                self._connection.robot.time_sync.robot_timestamp_from_local_secs(end))
        return self._command("robot_command", command, end_time_secs=end)

    # ------------------------------------------------------------------ power
    def power_on(self, timeout: float = 20.0) -> str:
        self._run("power_on", lambda: sdk_power.power_on_motors(
            self._connection.power_client, timeout_sec=timeout))
        return "motors powered on"

    def power_off(self, timeout: float = 20.0) -> str:
        """Safe power off: the robot sits down, then cuts motor power."""
        self._run("power_off", lambda: sdk_power.safe_power_off_motors(
            self._client, self._connection.state_client, timeout_sec=timeout))
        return "robot sat down and powered off"

    # ------------------------------------------------------------------ posture
    def stand(self, timeout: float = 10.0) -> str:
        params = self.mobility.to_proto()
        self._run("stand", lambda: blocking_stand(self._client, timeout_sec=timeout,
                                                  params=params))
        self.last_command = ("stand", 0)
        return "standing"

    def sit(self, timeout: float = 10.0) -> str:
        self._run("sit", lambda: blocking_sit(self._client, timeout_sec=timeout))
        self.last_command = ("sit", 0)
        return "sitting"

    def stop(self) -> str:
        self._command("stop", RobotCommandBuilder.stop_command())
        return "stopping"

    def self_right(self) -> str:
        self._command("self_right", RobotCommandBuilder.selfright_command())
        return "self-right started"

    def joint_mode(self) -> int:
        """Enter joint mode: the robot then follows the joint-control command stream."""
        return self._command("joint_mode", RobotCommandBuilder.joint_command())

    def rollover(self) -> str:
        self._command("rollover", RobotCommandBuilder.battery_change_pose_command())
        return "rolling over to the battery-change pose"

    def clear_behavior_faults(self) -> str:
        state = self._run("clear_behavior_fault",
                          lambda: self._connection.state_client.get_robot_state(),
                          needs_lease=False)
        faults = list(state.behavior_fault_state.faults)
        if not faults:
            return "no behavior faults"
        cleared = 0
        for fault in faults:
            if self._run("clear_behavior_fault",
                         lambda f=fault: self._client.clear_behavior_fault(f.behavior_fault_id)):
                cleared += 1
        if cleared < len(faults):
            raise CommandError(f"cleared {cleared} of {len(faults)} behavior faults; "
                               f"the others are not clearable")
        return f"cleared {cleared} behavior fault(s)"

    def clear_behavior_fault(self, fault_id: int) -> str:
        """Clear one behavior fault, named by its id; refused for an id the robot lacks."""
        state = self._run("clear_behavior_fault",
                          lambda: self._connection.state_client.get_robot_state(),
                          needs_lease=False)
        ids = sorted(f.behavior_fault_id for f in state.behavior_fault_state.faults)
        if fault_id not in ids:
            raise CommandError(f"the robot has no behavior fault with id {fault_id} (it has "
                               f"{', '.join(map(str, ids)) or 'none'})")
        if not self._run("clear_behavior_fault",
                         lambda: self._client.clear_behavior_fault(fault_id)):
            raise CommandError(f"behavior fault {fault_id} is not clearable")
        return f"cleared behavior fault {fault_id}"

    def restand_if_standing(self) -> None:
        """Re-send stand with the current mobility settings when the robot was standing."""
        if self.last_command and self.last_command[0] == "stand" and self._connection.has_lease:
            command = RobotCommandBuilder.synchro_stand_command(params=self.mobility.to_proto())
            self._command("stand", command)

    # ------------------------------------------------------------------ motion
    def velocity_async(self, vx: float, vy: float, wz: float, duration: float):
        """Send a body velocity that the robot holds for ``duration`` seconds; a future."""
        self._connection.require_lease()
        command = RobotCommandBuilder.synchro_velocity_command(
            v_x=vx, v_y=vy, v_rot=wz, params=self.mobility.to_proto())
        return self._client.robot_command_async(command, end_time_secs=time.time() + duration)

    def trajectory(self, goal: Se2Goal, duration: float, avoid_obstacles: bool = True) -> int:
        """Walk to ``goal`` within ``duration`` s; ``avoid_obstacles`` False turns the
        robot's vision-based body obstacle avoidance off for this command."""
        params = self.mobility.to_proto()
        params.obstacle_params.disable_vision_body_obstacle_avoidance = not avoid_obstacles
        command = RobotCommandBuilder.synchro_se2_trajectory_point_command(
            goal_x=goal.x, goal_y=goal.y, goal_heading=goal.yaw, frame_name=goal.frame,
            params=params)
        end = time.time() + duration
        command_id = self._run("trajectory", lambda: self._client.robot_command(
            command, end_time_secs=end))
        self.last_command = ("trajectory", command_id)
        return command_id

    def feedback(self, command_id: int):
        return self._run("feedback", lambda: self._client.robot_command_feedback(command_id),
                         needs_lease=False).feedback


def se2_goal_from_pose(snapshot: geometry_pb2.FrameTreeSnapshot, frame: str,
                       pose: SE3Pose) -> Se2Goal:
    """A planar goal for a pose given in any frame on the robot's tree.

    Goals in odom or vision go to the robot as they are; goals in other frames (body, a
    camera, ...) are expressed in odom with the robot's current transforms.
    """
    values = (pose.x, pose.y, pose.z, pose.rot.w, pose.rot.x, pose.rot.y, pose.rot.z)
    if not all(math.isfinite(v) for v in values):
        raise CommandError("goal pose must be finite")
    if abs(pose.rot.w) + abs(pose.rot.x) + abs(pose.rot.y) + abs(pose.rot.z) < 1e-6:
        raise CommandError("goal orientation is not a valid quaternion (zero length)")
    known = snapshot.child_to_parent_edge_map
    if frame not in known:
        raise CommandError(f"unknown frame {frame!r} (frame_id); the robot knows "
                           f"{', '.join(sorted(known))}")
    if frame in GRAVITY_ALIGNED:
        target_frame, target = frame, pose
    else:
        odom_tform_frame = get_a_tform_b(snapshot, "odom", frame)
        target_frame, target = "odom", odom_tform_frame * pose
    se2: SE2Pose = target.get_closest_se2_transform()
    return Se2Goal(float(se2.x), float(se2.y), float(se2.angle), target_frame)


def trajectory_duration(distance: float, angle: float, requested: float) -> float:
    """The time to allow for a trajectory goal ``distance`` m and ``angle`` rad away:
    ``requested`` (s) or, when zero, a default. Raises ``CommandError`` for a negative or
    non-finite request, a goal beyond MAX_TRAJECTORY_DISTANCE or a duration beyond
    MAX_TRAJECTORY_DURATION."""
    if not math.isfinite(requested) or requested < 0:
        raise CommandError("duration must not be negative")
    if distance > MAX_TRAJECTORY_DISTANCE:
        raise CommandError(f"goal is {distance:.3g} m away; trajectory goals must be within "
                           f"{MAX_TRAJECTORY_DISTANCE:.0f} m (use navigation for longer routes)")
    duration = requested or default_duration(distance, angle)
    if duration > MAX_TRAJECTORY_DURATION:
        raise CommandError(f"duration {duration:.3g} s is longer than "
                           f"{MAX_TRAJECTORY_DURATION:.0f} s")
    return duration


def default_duration(distance: float, angle: float) -> float:
    """Time allowed for a trajectory: walking at a moderate pace plus settling time."""
    return distance / TRAJECTORY_SPEED + abs(angle) / 0.5 + 5.0


def trajectory_status_name(feedback: basic_command_pb2.SE2TrajectoryCommand.Feedback) -> str:
    return basic_command_pb2.SE2TrajectoryCommand.Feedback.Status.Name(feedback.status)
