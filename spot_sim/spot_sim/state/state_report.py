"""Build the RobotState proto the robot-state service returns, from what the body reports at
one instant (``SimRobot.reading``, frozen values), the e-stop and the service faults."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from bosdyn.api import geometry_pb2, robot_state_pb2

from spot_sim.body import kinematics, mobility
from spot_sim.body.estop_manager import LEVEL_NONE
from spot_sim.body.frame_tree import robot_state_view
from spot_sim.body.reading import ArmReading, BodyReading

if TYPE_CHECKING:
    from spot_sim.body.robot import SimRobot

RS = robot_state_pb2
_NOMINAL_VOLTAGE = 58.8  # V, full charge
_EMPTY_VOLTAGE = 50.0


def _acquired(robot: SimRobot, now: int):
    """A stamp for one part of the state: now, or (field profile) a few ms before."""
    age = robot.field.uniform(robot.config.field.state_age)
    return robot.clock.timestamp(now - round(age * 1e9))


def robot_state(robot: SimRobot) -> RS.RobotState:
    """A consistent snapshot of everything the robot reports, stamped in robot time (under a
    field profile each part a little earlier than the response, with sensor noise)."""
    body = robot.reading()
    now = body.now_ns
    stamp = robot.clock.timestamp(now)
    state = RS.RobotState()
    _kinematic_state(robot, body, state.kinematic_state, _acquired(robot, now))
    _power_state(body, state.power_state, _acquired(robot, now))
    _battery(body, state.battery_states.add(), _acquired(robot, now))
    _estop_states(robot, state, stamp)
    if body.arm is not None:
        _manipulator_state(body, body.arm, state.manipulator_state)
    comms = state.comms_states.add()
    comms.timestamp.CopyFrom(stamp)
    comms.wifi_state.current_mode = RS.WiFiState.MODE_CLIENT
    comms.wifi_state.essid = "spot-sim-net"
    state.system_fault_state.faults.extend(body.system_faults)
    state.behavior_fault_state.faults.extend(body.behavior_faults)
    state.service_fault_state.faults.extend(robot.service_faults.active())
    state.service_fault_state.historical_faults.extend(robot.service_faults.historical)
    for foot in body.feet:
        entry = state.foot_state.add()
        entry.foot_position_rt_body.x, entry.foot_position_rt_body.y, \
            entry.foot_position_rt_body.z = (float(v) for v in foot)
        entry.contact = RS.FootState.CONTACT_MADE
        entry.terrain.ground_mu_est = 0.8
        entry.terrain.frame_name = "odom"
    return state


def _kinematic_state(robot: SimRobot, body: BodyReading, kin: RS.KinematicState,
                     stamp) -> None:
    kin.acquisition_timestamp.CopyFrom(stamp)
    field, draw = robot.config.field, robot.field
    names = kinematics.LEG_JOINTS + (kinematics.ARM_JOINTS if body.arm is not None else ())
    for name, position, velocity, load in zip(names, body.joint_positions, body.joint_velocities,
                                              body.joint_loads, strict=True):
        joint = kin.joint_states.add(name=name)
        joint.position.value = float(position) + draw.gauss(field.joint_noise)
        joint.velocity.value = float(velocity) + draw.gauss(field.joint_velocity_noise)
        joint.load.value = float(load)
    kin.transforms_snapshot.CopyFrom(robot_state_view(body.frames))
    noise = field.body_velocity_noise
    measured = mobility.Se2(body.velocity.x + draw.gauss(noise),
                            body.velocity.y + draw.gauss(noise),
                            body.velocity.yaw + draw.gauss(noise))
    body_velocity(measured, body.odom_body.yaw, kin.velocity_of_body_in_odom)
    body_velocity(measured, body.vision_body.yaw, kin.velocity_of_body_in_vision)


ITEM_WEIGHT_N = 0.5 * 9.81  # what a grasped item pulls on the hand


def _manipulator_state(body: BodyReading, arm: ArmReading, out: RS.ManipulatorState) -> None:
    out.gripper_open_percentage = arm.open_percentage
    out.is_gripper_holding_item = arm.holding
    out.stow_state = out.STOWSTATE_STOWED if arm.stowed else out.STOWSTATE_DEPLOYED
    if arm.holding:
        out.carry_state = arm.carry_state
    else:
        out.carry_state = out.CARRY_STATE_NOT_CARRIABLE
    force = arm.contact_force  # body frame
    if arm.holding:
        force = force + _yaw_rotation(body.odom_body.yaw).T @ np.array(
            [0.0, 0.0, -ITEM_WEIGHT_N])
    if force.any():
        f = out.estimated_end_effector_force_in_hand
        f.x, f.y, f.z = (float(v) for v in arm.hand()[:3, :3].T @ force)
    velocity_in_body = body.velocity
    for velocity, world_yaw in ((out.velocity_of_hand_in_odom, body.odom_body.yaw),
                                (out.velocity_of_hand_in_vision, body.vision_body.yaw)):
        world_r_body = _yaw_rotation(world_yaw)
        linear = world_r_body @ (arm.hand_velocity[:3] + np.array(
            [velocity_in_body.x, velocity_in_body.y, 0.0]))
        angular = world_r_body @ arm.hand_velocity[3:] + np.array(
            [0.0, 0.0, velocity_in_body.yaw])
        velocity.linear.x, velocity.linear.y, velocity.linear.z = (float(v) for v in linear)
        velocity.angular.x, velocity.angular.y, velocity.angular.z = (float(v) for v in angular)


def _yaw_rotation(yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def body_velocity(body_velocity: mobility.Se2, yaw: float, out: geometry_pb2.SE3Velocity) -> None:
    """The body's velocity expressed in a gravity-aligned world frame at heading ``yaw``."""
    world = mobility.compose(mobility.Se2(0, 0, yaw),
                             mobility.Se2(body_velocity.x, body_velocity.y, 0))
    out.linear.x, out.linear.y, out.linear.z = world.x, world.y, 0.0
    out.angular.x, out.angular.y, out.angular.z = 0.0, 0.0, body_velocity.yaw


def _power_state(body: BodyReading, power: RS.PowerState, stamp) -> None:
    power.timestamp.CopyFrom(stamp)
    power.motor_power_state = body.motor_power_state
    power.shore_power_state = (RS.PowerState.STATE_ON_SHORE_POWER if body.shore_power
                               else RS.PowerState.STATE_OFF_SHORE_POWER)
    power.robot_power_state = RS.PowerState.ROBOT_POWER_STATE_ON
    power.payload_ports_power_state = RS.PowerState.PAYLOAD_PORTS_POWER_STATE_ON
    power.wifi_radio_power_state = RS.PowerState.WIFI_RADIO_POWER_STATE_ON
    power.locomotion_charge_percentage.value = body.battery_percent
    power.locomotion_estimated_runtime.FromNanoseconds(int(body.battery_runtime_sec * 1e9))


def _battery(body: BodyReading, battery: RS.BatteryState, stamp) -> None:
    battery.timestamp.CopyFrom(stamp)
    battery.identifier = "sim-battery-0"
    percent, charging = body.battery_percent, body.shore_power
    battery.charge_percentage.value = percent
    battery.estimated_runtime.FromNanoseconds(int(body.battery_runtime_sec * 1e9))
    battery.voltage.value = _EMPTY_VOLTAGE + (_NOMINAL_VOLTAGE - _EMPTY_VOLTAGE) * (
        percent / 100.0)
    # Negative current: discharging.
    battery.current.value = (10.0 if charging else 0.0) + (-8.0 if body.powered else -1.5)
    battery.temperatures.extend([30.0 + 0.05 * (100 - percent)] * 4)
    battery.status = (RS.BatteryState.STATUS_CHARGING if charging
                      else RS.BatteryState.STATUS_DISCHARGING)


def _estop_states(robot: SimRobot, state: RS.RobotState, stamp) -> None:
    hardware = state.estop_states.add(name="hardware_estop", type=RS.EStopState.TYPE_HARDWARE,
                                      state=RS.EStopState.STATE_NOT_ESTOPPED)
    hardware.timestamp.CopyFrom(stamp)
    for endpoint, level, _ in robot.estop.endpoint_states():
        entry = state.estop_states.add(name=endpoint.name or endpoint.role,
                                       type=RS.EStopState.TYPE_SOFTWARE)
        entry.timestamp.CopyFrom(stamp)
        entry.state = (RS.EStopState.STATE_NOT_ESTOPPED if level == LEVEL_NONE
                       else RS.EStopState.STATE_ESTOPPED)
        entry.state_description = "" if level == LEVEL_NONE else "endpoint stopped or timed out"
    if robot.estop.require_endpoint and not robot.estop.endpoint_states():
        entry = state.estop_states.add(name="no_software_endpoint",
                                       type=RS.EStopState.TYPE_SOFTWARE,
                                       state=RS.EStopState.STATE_ESTOPPED,
                                       state_description="no e-stop endpoint is registered")
        entry.timestamp.CopyFrom(stamp)

