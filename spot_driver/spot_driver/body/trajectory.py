"""The body ``trajectory`` goal as a followed task: walk to a planar goal and settle there."""

import math

from bosdyn.api import basic_command_pb2
from bosdyn.client.frame_helpers import get_a_tform_b
from bosdyn.client.math_helpers import SE3Pose

from spot_driver.body.commander import (
    Commander,
    Se2Goal,
    se2_goal_from_pose,
    trajectory_duration,
    trajectory_status_name,
)
from spot_driver.core.follower import Progress, RobotTask

_TRAJ = basic_command_pb2.SE2TrajectoryCommand.Feedback
_PROCESSING = basic_command_pb2.RobotCommandFeedbackStatus.STATUS_PROCESSING
SETTLE_GRACE_S = 2.0  # followed this long past the trajectory's duration


def remaining(snapshot, goal: Se2Goal) -> tuple[float, float]:
    """Distance (m) and heading error (rad) from the body to a planar goal."""
    frame_tform_body = get_a_tform_b(snapshot, goal.frame, "body")
    if frame_tform_body is None:
        return math.nan, math.nan
    se2 = frame_tform_body.get_closest_se2_transform()
    dyaw = math.atan2(math.sin(goal.yaw - se2.angle), math.cos(goal.yaw - se2.angle))
    return math.hypot(goal.x - se2.x, goal.y - se2.y), abs(dyaw)


class TrajectoryTask(RobotTask):
    """A pose in any frame of the robot's tree, reached as a planar trajectory in odom (or
    vision). Checked before anything is sent (finite pose, known frame, distance and duration
    bounds); succeeds when the robot is at the goal with its body settled, or (not
    ``precise``) as soon as it is near the goal (it walks on to the goal then).

    ``snapshot()`` is the robot's newest FrameTreeSnapshot."""

    name = "trajectory"
    poll_s = 0.05
    canceled_message = "canceled; robot stopped"

    def __init__(self, commander: Commander, snapshot, frame: str, pose: SE3Pose,
                 requested_duration: float, precise: bool = True,
                 avoid_obstacles: bool = True) -> None:
        self._commander, self._snapshot = commander, snapshot
        self.precise, self.avoid_obstacles = precise, avoid_obstacles
        self.goal = se2_goal_from_pose(snapshot(), frame, pose)
        distance, angle = remaining(snapshot(), self.goal)
        self.duration = trajectory_duration(distance, angle, requested_duration)
        self.timeout = self.duration + SETTLE_GRACE_S
        self._command_id = 0

    def start(self) -> None:
        self._command_id = self._commander.trajectory(self.goal, self.duration,
                                                      self.avoid_obstacles)

    def poll(self) -> Progress:
        feedback = self._commander.feedback(self._command_id)
        mobility = feedback.synchronized_feedback.mobility_command_feedback
        traj = mobility.se2_trajectory_feedback
        distance, angle = remaining(self._snapshot(), self.goal)
        status = trajectory_status_name(traj)
        progress = Progress(status=status, feedback={
            "distance_remaining": distance, "angle_remaining": angle, "status": status})
        if traj.status == _TRAJ.STATUS_AT_GOAL and \
                traj.body_movement_status == _TRAJ.BODY_STATUS_SETTLED:
            progress.done, progress.ok, progress.message = True, True, "reached the goal"
        elif not self.precise and traj.status == _TRAJ.STATUS_NEAR_GOAL:
            progress.done, progress.ok = True, True
            progress.message = "near the goal (precise_positioning off)"
        elif traj.final_goal_status == _TRAJ.FINAL_GOAL_STATUS_BLOCKED and \
                traj.body_movement_status == _TRAJ.BODY_STATUS_SETTLED:
            progress.done = True  # as close as the robot can get; it will not get closer
            progress.message = (f"blocked: the goal is not achievable (a no-go region or an "
                                f"obstacle is in the way); stopped {distance:.2f} m from it")
        elif mobility.status != _PROCESSING:
            name = basic_command_pb2.RobotCommandFeedbackStatus.Status.Name(mobility.status)
            progress.done, progress.message = True, f"robot stopped the trajectory: {name}"
        return progress

    def stop(self) -> None:
        self._commander.stop()
