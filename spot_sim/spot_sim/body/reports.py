"""What the robot reports of its body: ``SimRobot``'s verbs that read it at one instant, as
poses, a frame tree, a motion or a whole reading (``reading.py``'s frozen values)."""

from bosdyn.api import geometry_pb2

from spot_sim.body import kinematics
from spot_sim.body.arm import kinematics as arm_kinematics
from spot_sim.body.frame_tree import body_pose, build_snapshot
from spot_sim.body.reading import BodyReading, Motion, copied, frozen


class ReportVerbs:
    """Part of ``SimRobot`` (``body/robot.py``): its reports, each read under its lock."""

    def body_poses(self) -> tuple:
        """odom_tform_body and vision_tform_body (SE3), with a dance's offset."""
        with self._lock:
            base, height = self._base, self._legs.body_height
            return (body_pose(base.odom_body, height, base.rotation) * base.offset,
                    body_pose(base.vision_body(), height, base.rotation) * base.offset)

    def transforms_snapshot(self) -> geometry_pb2.FrameTreeSnapshot:
        """The robot's current frame tree (rooted at body), as robot state reports it."""
        with self._lock:
            odom_tform_body, vision_tform_body = self.body_poses()
            arm_frames = None
            if self._arm is not None:
                arm_frames = arm_kinematics.link_poses(self._arm.q)
            return build_snapshot(odom_tform_body, vision_tform_body, self.config.has_arm,
                                  arm_frames=arm_frames, has_lidar=self.config.has_lidar,
                                  feet=kinematics.foot_positions_in_body(self._legs.posture.joints))

    def motion(self) -> Motion:
        """Where the body is and how it moves, read at one instant."""
        with self._lock:
            base = self._base
            return Motion(base.odom_body, base.vision_body(), base.velocity, base.blocked)

    def reading(self) -> BodyReading:
        """Everything the body reports, read at one instant (``spot_sim.state`` builds the
        robot's state from it)."""
        with self._lock:
            now = self.clock.now_nsec()
            q, qd = self.joint_positions()
            legs, base = self._legs, self._base
            return BodyReading(
                now, base.odom_body, base.vision_body(), base.velocity, frozen(q), frozen(qd),
                frozen(self.joint_loads()),
                frozen(kinematics.foot_positions_in_body(legs.posture.joints + legs.swing)),
                self.transforms_snapshot(), self._power.state, self._power.on,
                self._battery.percent, self._battery.runtime_sec(self._power.on),
                self._shore_power,
                copied(self._faults.behavior.values()), copied(self._faults.system),
                self.arm_reading())
