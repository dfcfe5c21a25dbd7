"""The base: where the body is (odom and vision), how fast it goes, its limits, and the
no-go regions its footprint does not enter (``user_objects``)."""

import math

from bosdyn.api.spot import robot_command_pb2 as spot_command_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim.body import mobility
from spot_sim.body.mobility import Se2
from spot_sim.body.nogo import UserObjects
from spot_sim.core.config import SimConfig


class Base:
    def __init__(self, config: SimConfig) -> None:
        self._config = config
        self.odom_body = Se2()
        self.vision_odom = Se2()
        self.velocity = Se2()  # in the body frame
        self.target_velocity = Se2()
        self.acceleration = (0.0, 0.0)  # m/s^2 in the body frame, from the last step
        self.rotation = Quat()  # orientation offset from mobility params
        self.offset = SE3Pose(0, 0, 0, Quat())  # a dance's offset from the standing pose
        self.mobility_params: spot_command_pb2.MobilityParams | None = None  # last received
        self.velocity_limit = self._top_speed()
        self.distance_travelled = 0.0  # metrics: distance, walking time and motor-on time
        self.time_moving_s = 0.0
        self.motors_on_s = 0.0
        self.user_objects = UserObjects()  # world objects added through the API
        self.blocked = False  # the last step stopped at a no-go region

    def _top_speed(self) -> Se2:
        return Se2(self._config.max_vel_x, self._config.max_vel_y, self._config.max_vel_yaw)

    def vision_body(self) -> Se2:
        return mobility.compose(self.vision_odom, self.odom_body)

    @property
    def still(self) -> bool:
        return self.velocity == Se2()

    def halt(self) -> None:
        """Aim for zero velocity (the body decelerates to it)."""
        self.target_velocity = Se2()

    def drive(self, velocity: Se2) -> None:
        self.target_velocity = mobility.clamp_velocity(velocity, self.velocity_limit)

    def _enters_nogo(self, start: Se2, moved: Se2, now_ns: int) -> bool:
        """Whether ``moved`` overlaps a body obstacle that ``start`` does not (a robot
        already inside one may walk out)."""
        if not self.user_objects.objects:
            return False
        return any(r.meets(moved) and not r.meets(start) for r in self.body_obstacles(now_ns))

    def body_obstacles(self, now_ns: int) -> list:
        """The live user no-go regions that are body obstacles, in odom."""
        return self.user_objects.body_regions(now_ns, mobility.inverse(self.vision_odom))

    def apply_params(self, params: spot_command_pb2.MobilityParams) -> float:
        """Take a command's velocity limit and body orientation; the requested body height
        offset is returned (the legs apply it)."""
        self.mobility_params = params
        limit = self._top_speed()
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
        self.rotation = rotation
        return height

    def step(self, dt: float, held: bool, powered: bool, now_ns: int = 0) -> None:
        """Track the target velocity (zero while ``held``) and integrate it into odom;
        vision drifts from odom a little as the robot walks. A step that would take the
        footprint into a no-go region's body obstacle is not taken: the robot stops at its
        boundary (whatever the command)."""
        config = self._config
        before = self.velocity
        self.velocity = mobility.track_velocity(
            self.velocity, Se2() if held else self.target_velocity, dt,
            config.max_linear_accel, config.max_angular_accel, config.linear_decel,
            config.angular_decel)
        if dt > 0:
            self.acceleration = ((self.velocity.x - before.x) / dt,
                                 (self.velocity.y - before.y) / dt)
        if powered:
            self.motors_on_s += dt
        self.blocked = False
        if self.still:
            return
        self.time_moving_s += dt
        start = self.odom_body
        moved = mobility.integrate(self.odom_body, self.velocity, dt)
        self.blocked = self._enters_nogo(start, moved, now_ns)
        if self.blocked:
            self.velocity = Se2()
            return
        self.odom_body = moved
        step = math.hypot(self.odom_body.x - start.x, self.odom_body.y - start.y)
        self.distance_travelled += step
        drift = Se2(config.vision_drift_per_m * step, 0.5 * config.vision_drift_per_m * step,
                    config.vision_yaw_drift_per_m * step)
        self.vision_odom = mobility.compose(self.vision_odom, drift)
