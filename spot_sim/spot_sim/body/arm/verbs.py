"""The robot's arm verbs: what a capability above the body (the Manipulation API, arm surface
contact, a dance) reads of the arm and asks it to do, each as one step of the robot."""

from spot_sim.body.arm.model import Arm, ArmTask, GripperTask
from spot_sim.body.reading import ArmReading, frozen
from spot_sim.core.clock import RobotClock
from spot_sim.core.lock_order import OrderedLock


class ArmVerbs:
    """Part of ``SimRobot`` (``body/robot.py``): its arm, under its lock."""

    clock: RobotClock
    _lock: OrderedLock
    _arm: Arm | None
    _arm_halts: int

    def halt_arm(self) -> None:
        """The arm stops where it is, ending whatever moved it (``arm_halts``)."""
        with self._lock:
            if self._arm is not None:
                self._arm.halt()
            self._arm_halts += 1

    def arm_halts(self) -> int:
        """How many times the arm has been halted (motor power cut, a fall, an arm command,
        joint mode, a reboot): a task that began at another count has ended."""
        with self._lock:
            return self._arm_halts

    def gripper_holding(self) -> bool:
        """Whether the gripper holds something (never, without an arm)."""
        with self._lock:
            return self._arm is not None and self._arm.holding

    def arm_reading(self) -> ArmReading | None:
        """The arm and gripper now (None without an arm)."""
        with self._lock:
            arm = self._arm
            if arm is None:
                return None
            return ArmReading(frozen(arm.q), arm.gripper, arm.open_percentage, arm.holding,
                              arm.stowed, arm.carry_state, frozen(arm.hand_velocity),
                              frozen(arm.contact_force(self.clock.now_nsec())))

    def start_arm(self, task: ArmTask | None = None, gripper: GripperTask | None = None,
                  holding: bool | None = None, carry_state: int | None = None) -> None:
        """As one step: start an arm task and/or a gripper task (each overrides the one
        running), and set what the gripper holds and whether it may be stowed."""
        with self._lock:
            arm = self._arm
            if task is not None:
                arm.start(task)
            if gripper is not None:
                arm.start_gripper(gripper)
            if holding is not None:
                arm.holding = holding
            if carry_state is not None:
                arm.carry_state = carry_state

    def override_grasp(self, holding: bool | None, carry_state: int | None) -> None:
        """What the operator says the gripper holds, and whether it may be stowed."""
        self.start_arm(holding=holding, carry_state=carry_state)

    def arm_progress(self, command_id: int) -> tuple[bool, bool]:
        """Whether arm command ``command_id`` is the arm's current one, and whether done."""
        with self._lock:
            task = self._arm.task if self._arm is not None else None
            mine = task is not None and task.command_id == command_id
            return mine, mine and task.done

    def gripper_progress(self, command_id: int) -> tuple[bool, bool]:
        """Whether gripper command ``command_id`` is the gripper's current one, and whether
        the claw is closed on a held item (it can close no further)."""
        with self._lock:
            task = self._arm.gripper_task if self._arm is not None else None
            mine = task is not None and task.command_id == command_id
            return mine, mine and self._arm.gripper_blocked()

    def end_arm_command(self, command_id: int | None) -> None:
        """End arm command ``command_id`` where the arm is, if it is the arm's current one."""
        with self._lock:
            task = self._arm.task if self._arm is not None else None
            if task is not None and task.command_id == command_id and not task.done:
                task.overridden = task.done = True
