"""RobotState status sections and lease lists to spot_msgs (enum values equal the proto's)."""

import math

from bosdyn.api import lease_pb2, robot_state_pb2
from geometry_msgs.msg import Twist, Vector3, Vector3Stamped
from sensor_msgs.msg import BatteryState as RosBatteryState
from std_msgs.msg import Header

from spot_driver.conversions.time import duration_msg, robot_stamp_to_msg
from spot_msgs.msg import (
    BatteryState,
    BatteryStateArray,
    BehaviorFault,
    BehaviorFaultState,
    EStopState,
    EStopStateArray,
    FootState,
    FootStateArray,
    Lease,
    LeaseArray,
    LeaseOwner,
    LeaseResource,
    ManipulatorState,
    Metrics,
    PowerState,
    SystemFault,
    SystemFaultState,
    WiFiState,
)


def _value(wrapper, has: bool) -> float:
    return float(wrapper.value) if has else math.nan


def battery_states(state: robot_state_pb2.RobotState, header: Header,
                   skew_nsec: int) -> BatteryStateArray:
    out = BatteryStateArray(header=header)
    for battery in state.battery_states:
        msg = BatteryState()
        msg.header.frame_id = header.frame_id
        msg.header.stamp = (robot_stamp_to_msg(battery.timestamp, skew_nsec)
                            if battery.HasField("timestamp") else header.stamp)
        msg.identifier = battery.identifier
        msg.charge_percentage = _value(battery.charge_percentage,
                                       battery.HasField("charge_percentage"))
        msg.estimated_runtime = duration_msg(battery.estimated_runtime)
        msg.current = _value(battery.current, battery.HasField("current"))
        msg.voltage = _value(battery.voltage, battery.HasField("voltage"))
        msg.temperatures = list(battery.temperatures)
        msg.status = battery.status
        out.battery_states.append(msg)
    return out


_ROS_BATTERY_STATUS = {
    robot_state_pb2.BatteryState.STATUS_MISSING: RosBatteryState.POWER_SUPPLY_STATUS_UNKNOWN,
    robot_state_pb2.BatteryState.STATUS_CHARGING: RosBatteryState.POWER_SUPPLY_STATUS_CHARGING,
    robot_state_pb2.BatteryState.STATUS_DISCHARGING:
        RosBatteryState.POWER_SUPPLY_STATUS_DISCHARGING,
    robot_state_pb2.BatteryState.STATUS_BOOTING: RosBatteryState.POWER_SUPPLY_STATUS_UNKNOWN,
}


def ros_battery_states(state: robot_state_pb2.RobotState, header: Header,
                       skew_nsec: int) -> list[RosBatteryState]:
    """Each battery as sensor_msgs/BatteryState (what dashboards and rqt expect): percentage
    0..1, voltage V, current A (negative while discharging), mean temperature, location = the
    battery's identifier; unknown values NaN."""
    out = []
    for battery in state.battery_states:
        msg = RosBatteryState()
        msg.header.frame_id = header.frame_id
        msg.header.stamp = (robot_stamp_to_msg(battery.timestamp, skew_nsec)
                            if battery.HasField("timestamp") else header.stamp)
        msg.voltage = _value(battery.voltage, battery.HasField("voltage"))
        msg.current = _value(battery.current, battery.HasField("current"))
        msg.temperature = (float(sum(battery.temperatures) / len(battery.temperatures))
                           if battery.temperatures else math.nan)
        msg.charge = msg.capacity = msg.design_capacity = math.nan
        percent = _value(battery.charge_percentage, battery.HasField("charge_percentage"))
        msg.percentage = percent / 100.0
        msg.power_supply_status = _ROS_BATTERY_STATUS.get(
            battery.status, RosBatteryState.POWER_SUPPLY_STATUS_UNKNOWN)
        msg.power_supply_health = RosBatteryState.POWER_SUPPLY_HEALTH_UNKNOWN
        msg.power_supply_technology = RosBatteryState.POWER_SUPPLY_TECHNOLOGY_LION
        msg.present = battery.status != robot_state_pb2.BatteryState.STATUS_MISSING
        msg.location = battery.identifier
        out.append(msg)
    return out


def power_state(state: robot_state_pb2.RobotState, header: Header, skew_nsec: int) -> PowerState:
    power = state.power_state
    msg = PowerState(header=Header(stamp=header.stamp, frame_id=header.frame_id))
    if power.HasField("timestamp"):  # its own header: the caller's is shared
        msg.header.stamp = robot_stamp_to_msg(power.timestamp, skew_nsec)
    msg.motor_power_state = power.motor_power_state
    msg.motor_power_error_message = power.motor_power_error_message
    msg.shore_power_state = power.shore_power_state
    msg.robot_power_state = power.robot_power_state
    msg.payload_ports_power_state = power.payload_ports_power_state
    msg.wifi_radio_power_state = power.wifi_radio_power_state
    msg.locomotion_charge_percentage = _value(power.locomotion_charge_percentage,
                                              power.HasField("locomotion_charge_percentage"))
    msg.locomotion_estimated_runtime = duration_msg(power.locomotion_estimated_runtime)
    return msg


def estop_states(state: robot_state_pb2.RobotState, header: Header,
                 skew_nsec: int) -> EStopStateArray:
    out = EStopStateArray(header=header)
    for estop in state.estop_states:
        msg = EStopState(name=estop.name, type=estop.type, state=estop.state,
                         state_description=estop.state_description)
        msg.header.frame_id = header.frame_id
        msg.header.stamp = (robot_stamp_to_msg(estop.timestamp, skew_nsec)
                            if estop.HasField("timestamp") else header.stamp)
        out.estop_states.append(msg)
    return out


def wifi_state(state: robot_state_pb2.RobotState, header: Header) -> WiFiState:
    msg = WiFiState(header=header)
    for comms in state.comms_states:
        if comms.HasField("wifi_state"):
            msg.current_mode = comms.wifi_state.current_mode
            msg.essid = comms.wifi_state.essid
            break
    return msg


def _twist(velocity) -> Twist:
    out = Twist()
    out.linear.x, out.linear.y, out.linear.z = (velocity.linear.x, velocity.linear.y,
                                                velocity.linear.z)
    out.angular.x, out.angular.y, out.angular.z = (velocity.angular.x, velocity.angular.y,
                                                   velocity.angular.z)
    return out


def manipulator_state(state: robot_state_pb2.RobotState, header: Header) -> ManipulatorState:
    """The arm and gripper section; the force is in the hand frame."""
    m = state.manipulator_state
    force = m.estimated_end_effector_force_in_hand
    return ManipulatorState(
        header=header, gripper_open_percentage=m.gripper_open_percentage,
        is_gripper_holding_item=m.is_gripper_holding_item,
        estimated_end_effector_force_in_hand=Vector3(x=force.x, y=force.y, z=force.z),
        stow_state=m.stow_state, carry_state=m.carry_state,
        velocity_of_hand_in_odom=_twist(m.velocity_of_hand_in_odom),
        velocity_of_hand_in_vision=_twist(m.velocity_of_hand_in_vision))


def end_effector_force(state: robot_state_pb2.RobotState, header: Header) -> Vector3Stamped:
    """Estimated force on the end effector, in ``header.frame_id`` (the hand frame)."""
    force = state.manipulator_state.estimated_end_effector_force_in_hand
    return Vector3Stamped(header=header, vector=Vector3(x=force.x, y=force.y, z=force.z))


def foot_states(state: robot_state_pb2.RobotState, header: Header) -> FootStateArray:
    out = FootStateArray(header=header)
    for foot in state.foot_state:
        msg = FootState(contact=foot.contact)
        p = foot.foot_position_rt_body
        msg.foot_position_rt_body.x, msg.foot_position_rt_body.y, msg.foot_position_rt_body.z = (
            p.x, p.y, p.z)
        msg.ground_mu_estimate = (foot.terrain.ground_mu_est if foot.HasField("terrain")
                                  else math.nan)
        out.states.append(msg)
    return out


def _system_fault(fault: robot_state_pb2.SystemFault, skew_nsec: int) -> SystemFault:
    return SystemFault(
        name=fault.name, onset_timestamp=robot_stamp_to_msg(fault.onset_timestamp, skew_nsec),
        duration=duration_msg(fault.duration), code=fault.code, uid=fault.uid,
        error_message=fault.error_message, attributes=list(fault.attributes),
        severity=fault.severity)


def system_faults(state: robot_state_pb2.RobotState, header: Header,
                  skew_nsec: int) -> SystemFaultState:
    faults = state.system_fault_state
    return SystemFaultState(
        header=header, faults=[_system_fault(f, skew_nsec) for f in faults.faults],
        historical_faults=[_system_fault(f, skew_nsec) for f in faults.historical_faults])


def behavior_faults(state: robot_state_pb2.RobotState, header: Header,
                    skew_nsec: int) -> BehaviorFaultState:
    return BehaviorFaultState(header=header, faults=[
        BehaviorFault(behavior_fault_id=f.behavior_fault_id,
                      onset_timestamp=robot_stamp_to_msg(f.onset_timestamp, skew_nsec),
                      cause=f.cause, status=f.status)
        for f in state.behavior_fault_state.faults])


def lease_msg(lease: lease_pb2.Lease) -> Lease:
    return Lease(resource=lease.resource, epoch=lease.epoch, sequence=list(lease.sequence),
                 client_names=list(lease.client_names))


def lease_array(resources: list[lease_pb2.LeaseResource], header: Header) -> LeaseArray:
    return LeaseArray(header=header, resources=[
        LeaseResource(resource=r.resource, lease=lease_msg(r.lease),
                      lease_owner=LeaseOwner(client_name=r.lease_owner.client_name,
                                             user_name=r.lease_owner.user_name),
                      is_stale=r.is_stale)
        for r in resources])


def metrics(robot_metrics: robot_state_pb2.RobotMetrics, skew_nsec: int,
            frame_id: str) -> Metrics:
    """The robot's metrics (labels as the robot names them: distance, gait cycles, time
    moving, electric power); a metric the robot does not report stays zero."""
    msg = Metrics(header=Header(stamp=robot_stamp_to_msg(robot_metrics.timestamp, skew_nsec),
                                frame_id=frame_id))
    for metric in robot_metrics.metrics:
        which = metric.WhichOneof("values")
        if metric.label == "distance" and which == "float_value":
            msg.distance = float(metric.float_value)
        elif metric.label == "gait cycles" and which == "int_value":
            msg.gait_cycles = int(metric.int_value)
        elif metric.label == "time moving" and which == "duration":
            msg.time_moving = duration_msg(metric.duration)
        elif metric.label == "electric power" and which == "duration":
            msg.electric_power = duration_msg(metric.duration)
    return msg
