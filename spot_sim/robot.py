"""The simulated robot's state and its fixed-rate kinematic physics loop.

Everything the services report or change lives here, behind one lock. The loop integrates
commanded body velocity (with acceleration limits) into odom, lets vision drift from odom,
moves the legs between sit and stand poses, drains the battery and enforces e-stop and
command end times.
"""

import itertools
import logging
import math
import threading
import time
from dataclasses import dataclass, field

import numpy as np
from bosdyn.api import basic_command_pb2, geometry_pb2, power_pb2, robot_state_pb2
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim import arm_kinematics, joint_control, kinematics, manipulation, mobility, world
from spot_sim.arm import Arm
from spot_sim.clock import RobotClock
from spot_sim.config import SimConfig
from spot_sim.docking import Docking
from spot_sim.estop_manager import LEVEL_CUT, LEVEL_NONE, EstopManager
from spot_sim.field import Draw
from spot_sim.frame_tree import body_pose, build_snapshot
from spot_sim.joint_control import JointMode, Setpoint
from spot_sim.lease_manager import LeaseManager
from spot_sim.license import License
from spot_sim.mobility import Se2
from spot_sim.service_faults import ServiceFaults

_LOG = logging.getLogger(__name__)
MotorPower = robot_state_pb2.PowerState
Feedback = basic_command_pb2.RobotCommandFeedbackStatus

# Mobility command kinds and whether they count as full-body commands in feedback.
FULL_BODY_KINDS = {"stop_fb", "freeze", "selfright", "safe_power_off", "battery_change_pose",
                   "joint"}
RETURN_TO_STAND_S = 1.0  # the stand controller takes the legs back from joint mode


@dataclass
class Command:
    """One accepted robot command and what the robot knows of its progress."""

    id: int
    kind: str
    received_ns: int
    end_ns: int | None = None
    goal: Se2 | None = None
    velocity: Se2 | None = None
    status: int = Feedback.STATUS_PROCESSING
    done: bool = False
    done_ns: int | None = None
    details: dict = field(default_factory=dict)


class CommandRejectedError(Exception):
    """A command the robot refuses, with the response status and a message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class PowerCommand:
    id: int
    turn_on: bool
    status: int = power_pb2.STATUS_IN_PROGRESS


@dataclass
class Posture:
    """The legs' current state and any sit/stand transition under way."""

    joints: np.ndarray
    start: np.ndarray
    target: np.ndarray
    t0_ns: int = 0
    t1_ns: int = 0
    standing: bool = False  # the posture the transition is heading to (or has reached)

    def moving(self, now_ns: int) -> bool:
        return now_ns < self.t1_ns


class SimRobot:
    """State of one simulated Spot. Thread-safe; ``start()`` runs the physics loop."""

    def __init__(self, config: SimConfig, clock: RobotClock) -> None:
        self.config = config
        self.clock = clock
        self.lock = threading.RLock()
        self.license = License(config.serial_number, config.withheld_features)
        self.service_faults = ServiceFaults(clock)
        self.leases = LeaseManager(config.has_arm, config.lease_stale_sec)
        self.field = Draw(config.field, "robot")  # the field profile's noise and ages
        self.estop = EstopManager(config.estop_required)
        self._ids = itertools.count(1)
        self._stop_event = threading.Event()
        # Capabilities stepped with the physics loop, in order: fn(robot, now_ns).
        self.step_hooks: list = []
        self._thread: threading.Thread | None = None
        self._reset_state()
        self.docking = Docking(world.DEFAULT_DOCKS, config.start_docked_id)
        if config.start_docked_id:
            self.odom_body = self.docking.docks[config.start_docked_id].pose
        # Stable world object ids: a dock and its fiducial keep theirs for the robot's lifetime.
        self._object_ids = {dock_id: 1 + 2 * index
                            for index, dock_id in enumerate(sorted(self.docking.docks))}

    def _reset_state(self) -> None:
        sit = kinematics.leg_joint_positions(kinematics.SIT_HEIGHT)
        self.motor_power = MotorPower.STATE_OFF
        self.motor_power_change_ns = 0
        self.power_commands: dict[int, PowerCommand] = {}
        self.commands: dict[int, Command] = {}
        self.mobility_command: Command | None = None
        self.posture = Posture(sit.copy(), sit.copy(), sit.copy())
        self.joint_velocity = np.zeros_like(sit)
        self.leg_swing = np.zeros_like(sit)  # a dance's stepping, added to the leg joints
        self.odom_body = Se2()
        self.vision_odom = Se2()
        self.body_velocity = Se2()  # in the body frame
        self.target_velocity = Se2()
        self.height_offset = 0.0
        self.body_rotation = Quat()  # orientation offset from mobility params
        self.body_offset = SE3Pose(0, 0, 0, Quat())  # a dance's offset from the standing pose
        self.mobility_params: spot_command_pb2.MobilityParams | None = None  # last received
        self.velocity_limit = Se2(self.config.max_vel_x, self.config.max_vel_y,
                                  self.config.max_vel_yaw)
        self.battery_percent = self.config.battery_start_percent
        self.behavior_faults: dict[int, robot_state_pb2.BehaviorFault] = {}
        self.system_faults: list[robot_state_pb2.SystemFault] = []
        self.arm = Arm() if self.config.has_arm else None
        self.joint_mode = JointMode(self.config.has_arm)
        self.body_acceleration = (0.0, 0.0)  # m/s^2 in the body frame, from the last step
        self.manipulations: dict[int, manipulation.Manipulation] = {}
        self.distance_travelled = 0.0
        self.time_moving_s = 0.0  # metrics: walking time and motor-on time
        self.motors_on_s = 0.0
        self.last_step_ns = self.clock.now_nsec()

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> None:
        self._stop_event.clear()
        self._thread = threading.Thread(target=self._run, name="spot-sim-physics", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    def reboot(self) -> None:
        """Forget leases, e-stop endpoints and motion; come back sitting with motors off."""
        with self.lock:
            self.leases.forget_all()
            self.estop.forget_all()
            odom, vision = self.odom_body, self.vision_odom
            self._reset_state()
            self.docking.cancel("robot rebooted")
            self.odom_body, self.vision_odom = odom, vision

    def _run(self) -> None:
        period = 1.0 / self.config.physics_rate_hz
        next_time = time.monotonic()
        while not self._stop_event.is_set():
            try:
                self.step()
            except Exception:  # the loop must survive a bad state; log it loudly
                _LOG.exception("physics step failed")
            next_time += period
            delay = next_time - time.monotonic()
            if delay < 0:
                next_time = time.monotonic()
                delay = 0
            self._stop_event.wait(delay)

    # ----------------------------------------------------------------- queries
    @property
    def powered(self) -> bool:
        return self.motor_power == MotorPower.STATE_ON

    @property
    def standing(self) -> bool:
        now = self.clock.now_nsec()
        return self.posture.standing and not self.posture.moving(now)

    @property
    def body_height(self) -> float:
        return kinematics.body_height_from_joints(self.posture.joints)

    def vision_body(self) -> Se2:
        return mobility.compose(self.vision_odom, self.odom_body)

    def transforms_snapshot(self) -> geometry_pb2.FrameTreeSnapshot:
        """The robot's current frame tree (rooted at body), as robot state reports it."""
        with self.lock:
            height = self.body_height
            odom_tform_body = body_pose(self.odom_body, height, self.body_rotation) \
                * self.body_offset
            vision_tform_body = body_pose(self.vision_body(), height, self.body_rotation) \
                * self.body_offset
            arm_frames = None
            if self.arm is not None:
                arm_frames = arm_kinematics.link_poses(self.arm.q)
            return build_snapshot(odom_tform_body, vision_tform_body, self.config.has_arm,
                                  arm_frames=arm_frames, has_lidar=self.config.has_lidar,
                                  feet=kinematics.foot_positions_in_body(self.posture.joints))

    def world_objects(self) -> list:
        """The docks and fiducials in view now, as ListWorldObjects reports them."""
        with self.lock:
            height = self.body_height
            odom_tform_body = body_pose(self.odom_body, height, self.body_rotation)
            vision_tform_body = body_pose(self.vision_body(), height, self.body_rotation)
            return world.world_objects(tuple(self.docking.docks.values()), odom_tform_body,
                                       vision_tform_body, self.odom_body,
                                       self.clock.timestamp(), self._object_ids)

    def active_fault(self) -> bool:
        return bool(self.behavior_faults)

    # ----------------------------------------------------------------- power
    def request_power(self, turn_on: bool) -> tuple[int, int]:
        """A PowerCommand: (status, command id)."""
        with self.lock:
            if turn_on and self.estop.system_level() != LEVEL_NONE:
                return power_pb2.STATUS_ESTOPPED, 0
            if turn_on and any(f.status == f.STATUS_UNCLEARABLE
                               for f in self.behavior_faults.values()):
                return power_pb2.STATUS_FAULTED, 0
            command = PowerCommand(next(self._ids), turn_on)
            self.power_commands[command.id] = command
            now = self.clock.now_nsec()
            if turn_on:
                if self.motor_power in (MotorPower.STATE_OFF, MotorPower.STATE_POWERING_OFF):
                    self.motor_power = MotorPower.STATE_POWERING_ON
                    self.motor_power_change_ns = now + int(self.config.power_on_sec * 1e9)
            else:
                if self.motor_power in (MotorPower.STATE_ON, MotorPower.STATE_POWERING_ON):
                    self._cut_motors(now)
            self._update_power_commands()
            return command.status, command.id

    def power_feedback(self, command_id: int) -> int:
        with self.lock:
            command = self.power_commands.get(command_id)
            return power_pb2.STATUS_UNKNOWN if command is None else command.status

    def _cut_motors(self, now_ns: int) -> None:
        """Motors off: the legs fold to the sitting pose and every motion command ends."""
        self.motor_power = MotorPower.STATE_POWERING_OFF
        self.motor_power_change_ns = now_ns + int(self.config.power_off_sec * 1e9)
        self._start_posture(False, now_ns, self.config.power_off_sec)
        self.target_velocity = Se2()
        if self.mobility_command is not None and not self.mobility_command.done:
            self._finish(self.mobility_command, Feedback.STATUS_COMMAND_OVERRIDDEN, now_ns)
        self.mobility_command = None
        self.joint_mode.disarm()
        self._halt_arm()

    def _halt_arm(self) -> None:
        if self.arm is not None:
            self.arm.halt()
        for task in self.manipulations.values():
            task.abort()

    def _update_power_commands(self) -> None:
        for command in self.power_commands.values():
            if command.status != power_pb2.STATUS_IN_PROGRESS:
                continue
            if command.turn_on and self.motor_power == MotorPower.STATE_ON:
                command.status = power_pb2.STATUS_SUCCESS
            elif not command.turn_on and self.motor_power == MotorPower.STATE_OFF:
                command.status = power_pb2.STATUS_SUCCESS
            elif command.turn_on and self.motor_power == MotorPower.STATE_OFF:
                command.status = power_pb2.STATUS_ESTOPPED

    # ----------------------------------------------------------------- commands
    def new_command(self, kind: str, **kwargs) -> Command:
        """Register an accepted command; a new mobility command overrides the previous one."""
        now = self.clock.now_nsec()
        command = Command(next(self._ids), kind, now, **kwargs)
        self.commands[command.id] = command
        previous = self.mobility_command
        if previous is not None and not previous.done:
            self._finish(previous, Feedback.STATUS_COMMAND_OVERRIDDEN, now)
        self.mobility_command = command
        self._begin(command, now)
        return command

    def record_command(self, kind: str) -> Command:
        """Register an accepted command without a mobility part (arm and gripper only)."""
        command = Command(next(self._ids), kind, self.clock.now_nsec(), done=True)
        self.commands[command.id] = command
        return command

    def next_id(self) -> int:
        return next(self._ids)

    def _finish(self, command: Command, status: int | None, now_ns: int) -> None:
        if status is not None:
            command.status = status
        command.done = True
        command.done_ns = now_ns

    def start_posture(self, stand: bool, now_ns: int, duration: float) -> None:
        """Begin moving the legs to the standing or sitting pose over ``duration`` seconds."""
        self._start_posture(stand, now_ns, duration)

    def finish_command(self, command: Command) -> None:
        """End ``command`` (completed by whatever ran it, a dance for example)."""
        if command is not None and not command.done:
            self._finish(command, None, self.clock.now_nsec())

    def _start_posture(self, stand: bool, now_ns: int, duration: float | None = None) -> None:
        height = kinematics.STAND_HEIGHT + self.height_offset if stand else kinematics.SIT_HEIGHT
        target = kinematics.leg_joint_positions(height)
        posture = self.posture
        if posture.standing == stand and np.allclose(posture.target, target):
            return
        duration = self.config.posture_change_sec if duration is None else duration
        posture.start = posture.joints.copy()
        posture.target = target
        posture.t0_ns = now_ns
        posture.t1_ns = now_ns + int(duration * 1e9)
        posture.standing = stand

    def _begin(self, command: Command, now_ns: int) -> None:
        kind = command.kind
        self._leave_joint_mode(now_ns)
        if kind == "joint":
            self.target_velocity = Se2()
            self.joint_mode.arm(command.id, now_ns)
        if kind in ("stand", "velocity", "trajectory", "stance"):
            self._start_posture(True, now_ns)
        elif kind in ("sit", "safe_power_off", "battery_change_pose"):
            self.target_velocity = Se2()
            if self.body_velocity == Se2():
                self._start_posture(False, now_ns)
        elif kind == "selfright":
            self.target_velocity = Se2()
            self._start_posture(False, now_ns, self.config.self_right_sec)
        if kind in ("stop", "stop_fb", "freeze", "sit", "stand", "selfright", "stance",
                    "choreography"):
            self.target_velocity = Se2()
        if kind == "velocity":
            self.target_velocity = mobility.clamp_velocity(command.velocity, self.velocity_limit)

    def set_mobility_params(self, params: spot_command_pb2.MobilityParams) -> None:
        """Apply body height/orientation offsets and the velocity limit of a command."""
        self.mobility_params = params
        limit = Se2(self.config.max_vel_x, self.config.max_vel_y, self.config.max_vel_yaw)
        if params.HasField("vel_limit"):
            max_vel = params.vel_limit.max_vel
            limit = Se2(min(abs(max_vel.linear.x), limit.x) or limit.x,
                        min(abs(max_vel.linear.y), limit.y) or limit.y,
                        min(abs(max_vel.angular), limit.yaw) or limit.yaw)
        self.velocity_limit = limit
        height, rotation = 0.0, Quat()
        offsets = params.body_control.base_offset_rt_footprint.points
        if offsets:
            pose = offsets[-1].pose
            height = pose.position.z
            q = pose.rotation
            if q.w or q.x or q.y or q.z:
                rotation = Quat(q.w, q.x, q.y, q.z)
                rotation.normalize()
        self.height_offset = min(max(height, kinematics.MIN_HEIGHT_OFFSET),
                                 kinematics.MAX_HEIGHT_OFFSET)
        self.body_rotation = rotation
        if self.posture.standing:
            self._start_posture(True, self.clock.now_nsec(), 0.5)

    # ----------------------------------------------------------------- faults
    def trigger_fall(self) -> int:
        """A fall: motors stay on, the robot lies down and a clearable behaviour fault appears."""
        with self.lock:
            now = self.clock.now_nsec()
            fault_id = next(self._ids)
            self.behavior_faults[fault_id] = robot_state_pb2.BehaviorFault(
                behavior_fault_id=fault_id, onset_timestamp=self.clock.timestamp(now),
                cause=robot_state_pb2.BehaviorFault.CAUSE_FALL,
                status=robot_state_pb2.BehaviorFault.STATUS_CLEARABLE)
            self.target_velocity = Se2()
            self.body_velocity = Se2()
            self._start_posture(False, now, 0.3)
            if self.mobility_command is not None and not self.mobility_command.done:
                self._finish(self.mobility_command, Feedback.STATUS_COMMAND_OVERRIDDEN, now)
            self._halt_arm()
            return fault_id

    def clear_behavior_fault(self, fault_id: int) -> bool:
        with self.lock:
            fault = self.behavior_faults.get(fault_id)
            if fault is None or fault.status != fault.STATUS_CLEARABLE:
                return False
            del self.behavior_faults[fault_id]
            return True

    # ----------------------------------------------------------------- physics
    def step(self) -> None:
        with self.lock:
            now = self.clock.now_nsec()
            dt = min(max((now - self.last_step_ns) / 1e9, 0.0), 0.1)
            self.last_step_ns = now
            self._step_power(now)
            self._step_command(now)
            self.docking.step(self, now)
            for hook in self.step_hooks:
                hook(self, now)
            self._step_motion(dt)
            self.step_joint_mode(now)
            if not self.joint_mode.engaged:
                self._step_posture(now, dt)
            if self.arm is not None:
                for task in list(self.manipulations.values()):
                    task.step(self, now)
                if not self.joint_mode.drives_arm:
                    self.arm.step(now, dt)
            self._step_battery(dt)
            self._update_power_commands()

    def _step_power(self, now: int) -> None:
        level = self.estop.system_level()
        if level != LEVEL_NONE and self.motor_power in (MotorPower.STATE_ON,
                                                        MotorPower.STATE_POWERING_ON):
            if level == LEVEL_CUT or not self.posture.standing:
                self._cut_motors(now)
            else:  # settle then cut: sit first
                self.target_velocity = Se2()
                self._start_posture(False, now)
        if self.motor_power == MotorPower.STATE_POWERING_ON and now >= self.motor_power_change_ns:
            self.motor_power = MotorPower.STATE_ON
        elif (self.motor_power == MotorPower.STATE_POWERING_OFF
              and now >= self.motor_power_change_ns):
            self.motor_power = MotorPower.STATE_OFF
        if self.battery_percent <= 0.0 and self.motor_power == MotorPower.STATE_ON:
            self._cut_motors(now)

    def _step_command(self, now: int) -> None:
        command = self.mobility_command
        if command is None or command.done:
            return
        if command.end_ns is not None and now > command.end_ns and command.kind in (
                "velocity", "trajectory"):
            self.target_velocity = Se2()
            status = (Feedback.STATUS_COMMAND_TIMED_OUT if command.kind == "trajectory"
                      and not mobility.goal_reached(self.odom_body, command.goal) else None)
            self._finish(command, status, now)
            return
        if command.kind == "trajectory":
            if mobility.goal_reached(self.odom_body, command.goal):
                self.target_velocity = Se2()
            elif self.posture.standing and not self.posture.moving(now):
                self.target_velocity = mobility.goal_velocity(
                    self.odom_body, command.goal, self.body_velocity, self.velocity_limit,
                    self.config.max_linear_accel, self.config.max_angular_accel)
        elif command.kind in ("sit", "safe_power_off", "battery_change_pose"):
            self._step_lowering(command, now)
        elif command.kind == "selfright" and not self.posture.moving(now):
            command.done = True

    def _step_lowering(self, command: Command, now: int) -> None:
        """Sit, safe power off and battery change pose: once still, lower the body; safe
        power off then cuts power, battery change pose is done once down."""
        if self.body_velocity == Se2() and self.posture.standing:
            self._start_posture(False, now)
        down = not self.posture.moving(now)
        if (command.kind == "safe_power_off" and not self.posture.standing and down
                and self.motor_power == MotorPower.STATE_ON):
            self._finish(command, None, now)  # completed: cutting power is its last step
            self._cut_motors(now)
        if command.kind == "battery_change_pose" and down:
            command.done = True

    def _step_motion(self, dt: float) -> None:
        standing_still = not self.posture.standing or self.posture.moving(self.clock.now_nsec())
        target = Se2() if standing_still else self.target_velocity
        config = self.config
        before = self.body_velocity
        self.body_velocity = mobility.track_velocity(
            self.body_velocity, target, dt, config.max_linear_accel, config.max_angular_accel,
            config.linear_decel, config.angular_decel)
        if dt > 0:
            self.body_acceleration = ((self.body_velocity.x - before.x) / dt,
                                      (self.body_velocity.y - before.y) / dt)
        if self.motor_power == MotorPower.STATE_ON:
            self.motors_on_s += dt
        if self.body_velocity == Se2():
            return
        self.time_moving_s += dt
        before = self.odom_body
        self.odom_body = mobility.integrate(self.odom_body, self.body_velocity, dt)
        step = math.hypot(self.odom_body.x - before.x, self.odom_body.y - before.y)
        self.distance_travelled += step
        # Odometry slips a little relative to vision as the robot walks.
        drift = Se2(self.config.vision_drift_per_m * step, 0.5 * self.config.vision_drift_per_m
                    * step, self.config.vision_yaw_drift_per_m * step)
        self.vision_odom = mobility.compose(self.vision_odom, drift)

    def _step_posture(self, now: int, dt: float) -> None:
        posture = self.posture
        previous = posture.joints.copy()
        if posture.t1_ns > posture.t0_ns:
            fraction = min(1.0, max(0.0, (now - posture.t0_ns) / (posture.t1_ns - posture.t0_ns)))
        else:
            fraction = 1.0
        posture.joints = posture.start + (posture.target - posture.start) * fraction
        self.joint_velocity = (posture.joints - previous) / dt if dt > 0 else previous * 0

    # ----------------------------------------------------------------- joint mode
    def joint_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Every joint's position and velocity (legs, then the arm's 7 with an arm)."""
        q, qd = self.posture.joints + self.leg_swing, self.joint_velocity
        if self.arm is not None:
            q = np.concatenate([q, self.arm.joints])
            qd = np.concatenate([qd, self.arm.velocities])
        return q, qd

    def offer_joint_setpoint(self, setpoint: Setpoint) -> None:
        """A setpoint from the command stream (checked by ``JointMode.receive``)."""
        with self.lock:
            self.joint_mode.offer(setpoint)
            self.step_joint_mode(self.clock.now_nsec())

    def step_joint_mode(self, now: int) -> None:
        """Run the servo law up to ``now`` (the physics loop, and every state-stream sample)."""
        mode = self.joint_mode
        if not mode.armed:
            return
        if not mode.engaged:
            q, qd = self.joint_positions()
            if not mode.engage(q, qd, now):
                return
            self.leg_swing = np.zeros_like(self.leg_swing)
            if mode.drives_arm:
                self._halt_arm()
        servo = mode.servo
        setpoint = servo.setpoint
        expired = now > setpoint.end_ns
        supported = self.body_height > kinematics.SIT_HEIGHT + 0.02
        fastest = servo.advance(min(now, setpoint.end_ns), supported)
        self.posture.joints = servo.q[:12].copy()
        self.joint_velocity = servo.qd[:12].copy()
        if mode.drives_arm:
            self.arm.q, self.arm.qd = servo.q[12:18].copy(), servo.qd[12:18].copy()
            self.arm.gripper, self.arm.gripper_velocity = float(servo.q[18]), float(servo.qd[18])
        command = self.commands.get(mode.command_id)
        if setpoint.velocity_limit is not None and fastest > setpoint.velocity_limit:
            self._joint_fault(now)
        elif expired:  # commands stopped: the stand controller takes the robot back
            if command is not None and not command.done:
                self._finish(command, Feedback.STATUS_COMMAND_TIMED_OUT, now)
            self._leave_joint_mode(now)

    def joint_loads(self) -> np.ndarray:
        """Every joint's load (N m): the servo's in joint mode; otherwise what holds the
        robot's weight while the motors are on and the legs carry it."""
        mode = self.joint_mode
        count = mode.servo.count
        if mode.engaged:
            return mode.servo.load.copy()
        loads = np.zeros(count)
        if self.powered and self.body_height > kinematics.SIT_HEIGHT + 0.02:
            loads[:12] = joint_control.weight_loads(self.posture.joints, mode.servo.mass)
        return loads

    def _leave_joint_mode(self, now: int) -> None:
        """Joint mode ends: the legs go back to standing from where they are."""
        mode = self.joint_mode
        if not mode.armed:
            return
        was_engaged = mode.engaged
        mode.disarm()
        if was_engaged:
            posture = self.posture
            posture.start = posture.joints.copy()
            posture.target = kinematics.leg_joint_positions(
                kinematics.STAND_HEIGHT + self.height_offset)
            posture.t0_ns, posture.t1_ns = now, now + int(RETURN_TO_STAND_S * 1e9)
            posture.standing = True

    def _joint_fault(self, now: int) -> None:
        """A joint passed the stream's velocity_safety_limit: a behaviour fault, and the
        robot lies down with its motors on until the fault is cleared or power is cut."""
        fault_id = next(self._ids)
        self.behavior_faults[fault_id] = robot_state_pb2.BehaviorFault(
            behavior_fault_id=fault_id, onset_timestamp=self.clock.timestamp(now),
            cause=robot_state_pb2.BehaviorFault.CAUSE_COMMAND_FAILURE,
            status=robot_state_pb2.BehaviorFault.STATUS_CLEARABLE)
        command = self.commands.get(self.joint_mode.command_id)
        if command is not None and not command.done:
            self._finish(command, Feedback.STATUS_COMMAND_OVERRIDDEN, now)
        self.joint_mode.disarm()
        self._start_posture(False, now, 0.3)

    def _step_battery(self, dt: float) -> None:
        runtime = (self.config.battery_runtime_motors_on_sec if self.powered
                   else self.config.battery_runtime_idle_sec)
        charge = 100.0 * dt / self.config.battery_charge_sec if self.docking.charging else 0.0
        self.battery_percent = min(100.0, max(0.0, self.battery_percent - 100.0 * dt / runtime
                                              + charge))

    def battery_runtime_sec(self) -> float:
        runtime = (self.config.battery_runtime_motors_on_sec if self.powered
                   else self.config.battery_runtime_idle_sec)
        return runtime * self.battery_percent / 100.0

