"""The simulated robot: its body parts, the rules that join them, and the physics loop.

The state lives in parts (``spot_sim.body``): power, legs, base, arm, the command book, the
battery and faults. ``SimRobot`` owns them, private, behind one lock: the body's own rules,
kinds and services use its one door, ``parts(Base, Legs, ...)``; every capability above the
body uses its verbs (``test_body_doors_units`` and ``core/lock_order.py`` hold this).
It is where each physical rule is written once: cutting power folds the legs and ends every
motion; the e-stop cuts power; a fall or a joint fault lies the robot down. The loop, at a
fixed rate, completes power transitions, runs the commands and the robot's controllers,
moves the base and legs, and drains the battery.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from bosdyn.api import power_pb2, robot_state_pb2
from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2
from bosdyn.client.math_helpers import SE3Pose

from spot_sim.body import joint_rules, kinds, kinematics, mobility, power_rules
from spot_sim.body.arm.model import Arm
from spot_sim.body.arm.verbs import ArmVerbs
from spot_sim.body.base import Base
from spot_sim.body.battery import Battery
from spot_sim.body.commands import CommandBook, finish
from spot_sim.body.estop_manager import LEVEL_NONE, EstopManager
from spot_sim.body.faults import Faults
from spot_sim.body.joint_rules import FALL_LIE_DOWN_S
from spot_sim.body.legs import Legs
from spot_sim.body.mobility import Se2
from spot_sim.body.power import Power
from spot_sim.body.reading import frozen
from spot_sim.body.reports import ReportVerbs
from spot_sim.core.clock import RobotClock
from spot_sim.core.config import SimConfig
from spot_sim.core.field import Draw
from spot_sim.core.lease_manager import LeaseManager
from spot_sim.core.license import License
from spot_sim.core.lock_order import ROBOT, STEP, OrderedLock
from spot_sim.core.service_faults import ServiceFaults
from spot_sim.core.ticker import Ticker, catch_up

StepHook = Callable[["SimRobot", int], None]
MAX_TICK_S = 0.05  # the longest physics tick; a late one is made up in ticks this long
MAX_CATCH_UP_S = 2.0  # a longer gap between ticks is a clock jump


class SimRobot(ArmVerbs, ReportVerbs):
    """State of one simulated Spot. Thread-safe; ``start()`` runs the physics loop."""

    def __init__(self, config: SimConfig, clock: RobotClock) -> None:
        self.config = config
        self.clock = clock
        self._lock = OrderedLock("robot", ROBOT)  # every part's state (core/lock_order.py)
        self.license = License(config.serial_number, config.withheld_features)
        self.service_faults = ServiceFaults(clock)
        self.leases = LeaseManager(config.has_arm, config.lease_stale_sec)
        self.field = Draw(config.field, "robot")  # the field profile's noise and ages
        self.estop = EstopManager(config.estop_required)
        self._book = CommandBook()
        self._arm_halts = 0  # how often the arm was halted: a task begun before has ended
        # Capabilities stepped with the physics loop, in order: fn(robot, now_ns). They run
        # outside the robot's lock, as any client does: they act through its methods.
        self._step_hooks: tuple[StepHook, ...] = ()
        self._stepping = OrderedLock("robot step", STEP)
        self._loop = Ticker("spot-sim-physics", self.step, config.physics_rate_hz)
        self._base = Base(config)
        self._shore_power = False  # on a dock's charging contacts (docking/ says so)
        self._reset_state()

    def _reset_state(self) -> None:
        config = self.config
        self._power = Power(config.power_on_sec, config.power_off_sec)
        self._book.forget()
        self._legs = Legs(config.has_arm, config.posture_change_sec)
        odom, vision = self._base.odom_body, self._base.vision_odom
        self._base = Base(config)
        self._base.odom_body, self._base.vision_odom = odom, vision  # where it is survives
        self._battery = Battery(config.battery_start_percent, config.battery_runtime_motors_on_sec,
                                config.battery_runtime_idle_sec, config.battery_charge_sec)
        self._faults = Faults()
        self._arm = Arm() if config.has_arm else None
        self.last_step_ns = self.clock.now_nsec()
        self._by_class = {Power: self._power, Legs: self._legs, Base: self._base,
                          CommandBook: self._book, Battery: self._battery, Faults: self._faults,
                          Arm: self._arm}  # what parts() hands over

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> None:
        self._loop.start()

    def stop(self) -> None:
        self._loop.stop()

    def reboot(self) -> None:
        """Forget leases, e-stop endpoints and motion; come back sitting with motors off."""
        with self._lock:
            self.leases.forget_all()
            self.estop.forget_all()
            self._reset_state()
            self._arm_halts += 1

    def add_step_hook(self, hook: StepHook) -> None:
        """Step ``hook(robot, now_ns)`` once per physics step, after those added before, outside
        the robot's lock (a capability that drives the robot: GraphNav, docking, a dance)."""
        with self._lock:
            self._step_hooks += (hook,)

    def remove_step_hook(self, hook: StepHook) -> None:
        with self._lock:
            self._step_hooks = tuple(h for h in self._step_hooks if h != hook)

    @contextmanager
    def parts(self, *wanted: type) -> Iterator[tuple]:
        """The one door to the robot's parts: ``with robot.parts(Base, Legs) as (base, legs):``
        holds the robot's lock and hands over the parts of those classes (``Power``, ``Legs``,
        ``Base``, ``CommandBook``, ``Battery``, ``Faults``, ``Arm``: None without one), as one
        step of the robot: nothing else reads or changes them meanwhile.
        Use them only inside the block, and wait on nothing else there (an RPC, or a lock
        that comes before the robot's: core/lock_order.py)."""
        with self._lock:
            yield tuple(self._by_class[kind] for kind in wanted)

    # ----------------------------------------------------------------- queries
    @property
    def powered(self) -> bool:
        return self._power.on

    @property
    def standing(self) -> bool:
        return self._legs.standing(self.clock.now_nsec())

    @property
    def body_height(self) -> float:
        return self._legs.body_height

    def odom_body(self) -> Se2:
        """Where the body stands in odom (x, y, yaw)."""
        with self._lock:
            return self._base.odom_body

    def velocity(self) -> Se2:
        """The body's velocity (vx, vy in its own frame, yaw rate)."""
        with self._lock:
            return self._base.velocity

    def vision_body(self) -> Se2:
        with self._lock:
            return self._base.vision_body()

    def no_go_regions(self, now_ns: int) -> tuple[list, Se2]:
        """The body obstacles of the user no-go regions (odom) and the body's odom pose, at
        one instant."""
        with self._lock:
            return self._base.body_obstacles(now_ns), self._base.odom_body

    def user_objects(self, now_ns: int) -> list:
        """The world objects clients added (no-go regions among them) still alive."""
        with self._lock:
            return self._base.user_objects.live(now_ns)

    def mutate_user_objects(self, mutation, now_ns: int,
                            perceived: set[int]) -> tuple[int, int, str]:
        """One MutateWorldObjects mutation: (status, object id, message); ``perceived``: the
        ids of objects the robot sees (not changeable)."""
        with self._lock:
            return self._base.user_objects.mutate(mutation, now_ns, perceived)

    def posture_standing(self) -> bool:
        """Whether the legs are in, or moving to, the standing pose."""
        with self._lock:
            return self._legs.posture.standing

    def posture_joints(self) -> np.ndarray:
        """The leg joints of the posture the legs hold (before a dance's swing)."""
        with self._lock:
            return frozen(self._legs.posture.joints)

    def seated(self) -> bool:
        """Whether the legs rest in the sitting pose (not moving to or from it)."""
        with self._lock:
            posture = self._legs.posture
            return not posture.standing and not posture.moving(self.clock.now_nsec())

    def active_fault(self) -> bool:
        return self._faults.active

    def motion_refusal(self) -> str | None:
        """Why the body cannot take a motion command now, or None: motors off, or an active
        behaviour fault (the rule docking, navigation and choreography refuse by)."""
        with self._lock:
            if not self._power.on:
                return "motor power is off"
            if self._faults.active:
                return "the robot has an active behavior fault"
            return None

    # ----------------------------------------------------------------- power
    def request_power(self, turn_on: bool) -> tuple[int, int]:
        """A PowerCommand: (status, command id)."""
        with self._lock:
            if turn_on and self.estop.system_level() != LEVEL_NONE:
                return power_pb2.STATUS_ESTOPPED, 0
            if turn_on and self._faults.unclearable:
                return power_pb2.STATUS_FAULTED, 0
            command = self._power.add_command(self._book.next_id(), turn_on)
            now = self.clock.now_nsec()
            if turn_on:
                self._power.begin_on(now)
            elif self._power.on_or_coming:
                self.cut_motors(now)
            self._power.update_commands()
            return command.status, command.id

    def power_feedback(self, command_id: int) -> int:
        with self._lock:
            return self._power.feedback(command_id)

    def cut_motors(self, now_ns: int) -> None:
        """Motors off: the legs fold to the sitting pose and every motion command ends."""
        with self._lock:  # re-entrant: the rules that call it already hold it
            self._power.begin_off(now_ns)
            self._legs.start_posture(False, now_ns, self.config.power_off_sec)
            self._base.halt()
            self._book.override(now_ns)
            self._book.mobility = None
            self._legs.joint_mode.disarm()
            self.halt_arm()

    # ----------------------------------------------------------------- commands
    def new_command(self, kind: str, **kwargs) -> int:
        """Register an accepted command (overriding the mobility one); its id, not itself."""
        with self._lock:
            now = self.clock.now_nsec()
            command = self._book.add_mobility(kind, now, **kwargs)
            kinds.begin(self, command, now)
            return command.id

    def record_command(self, kind: str) -> int:
        """Register an accepted arm or gripper command (no mobility part); its id."""
        with self._lock:
            return self._book.add_done(kind, self.clock.now_nsec()).id

    def amend_command(self, command_id: int, goal: Se2 | None = None,
                      end_ns: int | None = None) -> bool:
        """A new goal or end time for ``command_id`` while it is in charge and running."""
        with self._lock:
            command = self._book.mobility
            if not self._book.active(command_id):
                return False
            command.goal = goal if goal is not None else command.goal
            command.end_ns = end_ns if end_ns is not None else command.end_ns
            return True

    def next_id(self) -> int:
        return self._book.next_id()

    def start_posture(self, stand: bool, now_ns: int, duration: float | None = None) -> None:
        """Begin moving the legs to the standing or sitting pose (over ``duration`` s)."""
        with self._lock:
            self._legs.start_posture(stand, now_ns, duration)

    def finish_command(self, command_id: int | None) -> None:
        """End ``command_id`` (completed by whatever ran it, a dance for example)."""
        with self._lock:
            command = self._book.commands.get(command_id)
            if command is not None and not command.done:
                finish(command, None, self.clock.now_nsec())

    def set_mobility_params(self, params: spot_command_pb2.MobilityParams) -> None:
        """Apply body height/orientation offsets and the velocity limit of a command."""
        with self._lock:
            height = self._base.apply_params(params)
            self._legs.height_offset = min(max(height, kinematics.MIN_HEIGHT_OFFSET),
                                          kinematics.MAX_HEIGHT_OFFSET)
            if self._legs.posture.standing:
                self._legs.start_posture(True, self.clock.now_nsec(), 0.5)

    def in_charge(self, command_id: int | None) -> bool:
        """Whether ``command_id`` is the mobility command in charge (done or not)."""
        with self._lock:
            return self._book.mobility is not None and self._book.mobility.id == command_id

    def command_active(self, command_id: int) -> bool:
        """Whether ``command_id`` is the mobility command in charge and still running."""
        with self._lock:
            return self._book.active(command_id)

    # ----------------------------------------------------------------- faults
    def trigger_fall(self) -> int:
        """A fall: motors stay on, the robot lies down and a clearable behaviour fault appears."""
        with self._lock:
            now = self.clock.now_nsec()
            fault_id = self._book.next_id()
            self._faults.add(fault_id, robot_state_pb2.BehaviorFault.CAUSE_FALL,
                            self.clock.timestamp(now))
            self._base.halt()
            self._base.velocity = Se2()
            self._legs.start_posture(False, now, FALL_LIE_DOWN_S)
            self._book.override(now)
            self.halt_arm()
            return fault_id

    def clear_behavior_fault(self, fault_id: int) -> bool:
        with self._lock:
            return self._faults.clear(fault_id)

    # ----------------------------------------------------------------- physics
    def step(self) -> None:
        """Catch the physics up to the clock: the hooks (outside the lock) once, then power,
        commands, motion, legs, arm and battery in ticks of at most 50 ms, so a late step (a
        busy host) loses no time."""
        with self._stepping:  # the physics loop and an e-stop's immediate step, one at a time
            now = self.clock.now_nsec()
            for hook in self._step_hooks:
                hook(self, now)
            for tick, dt in catch_up(self.last_step_ns, now, MAX_TICK_S, MAX_CATCH_UP_S):
                self._tick(tick, dt)

    def _tick(self, now: int, dt: float) -> None:
        with self._lock:
            self.last_step_ns = now
            power_rules.step(self, now)
            kinds.step(self, now)
            legs = self._legs
            self._base.step(dt, held=not legs.standing(now), powered=self._power.on, now_ns=now)
            joint_rules.step(self, now)
            if not legs.joint_mode.engaged:
                legs.step_posture(now, dt)
            if self._arm is not None and not legs.joint_mode.drives_arm:
                self._arm.step(now, dt, self._base.odom_body, self._base.still)
            self._battery.step(dt, self._power.on, self._shore_power)
            self._power.update_commands()

    # ----------------------------------------------------------------- joint mode
    def joint_positions(self) -> tuple[np.ndarray, np.ndarray]:
        """Every joint's position and velocity (legs, then the arm's 7 with an arm)."""
        with self._lock:
            q, qd = self._legs.posture.joints + self._legs.swing, self._legs.velocity
            if self._arm is not None:
                q = np.concatenate([q, self._arm.joints])
                qd = np.concatenate([qd, self._arm.velocities])
            return q, qd

    def joint_loads(self) -> np.ndarray:
        """Every joint's load (N m), from the servo in joint mode or the body's weight."""
        with self._lock:
            return self._legs.loads(self._power.on)

    def dance_pose(self, offset: SE3Pose, swing: np.ndarray, walked: Se2 = Se2()) -> None:
        """A dance's pose: the body's offset from its standing pose, the leg joints' offsets
        from their posture, and the ground walked since the last (in the body's frame)."""
        with self._lock:
            self._base.offset = offset
            self._legs.swing = np.array(swing, dtype=float)
            if walked != Se2():
                self._base.odom_body = mobility.compose(self._base.odom_body, walked)

    def place(self, pose: Se2) -> None:
        """Put the body at ``pose`` in odom (where the robot starts: on a dock, say)."""
        with self._lock:
            self._base.odom_body = pose

    def set_shore_power(self, connected: bool) -> None:
        """Whether the body is on a dock's charging contacts; the battery charges while it is."""
        with self._lock:
            self._shore_power = connected

    def set_battery(self, percent: float) -> None:
        """Set the charge (a test's fault injection); at 0 % the next tick cuts motor power."""
        with self._lock:
            self._battery.percent = percent

    def metrics(self) -> tuple[float, float, float]:
        """Distance walked (m), time moving (s) and time with motor power on (s)."""
        with self._lock:
            base = self._base
            return base.distance_travelled, base.time_moving_s, base.motors_on_s
