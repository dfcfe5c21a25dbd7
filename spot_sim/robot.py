"""The simulated robot: its body parts, the rules that join them, and the physics loop.

The state lives in parts (``spot_sim.body``): power, legs, base, the command book, the
battery and faults, plus the arm, manipulation tasks and docking. ``SimRobot`` owns them all
behind one lock, and is where each physical rule is written once: cutting power folds the
legs and ends every motion; the e-stop cuts power; a fall or a joint fault lies the robot
down. The loop, at a fixed rate, completes power transitions, runs the commands and the
robot's controllers, moves the base and legs, and drains the battery.
"""

import logging
import threading
import time

import numpy as np
from bosdyn.api import geometry_pb2, power_pb2, robot_state_pb2
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2

from spot_sim import arm_kinematics, kinematics, manipulation, mobility, world
from spot_sim.arm import Arm
from spot_sim.body.base import Base
from spot_sim.body.battery import Battery
from spot_sim.body.commands import (
    FULL_BODY_KINDS,
    Command,
    CommandBook,
    CommandRejectedError,
    Feedback,
    finish,
)
from spot_sim.body.faults import Faults
from spot_sim.body.legs import Legs
from spot_sim.body.power import MotorPower, Power
from spot_sim.clock import RobotClock
from spot_sim.config import SimConfig
from spot_sim.docking import Docking
from spot_sim.estop_manager import LEVEL_CUT, LEVEL_NONE, EstopManager
from spot_sim.field import Draw
from spot_sim.frame_tree import body_pose, build_snapshot
from spot_sim.joint_control import Setpoint
from spot_sim.lease_manager import LeaseManager
from spot_sim.license import License
from spot_sim.mobility import Se2
from spot_sim.service_faults import ServiceFaults

__all__ = ["FULL_BODY_KINDS", "Command", "CommandRejectedError", "MotorPower", "SimRobot"]
_LOG = logging.getLogger(__name__)
FALL_LIE_DOWN_S = 0.3  # a fall or a joint fault puts the body down this fast
_STANDING_KINDS = ("stand", "velocity", "trajectory", "stance")
_LOWERING_KINDS = ("sit", "safe_power_off", "battery_change_pose")
_HALTING_KINDS = ("stop", "stop_fb", "freeze", "sit", "stand", "selfright", "stance",
                  "choreography")


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
        self.book = CommandBook()
        self._stop_event = threading.Event()
        # Capabilities stepped with the physics loop, in order: fn(robot, now_ns).
        self.step_hooks: list = []
        self._thread: threading.Thread | None = None
        self.base = Base(config)
        self._reset_state()
        self.docking = Docking(world.DEFAULT_DOCKS, config.start_docked_id)
        if config.start_docked_id:
            self.base.odom_body = self.docking.docks[config.start_docked_id].pose
        # Stable world object ids: a dock and its fiducial keep theirs for the robot's lifetime.
        self._object_ids = {dock_id: 1 + 2 * index
                            for index, dock_id in enumerate(sorted(self.docking.docks))}

    def _reset_state(self) -> None:
        config = self.config
        self.power = Power(config.power_on_sec, config.power_off_sec)
        self.book.forget()
        self.legs = Legs(config.has_arm, config.posture_change_sec)
        odom, vision = self.base.odom_body, self.base.vision_odom
        self.base = Base(config)
        self.base.odom_body, self.base.vision_odom = odom, vision  # where it is survives
        self.battery = Battery(config.battery_start_percent, config.battery_runtime_motors_on_sec,
                               config.battery_runtime_idle_sec, config.battery_charge_sec)
        self.faults = Faults()
        self.arm = Arm() if config.has_arm else None
        self.manipulations: dict[int, manipulation.Manipulation] = {}
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
            self._reset_state()
            self.docking.cancel("robot rebooted")

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
        return self.power.on

    @property
    def standing(self) -> bool:
        return self.legs.standing(self.clock.now_nsec())

    @property
    def body_height(self) -> float:
        return self.legs.body_height

    def vision_body(self) -> Se2:
        return self.base.vision_body()

    def _body_poses(self) -> tuple:
        """odom_tform_body and vision_tform_body (SE3), with a dance's offset."""
        base, height = self.base, self.legs.body_height
        return (body_pose(base.odom_body, height, base.rotation) * base.offset,
                body_pose(base.vision_body(), height, base.rotation) * base.offset)

    def transforms_snapshot(self) -> geometry_pb2.FrameTreeSnapshot:
        """The robot's current frame tree (rooted at body), as robot state reports it."""
        with self.lock:
            odom_tform_body, vision_tform_body = self._body_poses()
            arm_frames = None
            if self.arm is not None:
                arm_frames = arm_kinematics.link_poses(self.arm.q)
            return build_snapshot(odom_tform_body, vision_tform_body, self.config.has_arm,
                                  arm_frames=arm_frames, has_lidar=self.config.has_lidar,
                                  feet=kinematics.foot_positions_in_body(self.legs.posture.joints))

    def world_objects(self) -> list:
        """The docks and fiducials in view now, as ListWorldObjects reports them."""
        with self.lock:
            base, height = self.base, self.legs.body_height
            odom_tform_body = body_pose(base.odom_body, height, base.rotation)
            vision_tform_body = body_pose(base.vision_body(), height, base.rotation)
            return world.world_objects(tuple(self.docking.docks.values()), odom_tform_body,
                                       vision_tform_body, base.odom_body,
                                       self.clock.timestamp(), self._object_ids)

    def active_fault(self) -> bool:
        return self.faults.active

    # ----------------------------------------------------------------- power
    def request_power(self, turn_on: bool) -> tuple[int, int]:
        """A PowerCommand: (status, command id)."""
        with self.lock:
            if turn_on and self.estop.system_level() != LEVEL_NONE:
                return power_pb2.STATUS_ESTOPPED, 0
            if turn_on and self.faults.unclearable:
                return power_pb2.STATUS_FAULTED, 0
            command = self.power.add_command(self.book.next_id(), turn_on)
            now = self.clock.now_nsec()
            if turn_on:
                self.power.begin_on(now)
            elif self.power.on_or_coming:
                self._cut_motors(now)
            self.power.update_commands()
            return command.status, command.id

    def power_feedback(self, command_id: int) -> int:
        with self.lock:
            return self.power.feedback(command_id)

    def _cut_motors(self, now_ns: int) -> None:
        """Motors off: the legs fold to the sitting pose and every motion command ends."""
        self.power.begin_off(now_ns)
        self.legs.start_posture(False, now_ns, self.config.power_off_sec)
        self.base.halt()
        self.book.override(now_ns)
        self.book.mobility = None
        self.legs.joint_mode.disarm()
        self._halt_arm()

    def _halt_arm(self) -> None:
        if self.arm is not None:
            self.arm.halt()
        for task in self.manipulations.values():
            task.abort()

    # ----------------------------------------------------------------- commands
    def new_command(self, kind: str, **kwargs) -> Command:
        """Register an accepted command; a new mobility command overrides the previous one."""
        now = self.clock.now_nsec()
        command = self.book.add_mobility(kind, now, **kwargs)
        self._begin(command, now)
        return command

    def record_command(self, kind: str) -> Command:
        """Register an accepted command without a mobility part (arm and gripper only)."""
        return self.book.add_done(kind, self.clock.now_nsec())

    def next_id(self) -> int:
        return self.book.next_id()

    def start_posture(self, stand: bool, now_ns: int, duration: float) -> None:
        """Begin moving the legs to the standing or sitting pose over ``duration`` seconds."""
        self.legs.start_posture(stand, now_ns, duration)

    def finish_command(self, command: Command) -> None:
        """End ``command`` (completed by whatever ran it, a dance for example)."""
        if command is not None and not command.done:
            finish(command, None, self.clock.now_nsec())

    def _begin(self, command: Command, now_ns: int) -> None:
        kind, legs, base = command.kind, self.legs, self.base
        self._leave_joint_mode(now_ns)
        if kind == "joint":
            base.halt()
            legs.joint_mode.arm(command.id, now_ns)
        if kind in _STANDING_KINDS:
            legs.start_posture(True, now_ns)
        elif kind in _LOWERING_KINDS:
            base.halt()
            if base.still:
                legs.start_posture(False, now_ns)
        elif kind == "selfright":
            base.halt()
            legs.start_posture(False, now_ns, self.config.self_right_sec)
        if kind in _HALTING_KINDS:
            base.halt()
        if kind == "velocity":
            base.drive(command.velocity)

    def set_mobility_params(self, params: spot_command_pb2.MobilityParams) -> None:
        """Apply body height/orientation offsets and the velocity limit of a command."""
        height = self.base.apply_params(params)
        self.legs.height_offset = min(max(height, kinematics.MIN_HEIGHT_OFFSET),
                                      kinematics.MAX_HEIGHT_OFFSET)
        if self.legs.posture.standing:
            self.legs.start_posture(True, self.clock.now_nsec(), 0.5)

    # ----------------------------------------------------------------- faults
    def trigger_fall(self) -> int:
        """A fall: motors stay on, the robot lies down and a clearable behaviour fault appears."""
        with self.lock:
            now = self.clock.now_nsec()
            fault_id = self.book.next_id()
            self.faults.add(fault_id, robot_state_pb2.BehaviorFault.CAUSE_FALL,
                            self.clock.timestamp(now))
            self.base.halt()
            self.base.velocity = Se2()
            self.legs.start_posture(False, now, FALL_LIE_DOWN_S)
            self.book.override(now)
            self._halt_arm()
            return fault_id

    def clear_behavior_fault(self, fault_id: int) -> bool:
        with self.lock:
            return self.faults.clear(fault_id)

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
            legs = self.legs
            self.base.step(dt, held=not legs.standing(now), powered=self.power.on)
            self.step_joint_mode(now)
            if not legs.joint_mode.engaged:
                legs.step_posture(now, dt)
            if self.arm is not None:
                for task in list(self.manipulations.values()):
                    task.step(self, now)
                if not legs.joint_mode.drives_arm:
                    self.arm.step(now, dt)
            self.battery.step(dt, self.power.on, self.docking.charging)
            self.power.update_commands()

    def _step_power(self, now: int) -> None:
        level = self.estop.system_level()
        if level != LEVEL_NONE and self.power.on_or_coming:
            if level == LEVEL_CUT or not self.legs.posture.standing:
                self._cut_motors(now)
            else:  # settle then cut: sit first
                self.base.halt()
                self.legs.start_posture(False, now)
        self.power.step(now)
        if self.battery.empty and self.power.on:
            self._cut_motors(now)

    def _step_command(self, now: int) -> None:
        command = self.book.mobility
        if command is None or command.done:
            return
        odom_body = self.base.odom_body
        if command.end_ns is not None and now > command.end_ns and command.kind in (
                "velocity", "trajectory"):
            self.base.halt()
            status = (Feedback.STATUS_COMMAND_TIMED_OUT if command.kind == "trajectory"
                      and not mobility.goal_reached(odom_body, command.goal) else None)
            finish(command, status, now)
            return
        if command.kind == "trajectory":
            if mobility.goal_reached(odom_body, command.goal):
                self.base.halt()
            elif self.legs.standing(now):
                base, config = self.base, self.config
                base.target_velocity = mobility.goal_velocity(
                    odom_body, command.goal, base.velocity, base.velocity_limit,
                    config.max_linear_accel, config.max_angular_accel)
        elif command.kind in _LOWERING_KINDS:
            self._step_lowering(command, now)
        elif command.kind == "selfright" and not self.legs.posture.moving(now):
            command.done = True

    def _step_lowering(self, command: Command, now: int) -> None:
        """Sit, safe power off and battery change pose: once still, lower the body; safe
        power off then cuts power, battery change pose is done once down."""
        posture = self.legs.posture
        if self.base.still and posture.standing:
            self.legs.start_posture(False, now)
        down = not posture.moving(now)
        if (command.kind == "safe_power_off" and not posture.standing and down
                and self.power.on):
            finish(command, None, now)  # completed: cutting power is its last step
            self._cut_motors(now)
        if command.kind == "battery_change_pose" and down:
            command.done = True

    # ----------------------------------------------------------------- joint mode
    def joint_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Every joint's position and velocity (legs, then the arm's 7 with an arm)."""
        q, qd = self.legs.posture.joints + self.legs.swing, self.legs.velocity
        if self.arm is not None:
            q = np.concatenate([q, self.arm.joints])
            qd = np.concatenate([qd, self.arm.velocities])
        return q, qd

    def offer_joint_setpoint(self, setpoint: Setpoint) -> None:
        """A setpoint from the command stream (checked by ``JointMode.receive``)."""
        with self.lock:
            self.legs.joint_mode.offer(setpoint)
            self.step_joint_mode(self.clock.now_nsec())

    def step_joint_mode(self, now: int) -> None:
        """Run the servo law up to ``now`` (the physics loop, and every state-stream sample)."""
        legs = self.legs
        mode = legs.joint_mode
        if not mode.armed:
            return
        if not mode.engaged:
            q, qd = self.joint_positions()
            if not mode.engage(q, qd, now):
                return
            legs.swing = np.zeros_like(legs.swing)
            if mode.drives_arm:
                self._halt_arm()
        servo = mode.servo
        setpoint = servo.setpoint
        expired = now > setpoint.end_ns
        fastest = servo.advance(min(now, setpoint.end_ns), legs.supported)
        legs.posture.joints = servo.q[:12].copy()
        legs.velocity = servo.qd[:12].copy()
        if mode.drives_arm:
            self.arm.q, self.arm.qd = servo.q[12:18].copy(), servo.qd[12:18].copy()
            self.arm.gripper, self.arm.gripper_velocity = float(servo.q[18]), float(servo.qd[18])
        command = self.book.commands.get(mode.command_id)
        if setpoint.velocity_limit is not None and fastest > setpoint.velocity_limit:
            self._joint_fault(now)
        elif expired:  # commands stopped: the stand controller takes the robot back
            if command is not None and not command.done:
                finish(command, Feedback.STATUS_COMMAND_TIMED_OUT, now)
            self._leave_joint_mode(now)

    def joint_loads(self) -> np.ndarray:
        """Every joint's load (N m), from the servo in joint mode or the body's weight."""
        return self.legs.loads(self.power.on)

    def _leave_joint_mode(self, now: int) -> None:
        """Joint mode ends: the legs go back to standing from where they are."""
        mode = self.legs.joint_mode
        if not mode.armed:
            return
        was_engaged = mode.engaged
        mode.disarm()
        if was_engaged:
            self.legs.return_to_stand(now)

    def _joint_fault(self, now: int) -> None:
        """A joint passed the stream's velocity_safety_limit: a behaviour fault, and the
        robot lies down with its motors on until the fault is cleared or power is cut."""
        self.faults.add(self.book.next_id(), robot_state_pb2.BehaviorFault.CAUSE_COMMAND_FAILURE,
                        self.clock.timestamp(now))
        command = self.book.commands.get(self.legs.joint_mode.command_id)
        if command is not None and not command.done:
            finish(command, Feedback.STATUS_COMMAND_OVERRIDDEN, now)
        self.legs.joint_mode.disarm()
        self.legs.start_posture(False, now, FALL_LIE_DOWN_S)

    def battery_runtime_sec(self) -> float:
        return self.battery.runtime_sec(self.power.on)
