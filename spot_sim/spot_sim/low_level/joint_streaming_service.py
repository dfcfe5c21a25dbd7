"""robot-state-streaming and robot-command-streaming: the joint-control API's two streams.

GetRobotStateStream sends a RobotStateStreamResponse every 3 ms (333 Hz) on absolute
deadlines; a late sample is sent late, never followed by a burst to catch up.
JointControlStream reads JointControlStreamRequests, each checked before the robot uses it
(``JointMode.receive``); the first refused one ends the stream with its status. Setpoints
received before a RobotCommand ``joint_request`` entered joint mode wait for it; a stream that
never drove the joints ends INACTIVE.
"""

import time

from bosdyn.api import (
    geometry_pb2,
    robot_command_pb2,
    robot_command_service_pb2_grpc,
    robot_state_pb2,
    robot_state_service_pb2_grpc,
)

from spot_sim.body import joint_control, joint_rules
from spot_sim.body.joint_control import StreamRefusedError
from spot_sim.body.robot import SimRobot
from spot_sim.core.rpc import stamped
from spot_sim.core.served import Served, ServiceSpec
from spot_sim.state.state_report import body_velocity

PERIOD_S = 0.003
Contact = robot_state_pb2.FootState
StreamStatus = robot_command_pb2.JointControlStreamResponse


def _set_pose(out: geometry_pb2.SE3Pose, pose) -> None:
    out.position.x, out.position.y, out.position.z = pose.x, pose.y, pose.z
    q = pose.rotation
    out.rotation.w, out.rotation.x, out.rotation.y, out.rotation.z = q.w, q.x, q.y, q.z


def sample(robot: SimRobot, imu_after_ns: int | None = None
           ) -> robot_state_pb2.RobotStateStreamResponse:
    """One message of the state stream, from the robot as it is now, with the IMU packets
    sampled after ``imu_after_ns`` (this stream's last packet)."""
    out = robot_state_pb2.RobotStateStreamResponse()
    clock = robot.clock
    seen = joint_rules.sample(robot, imu_after_ns)
    stamp = clock.timestamp(seen.now_ns)
    q, qd, load = seen.q, seen.qd, seen.load
    odom_tform_body, vision_tform_body = seen.odom_tform_body, seen.vision_tform_body
    velocity, accel = seen.velocity, seen.acceleration
    yaw = seen.odom_yaw, seen.vision_yaw
    packets, key, key_ns = seen.imu_packets, seen.last_key, seen.last_key_ns
    joints = out.joint_states
    joints.acquisition_timestamp.CopyFrom(stamp)
    joints.position.extend(q.tolist())
    joints.velocity.extend(qd.tolist())
    joints.load.extend(load.tolist())
    kin = out.kinematic_state
    kin.acquisition_timestamp.CopyFrom(stamp)
    _set_pose(kin.odom_tform_body, odom_tform_body)
    _set_pose(kin.vision_tform_body, vision_tform_body)
    body_velocity(velocity, yaw[0], kin.velocity_of_body_in_odom)
    body_velocity(velocity, yaw[1], kin.velocity_of_body_in_vision)
    imu = out.inertial_state
    imu.packet_rate = joint_control.IMU_RATE_HZ
    imu.identifier, imu.mounting_link_name = "imu", joint_control.IMU_LINK
    p = imu.position_imu_rt_link
    p.x, p.y, p.z = joint_control.IMU_POSITION
    rotation = odom_tform_body.rotation
    # Centripetal acceleration of the turning body, plus its speed changes (body frame).
    ax = accel[0] - velocity.yaw * velocity.y
    ay = accel[1] + velocity.yaw * velocity.x
    for t in packets:
        packet = imu.packets.add()
        packet.timestamp.CopyFrom(clock.timestamp(t))
        packet.acceleration_rt_odom_in_link_frame.x = ax
        packet.acceleration_rt_odom_in_link_frame.y = ay
        packet.angular_velocity_rt_odom_in_link_frame.z = velocity.yaw
        r = packet.odom_rot_link
        r.w, r.x, r.y, r.z = rotation.w, rotation.x, rotation.y, rotation.z
    out.contact_states.extend([Contact.CONTACT_MADE] * 4)
    out.last_command.user_command_key = key
    if key:
        out.last_command.received_timestamp.CopyFrom(clock.timestamp(key_ns))
    return stamped(clock, out)


class RobotStateStreamingServicer(
        robot_state_service_pb2_grpc.RobotStateStreamingServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot = robot

    def GetRobotStateStream(self, request, context):
        deadline = time.monotonic()
        imu_after = None
        while context.is_active():
            message = sample(self.robot, imu_after)
            if message.inertial_state.packets:
                imu_after = message.inertial_state.packets[-1].timestamp.ToNanoseconds()
            message.header.request_header.CopyFrom(request.header)
            yield message
            deadline += PERIOD_S
            delay = deadline - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -PERIOD_S:  # fell behind: carry on from now, no burst
                deadline = time.monotonic()


class RobotCommandStreamingServicer(
        robot_command_service_pb2_grpc.RobotCommandStreamingServiceServicer):
    def __init__(self, robot: SimRobot) -> None:
        self.robot = robot

    def JointControlStream(self, request_iterator, context):
        robot, clock = self.robot, self.robot.clock
        response = StreamStatus()
        status, message = StreamStatus.STATUS_INACTIVE, "joint mode was never entered"
        gains_known = False
        header = None
        for request in request_iterator:
            header = request.header
            update = request.joint_command
            now = clock.now_nsec()
            try:
                engaged = joint_rules.receive(robot, update, gains_known, now)
            except StreamRefusedError as refused:
                status, message = StreamStatus.Status.Value(refused.status), str(refused)
                break
            gains_known = True
            if engaged:
                status, message = StreamStatus.STATUS_OK, ""
        response.status, response.message = status, message
        return stamped(clock, response, header)


def specs() -> list[ServiceSpec]:
    return [
        ServiceSpec("robot-state-streaming", "bosdyn.api.RobotStateStreamingService",
                    "api.spot.robot",
                    robot_state_service_pb2_grpc.add_RobotStateStreamingServiceServicer_to_server),
        ServiceSpec("robot-command-streaming", "bosdyn.api.RobotCommandStreamingService",
                    "api.spot.robot",
                    robot_command_service_pb2_grpc
                    .add_RobotCommandStreamingServiceServicer_to_server),
    ]


SERVICES = (
    Served(specs()[0], lambda parts: RobotStateStreamingServicer(parts.robot)),
    Served(specs()[1], lambda parts: RobotCommandStreamingServicer(parts.robot)),
)
