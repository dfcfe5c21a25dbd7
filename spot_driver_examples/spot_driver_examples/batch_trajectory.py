"""A trajectory longer than one command holds, sent in batches: the hand traces a five-petal
rose 0.15 m across in front of the body, sampled at 20 Hz, as ``robot_command`` goals of
arm Cartesian trajectories of ``--batch`` points each, one after the other."""

import math

from bosdyn.api import arm_command_pb2, geometry_pb2, robot_command_pb2, trajectory_pb2
from bosdyn.api import synchronized_command_pb2 as synchronized
from bosdyn.util import seconds_to_duration

from spot_driver_examples.spot import Spot, arguments
from spot_msgs.action import ArmPosture, RobotCommand

CENTRE = (0.75, 0.0, 0.2)  # m in flat_body
RADIUS = 0.15  # m
PETALS = 5
RATE = 20.0  # Hz
LEAD_IN = 1.0  # s


def rose(t: float, period: float) -> tuple[float, float, float]:
    """The hand's position at ``t`` s on a rose of PETALS petals drawn once per ``period``."""
    angle = 2 * math.pi * t / period
    r = RADIUS * math.cos(PETALS * angle)
    return CENTRE[0], CENTRE[1] + r * math.cos(angle), CENTRE[2] + r * math.sin(angle)


def batch(points: list, start: float) -> robot_command_pb2.RobotCommand:
    """An arm Cartesian command through ``points`` ((t, (x, y, z))), timed from ``start``."""
    trajectory = trajectory_pb2.SE3Trajectory(points=[
        trajectory_pb2.SE3TrajectoryPoint(
            pose=geometry_pb2.SE3Pose(position=geometry_pb2.Vec3(x=x, y=y, z=z),
                                      rotation=geometry_pb2.Quaternion(w=1.0)),
            time_since_reference=seconds_to_duration(t - start))
        for t, (x, y, z) in points])
    cartesian = arm_command_pb2.ArmCartesianCommand.Request(
        root_frame_name="flat_body", pose_trajectory_in_task=trajectory)
    return robot_command_pb2.RobotCommand(synchronized_command=synchronized.SynchronizedCommand.
                                          Request(arm_command=arm_command_pb2.ArmCommand.Request(
                                              arm_cartesian_command=cartesian)))


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="the whole rose")
    parser.add_argument("--batch", type=int, default=50, help="points per command")
    args = parser.parse_args()
    spot = Spot("batch_trajectory", args.robot)
    try:
        spot.action_client(RobotCommand, "robot_command")
        spot.action_client(ArmPosture, "arm/posture")
        spot.connect()
        spot.ready()
        spot.act(ArmPosture, "arm/posture", ArmPosture.Goal(posture=ArmPosture.Goal.UNSTOW))
        samples = [(i / RATE, rose(i / RATE, args.seconds))
                   for i in range(int(args.seconds * RATE) + 1)]
        # each batch starts at the last point of the one before (the hand is there)
        for first in range(0, len(samples) - 1, args.batch):
            points = samples[first:first + args.batch + 1]
            print(f"batch of {len(points)} points from t={points[0][0]:.2f} s")
            # the first batch gets LEAD_IN s to bring the hand from the ready pose to the rose
            command = batch(points, points[0][0] - (LEAD_IN if first == 0 else 0.0))
            spot.act(RobotCommand, "robot_command",
                     RobotCommand.Goal(command=command.SerializeToString()))
        spot.act(ArmPosture, "arm/posture", ArmPosture.Goal(posture=ArmPosture.Goal.STOW))
    finally:
        spot.close()


if __name__ == "__main__":
    main()
