"""The choreography service's robot state logs: a manual recording (StartRecordingState /
StopRecordingState, at most five minutes a session, extendable by its session id) and the
automatic log of the last choreography executed. Keyframes hold every joint angle, the foot
contacts and the body's pose in the animation frame (the footprint where the log began).

Plain state owned by the choreography servicer (called under its lock); ``record`` is given
the robot's pose and joints by the caller.
"""

from dataclasses import dataclass, field

import numpy as np
from bosdyn.api.spot import choreography_sequence_pb2 as seq_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim.body.kinematics import LEGS

Start = seq_pb2.StartRecordingStateResponse
Download = seq_pb2.DownloadRobotStateLogResponse
LogType = seq_pb2.DownloadRobotStateLogRequest
KEYFRAME_PERIOD_NS = 20_000_000  # 50 keyframes a second [ours: the robot says "a high rate"]
MAX_RECORDING_NS = 300 * 1_000_000_000  # the robot's five-minute buffer
MAX_FILL_NS = 1_000_000_000  # a gap longer than this is a clock jump, not filled in
ARM_FIELDS = ("shoulder_0", "shoulder_1", "elbow_0", "elbow_1", "wrist_0", "wrist_1")


def footprint(odom_t_body: SE3Pose) -> SE3Pose:
    """The body's footprint: on the ground (z = 0 in odom) under the body, yawed as it is."""
    return SE3Pose(odom_t_body.x, odom_t_body.y, 0.0,
                   Quat.from_yaw(odom_t_body.rot.to_yaw()))


@dataclass
class Log:
    """Keyframes since ``start_ns``, in the animation frame ``odom_t_animation``, one every
    KEYFRAME_PERIOD_NS of robot time: a robot logs at its controller's rate, so where this
    simulator's physics step came late, the keyframes due meanwhile are filled in on the way
    from the last state seen to this one."""

    odom_t_animation: SE3Pose
    frames: list = field(default_factory=list)
    next_ns: int = 0  # the next keyframe is due
    full: bool = False
    seen: tuple | None = None  # (ns, animation_t_body, joints) of the last state given

    def add(self, now_ns: int, odom_t_body: SE3Pose, joints: np.ndarray, has_arm: bool,
            start_ns: int) -> None:
        if now_ns < self.next_ns:
            return
        state = (now_ns, self.odom_t_animation.inverse() * odom_t_body, np.array(joints))
        if self.seen is None or now_ns - self.next_ns > MAX_FILL_NS:  # first, or a clock jump
            self.next_ns = now_ns
        while self.next_ns <= now_ns:
            if self.next_ns - start_ns > MAX_RECORDING_NS:
                self.full = True
                return
            pose, angles = between(self.seen, state, self.next_ns) if \
                self.next_ns < now_ns else state[1:]
            self.frames.append(keyframe(self.next_ns, pose, angles, has_arm))
            self.next_ns += KEYFRAME_PERIOD_NS
        self.seen = state

    def proto(self) -> seq_pb2.ChoreographyStateLog:
        return seq_pb2.ChoreographyStateLog(key_frames=self.frames)


def between(a: tuple, b: tuple, t_ns: int) -> tuple[SE3Pose, np.ndarray]:
    """The state at ``t_ns`` on the straight way from state ``a`` to ``b`` (each ``(ns, pose,
    joints)``): positions and joints linear, the rotation normalised-linear."""
    f = (t_ns - a[0]) / (b[0] - a[0])
    pa, pb = a[1], b[1]
    qa = np.array([pa.rot.w, pa.rot.x, pa.rot.y, pa.rot.z])
    qb = np.array([pb.rot.w, pb.rot.x, pb.rot.y, pb.rot.z])
    q = qa + f * ((qb if qa @ qb >= 0 else -qb) - qa)
    q /= np.linalg.norm(q)
    pose = SE3Pose(pa.x + f * (pb.x - pa.x), pa.y + f * (pb.y - pa.y), pa.z + f * (pb.z - pa.z),
                   Quat(*q))
    return pose, a[2] + f * (b[2] - a[2])


def keyframe(now_ns: int, animation_t_body: SE3Pose, joints: np.ndarray,
             has_arm: bool) -> seq_pb2.LoggedStateKeyFrame:
    """One keyframe: joints in LEG_JOINTS then ARM_JOINTS order (f1x last)."""
    frame = seq_pb2.LoggedStateKeyFrame(animation_tform_body=animation_t_body.to_proto())
    frame.timestamp.FromNanoseconds(now_ns)
    angles = frame.joint_angles
    for index, leg in enumerate(LEGS):
        hx, hy, kn = (float(v) for v in joints[3 * index:3 * index + 3])
        getattr(angles, leg).CopyFrom(seq_pb2.LegJointAngles(hip_x=hx, hip_y=hy, knee=kn))
        setattr(frame.foot_contact_state, f"{leg}_contact", True)  # feet never leave ground
    if has_arm:
        for name, value in zip(ARM_FIELDS, joints[12:18], strict=True):
            getattr(angles.arm, name).value = float(value)
        angles.gripper_angle.value = float(joints[18])
    return frame


@dataclass
class StateLogs:
    """The manual recording and the last choreography's log."""

    manual: Log | None = None
    session_id: int = 0
    start_ns: int = 0
    end_ns: int = 0  # the manual recording runs until this robot time
    dance: Log | None = None  # the running choreography's log
    dance_start_ns: int = 0
    last_dance: Log | None = None
    _sessions: int = 0

    def start(self, now_ns: int, duration_ns: int, session_id: int, odom_t_body: SE3Pose
              ) -> tuple[int, int]:
        """StartRecordingState: (status, session id)."""
        if session_id:
            if session_id != self.session_id or self.manual is None:
                return Start.STATUS_UNKNOWN_RECORDING_SESSION_ID, self.session_id
            if self.manual.full:
                return Start.STATUS_RECORDING_BUFFER_FULL, self.session_id
            self.end_ns = now_ns + duration_ns
            return Start.STATUS_OK, self.session_id
        self._sessions += 1
        self.session_id, self.start_ns, self.end_ns = self._sessions, now_ns, now_ns + duration_ns
        self.manual = Log(footprint(odom_t_body))
        return Start.STATUS_OK, self.session_id

    def stop(self, now_ns: int) -> None:
        self.end_ns = min(self.end_ns, now_ns)

    @property
    def recording(self) -> bool:
        return self.manual is not None and not self.manual.full

    def begin_dance(self, now_ns: int, odom_t_body: SE3Pose) -> None:
        self.dance, self.dance_start_ns = Log(footprint(odom_t_body)), now_ns

    def end_dance(self) -> None:
        if self.dance is not None:
            self.last_dance, self.dance = self.dance, None

    def wants_frame(self, now_ns: int) -> bool:
        return self.dance is not None or (self.recording and now_ns <= self.end_ns)

    def record(self, now_ns: int, odom_t_body: SE3Pose, joints: np.ndarray,
               has_arm: bool) -> None:
        if self.manual is not None and now_ns <= self.end_ns:
            self.manual.add(now_ns, odom_t_body, joints, has_arm, self.start_ns)
        if self.dance is not None:
            self.dance.add(now_ns, odom_t_body, joints, has_arm, self.dance_start_ns)

    def download(self, log_type: int) -> tuple[int, seq_pb2.ChoreographyStateLog | None]:
        """(status, log) of LOG_TYPE_MANUAL or LOG_TYPE_LAST_CHOREOGRAPHY."""
        log = self.manual if log_type == LogType.LOG_TYPE_MANUAL else self.last_dance
        if log is None or not log.frames:
            return Download.STATUS_NO_RECORDED_INFORMATION, None
        return (Download.STATUS_INCOMPLETE_DATA if log.full else Download.STATUS_OK,
                log.proto())
