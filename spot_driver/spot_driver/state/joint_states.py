"""KinematicState joints to sensor_msgs/JointState with URDF-style names."""

from bosdyn.api import robot_state_pb2
from sensor_msgs.msg import JointState

from spot_driver.conversions.time import robot_stamp_to_msg

_LEGS = {"fl": "front_left", "fr": "front_right", "hl": "rear_left", "hr": "rear_right"}
_LEG_JOINTS = {"hx": "hip_x", "hy": "hip_y", "kn": "knee"}


def urdf_joint_name(robot_name: str) -> str:
    """'fl.hx' -> 'front_left_hip_x', 'arm0.sh0' -> 'arm_sh0'; unknown names pass through."""
    prefix, _, joint = robot_name.partition(".")
    if prefix in _LEGS and joint in _LEG_JOINTS:
        return f"{_LEGS[prefix]}_{_LEG_JOINTS[joint]}"
    if prefix == "arm0" and joint:
        return f"arm_{joint}"
    return robot_name.replace(".", "_")


def joint_state_msg(kinematic_state: robot_state_pb2.KinematicState, skew_nsec: int,
                    name_prefix: str = "") -> JointState:
    """JointState (rad, rad/s, N*m) of every joint the robot reports."""
    joints = kinematic_state.joint_states
    msg = JointState()
    msg.header.stamp = robot_stamp_to_msg(kinematic_state.acquisition_timestamp, skew_nsec)
    msg.name = [name_prefix + urdf_joint_name(j.name) for j in joints]
    msg.position = [j.position.value for j in joints]
    msg.velocity = [j.velocity.value for j in joints]
    msg.effort = [j.load.value for j in joints]
    return msg
