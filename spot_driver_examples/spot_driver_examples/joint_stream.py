"""Joint-level control for the examples: the driver's ``low_level`` capability (launch it
with ``low_level:=true``). ``low_level/activate`` puts the robot in joint mode; each
``low_level/joint_command`` message is a set of targets the robot tracks; when messages stop,
the robot stands again by itself. Gains are the SDK examples' (N m/rad, N m s/rad)."""

import threading
import time

from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool

from spot_driver_examples.spot import Spot, SpotError
from spot_msgs.msg import JointCommand

LEGS = [f"{leg}_{joint}" for leg in ("front_left", "front_right", "rear_left", "rear_right")
        for joint in ("hip_x", "hip_y", "knee")]
ARM = ["arm_sh0", "arm_sh1", "arm_el0", "arm_el1", "arm_wr0", "arm_wr1", "arm_f1x"]
LEG_GAINS = ([624.0, 936.0, 286.0] * 4, [5.20, 5.20, 2.04] * 4)  # hx, hy, kn per leg
ARM_GAINS = ([1020.0, 255.0, 204.0, 102.0, 102.0, 102.0, 16.0],  # sh0 .. wr1, f1x
             [10.2, 15.3, 10.2, 2.04, 2.04, 2.04, 0.32])
RATE_HZ = 200.0
STEP_LIMIT = 0.3  # rad: a target stays this close to where the joint is


def gains(name: str) -> tuple[float, float]:
    """The SDK examples' (k_q_p, k_qd_p) of the joint ``name`` (frame prefix allowed)."""
    for joints, (kp, kd) in ((ARM, ARM_GAINS), (LEGS, LEG_GAINS)):
        for i, joint in enumerate(joints):
            if name.endswith(joint):
                return kp[i], kd[i]
    raise SpotError(f"no gains for joint {name}")


class JointStream:
    def __init__(self, spot: Spot) -> None:
        self._spot = spot
        self._lock = threading.Lock()
        self._state: JointState | None = None
        self._hold: dict[str, float] = {}  # every joint's position when joint mode went on
        self._load: dict[str, float] = {}  # ... and its load: the feed-forward that holds it
        spot.node.create_subscription(JointState, spot.name("low_level/joint_states"),
                                      self._keep, 10)
        self._publisher = spot.node.create_publisher(
            JointCommand, spot.name("low_level/joint_command"), 10)

    def _keep(self, msg: JointState) -> None:
        with self._lock:
            self._state = msg

    def positions(self, timeout: float = 10.0) -> dict[str, float]:
        """The joints' latest positions by name."""
        return dict(zip(*self._latest("position", timeout), strict=True))

    def efforts(self, timeout: float = 10.0) -> dict[str, float]:
        """The joints' latest loads (N m) by name."""
        return dict(zip(*self._latest("effort", timeout), strict=True))

    def _latest(self, field: str, timeout: float) -> tuple[list, list]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                state = self._state
            if state is not None:
                return list(state.name), list(getattr(state, field))
            time.sleep(0.01)
        raise SpotError("no low_level/joint_states: is the driver's low_level capability on?")

    def named(self, joints: list[str]) -> list[str]:
        """The joint_states names of ``joints`` (URDF names: the frame prefix added)."""
        names = list(self.positions())
        found = {j: [n for n in names if n.endswith(j)] for j in joints}
        missing = [j for j, matches in found.items() if len(matches) != 1]
        if missing:
            raise SpotError(f"this robot has no joints {missing}")
        return [found[j][0] for j in joints]

    def activate(self, on: bool = True) -> str:
        """Joint mode on (True) or back to the stand controller (False). Joint mode drives
        every joint, so each command names them all: those ``follow`` does not move are held
        where they were when joint mode went on."""
        if on:
            self._hold, self._load = self.positions(), self.efforts()
        answer = self._spot.call(SetBool, "low_level/activate", SetBool.Request(data=on))
        if not answer.success:
            raise SpotError(f"low_level/activate: {answer.message}")
        return answer.message

    def follow(self, names: list[str], profile, seconds: float, rate_hz: float = RATE_HZ,
               gains_of: dict[str, tuple[float, float]] | None = None) -> None:
        """Stream targets ``profile(t)`` (one per name, t in s from now) for ``seconds`` at
        ``rate_hz``, each within STEP_LIMIT of where its joint is; every other joint held. Each
        joint's load when joint mode went on is its feed-forward (gravity, mostly), so the
        gains only correct. ``gains_of``: (k_q_p, k_qd_p) of joints not to use the SDK's."""
        every = list(self._hold)
        chosen = gains_of or {}
        kp, kd = zip(*(chosen.get(n) or gains(n) for n in every), strict=True)
        began = time.monotonic()
        while (t := time.monotonic() - began) < seconds:
            here = self.positions()
            wanted = dict(self._hold, **dict(zip(names, profile(t), strict=True)))
            targets = [min(max(wanted[n], here[n] - STEP_LIMIT), here[n] + STEP_LIMIT)
                       for n in every]
            self._publisher.publish(JointCommand(
                name=every, position=targets, load=[self._load[n] for n in every],
                k_q_p=list(kp), k_qd_p=list(kd)))
            time.sleep(1.0 / rate_hz)

    def command(self, names: list[str], positions: list[float]) -> None:
        """One command: ``positions`` for ``names`` (every other joint keeps its target), the
        SDK's gains, each joint's load when joint mode went on as its feed-forward."""
        kp, kd = zip(*(gains(n) for n in names), strict=True)
        self._publisher.publish(JointCommand(
            name=names, position=positions, load=[self._load[n] for n in names],
            k_q_p=list(kp), k_qd_p=list(kd)))

    def hold(self) -> None:
        """One command naming every joint, each where it was when joint mode went on: the
        robot takes a stream's gains for every joint from its first command."""
        every = list(self._hold)
        self.command(every, [self._hold[n] for n in every])

    def move(self, names: list[str], start: list[float], end: list[float], seconds: float,
             settle: float = 0.5, **stream) -> None:
        """From ``start`` to ``end`` in a straight line in ``seconds``, then held ``settle``
        (``stream``: follow's ``rate_hz`` and ``gains_of``)."""
        def line(t: float) -> list[float]:
            f = min(1.0, t / seconds)
            return [a + (b - a) * f for a, b in zip(start, end, strict=True)]
        self.follow(names, line, seconds + settle, **stream)

    def wait_for_subscriber(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while self._publisher.get_subscription_count() == 0:
            if time.monotonic() > deadline:
                raise SpotError("nobody subscribes low_level/joint_command: is spot_low_level "
                                "running?")
            time.sleep(0.05)
