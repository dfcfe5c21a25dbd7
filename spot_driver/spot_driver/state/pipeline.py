"""One RobotState to every message it makes, in one call (pure: no node, no I/O).

joint_states, odometry and dynamic /tf (``state_cdr``), every status (``status_cdr``) on the
cycles that carry them, and /tf_static when the tree's static part is new (first state, a
changed tree). Everything but /tf_static is CDR bytes, ready for ``Publisher.publish``.
"""

from dataclasses import dataclass, field

from builtin_interfaces.msg import Time
from tf2_msgs.msg import TFMessage

from spot_driver.conversions import frames
from spot_driver.conversions.time import NSEC, Stamp, local_nsec
from spot_driver.description import frame_names as naming
from spot_driver.description import robot_model
from spot_driver.state.state_cdr import StateSerializer
from spot_driver.state.status_cdr import StatusSerializer

MAX_CORRECTION_NS = 1_000_000_000  # skew corrections smaller than this keep stamps going forward
TimeSync = tuple[bool, int, int]  # (established, clock skew ns, round trip ns)
# A 4.x Spot's robot state names the wrist ``link_wr1`` (its model and 5.x: ``arm0.link_wr1``).
WRIST_ALIASES = {"link_wr1": "arm0.link_wr1"}


def model_frames() -> frozenset[str]:
    """The frames robot_state_publisher publishes from the robot model (every link but the
    body, the arm's included), and the robot-state names of the same frames."""
    links = robot_model.link_names(has_arm=True) - {"body"}
    return frozenset(links | {alias for alias, link in WRIST_ALIASES.items() if link in links})


@dataclass
class StateMessages:
    """What one robot state publishes. ``statuses`` is keyed like the status topics
    (``battery_state`` a list, one per battery) and empty on cycles without statuses."""

    joint_states: bytes
    odometry: bytes
    tf: bytes
    body_twist: bytes = b""
    tf_static: TFMessage | None = None
    statuses: dict[str, bytes | list[bytes]] = field(default_factory=dict)
    time_sync: bytes | None = None


class StatePipeline:
    """Turns robot states into messages for one ``tf_root`` and frame prefix."""

    def __init__(self, root: str, prefix: str = "", skip: frozenset[str] = frozenset(),
                 frame_names: str = "spot") -> None:
        """``skip``: frames of the robot's tree that another node publishes (the robot
        model's links when robot_state_publisher runs): left out of /tf and /tf_static.
        ``frame_names``: the naming of what is published (``description/frame_names.py``)."""
        if root not in frames.ROOTS:
            raise ValueError(f"tf_root must be one of {frames.ROOTS}, not {root!r}")
        if "body" in skip:
            raise ValueError("the body frame is the robot state's to publish")
        self.root, self.prefix, self.skip = root, prefix, skip
        self.names = naming.renames(frame_names, model_frames())
        self._kinematics = StateSerializer(root, prefix, skip=skip, names=self.names)
        self._statuses = StatusSerializer(prefix + "body", prefix + "hand")
        self._static_layout = None
        self._last_ns = 0  # the last stamp given, local ns

    def messages(self, state, skew: int, sync: TimeSync, now: Stamp,
                 with_statuses: bool = True) -> StateMessages:
        """Every message of ``state`` (a RobotState). ``skew`` (ns, robot - local) turns robot
        stamps into local ones; ``sync`` and ``now`` (local) make the time-sync status.
        Raises KeyError when the body is not in the robot's tree."""
        kin = state.kinematic_state
        # Robot stamps only go forward, but the skew moves with each time-sync estimate: a
        # correction must not send the local stamps of /tf, odometry and joint_states back
        # (tf2 drops data older than what it holds). A larger step back is a new clock (a
        # clock jump, a reboot): it goes through.
        stamp_ns = local_nsec(kin.acquisition_timestamp, skew)
        if 0 < self._last_ns + 1 - stamp_ns < MAX_CORRECTION_NS:
            stamp_ns = self._last_ns + 1  # one nanosecond after the last
        self._last_ns = stamp_ns
        stamp = divmod(stamp_ns, NSEC)
        joints, odometry, tf = self._kinematics.serialize(kin, stamp)
        out = StateMessages(joints, odometry, tf,
                            self._kinematics.body_twist(stamp, odometry))
        layout = self._kinematics.tree_layout
        if layout is not self._static_layout:
            _, static = frames.split_transforms(kin.transforms_snapshot, self.root,
                                                Time(sec=stamp[0], nanosec=stamp[1]),
                                                self.prefix, self.skip, self.names)
            out.tf_static = TFMessage(transforms=static) if static else None
            self._static_layout = layout
        if with_statuses:
            out.statuses = self._statuses.serialize(state, stamp, skew)
            out.time_sync = self._statuses.time_sync(now, *sync)
        return out
