"""The latest RobotState, shared between the state publisher and command handlers."""

import threading
import time

from bosdyn.api import robot_state_pb2

from spot_driver.core.errors import CommandError

READY_SETTLE_S = 1.0  # how long newer states are awaited before refusing on an older one


class RobotStateCache:
    """Holds the newest RobotState; readers wait for a newer one when they need it."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._state: robot_state_pb2.RobotState | None = None
        self._count = 0
        self._received = 0.0

    def update(self, state: robot_state_pb2.RobotState) -> None:
        with self._condition:
            self._state = state
            self._count += 1
            self._received = time.monotonic()
            self._condition.notify_all()

    def latest(self) -> robot_state_pb2.RobotState | None:
        with self._condition:
            return self._state

    def age(self) -> float:
        with self._condition:
            return time.monotonic() - self._received if self._state is not None else float("inf")

    def wait_newer(self, timeout: float) -> robot_state_pb2.RobotState | None:
        """A state received after this call, or None after ``timeout`` seconds."""
        with self._condition:
            start = self._count
            self._condition.wait_for(lambda: self._count > start, timeout)
            return self._state if self._count > start else None

    def wait_acquired_after(self, robot_ns: int, timeout: float
                            ) -> robot_state_pb2.RobotState | None:
        """The newest state the robot acquired after ``robot_ns`` (robot clock), waited for up
        to ``timeout`` seconds; else the newest there is. A result that reports where the
        robot ended reads this: a state received after the robot said "done" may still have
        been taken before (requests are pipelined)."""
        def acquired_after() -> bool:
            if self._state is None:
                return False
            stamp = self._state.kinematic_state.acquisition_timestamp
            return stamp.seconds * 1_000_000_000 + stamp.nanos > robot_ns

        with self._condition:
            self._condition.wait_for(acquired_after, timeout)
            return self._state

    def require_ready(self, settle_s: float = READY_SETTLE_S) -> None:
        """Refuse (CommandError) when the robot is e-stopped or its motors are off; with no
        state yet the robot's own checks decide. A state that says so may predate a power-on
        or e-stop release that just succeeded (over Wi-Fi a state is tens of ms old on
        arrival): newer states are awaited up to ``settle_s`` before refusing."""
        state = self.latest()
        if state is None:
            return
        problem = not_ready(state)
        deadline = time.monotonic() + settle_s
        while problem and (remaining := deadline - time.monotonic()) > 0:
            newer = self.wait_newer(remaining)
            if newer is None:
                break
            problem = not_ready(newer)
        if problem:
            raise CommandError(problem)


def not_ready(state: robot_state_pb2.RobotState) -> str:
    """Why ``state`` shows a robot that cannot take a command, or "" when it can."""
    if any(e.state == robot_state_pb2.EStopState.STATE_ESTOPPED for e in state.estop_states):
        return "robot is e-stopped; release the e-stop first"
    if state.power_state.motor_power_state != robot_state_pb2.PowerState.STATE_ON:
        return "robot is not powered on; call 'power_on' first"
    return ""
