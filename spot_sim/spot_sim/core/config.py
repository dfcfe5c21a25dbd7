"""Settings of one simulated robot."""

from dataclasses import dataclass
from dataclasses import field as default_field

from spot_sim.core.field import FieldProfile


@dataclass
class SimConfig:
    """Everything that distinguishes one simulated Spot from another."""

    username: str = "user"
    password: str = "password"
    serial_number: str = "BD-SIM-00001"
    nickname: str = "spot-sim"
    has_arm: bool = False
    has_lidar: bool = True  # a lidar payload (EAP) serving the velodyne-point-cloud source
    color_cameras: bool = False  # body cameras greyscale (as on most Spots) or RGB
    has_spot_cam: bool = False  # a Spot CAM+IR payload on the rail
    safety_rated_stop: bool = False  # the safety-rated stop function (SRSF) is configured
    has_audio_visual: bool = False  # the audio-visual system (lights and buzzer)
    clock_offset_sec: float = 12.345  # robot clock ahead of the host clock
    physics_rate_hz: float = 100.0
    estop_required: bool = True  # no registered e-stop endpoint means motors stay off
    lease_stale_sec: float = 10.0
    power_on_sec: float = 1.0
    power_off_sec: float = 0.3
    posture_change_sec: float = 1.0
    self_right_sec: float = 2.0
    battery_start_percent: float = 95.0
    battery_runtime_motors_on_sec: float = 90 * 60.0  # full battery to empty while powered
    battery_runtime_idle_sec: float = 10 * 3600.0
    battery_charge_sec: float = 30 * 60.0  # empty to full on the dock
    withheld_features: tuple[str, ...] = ()  # license features this robot lacks
    start_docked_id: int = 0  # start sitting on this dock (0: at the odom origin, undocked)
    max_linear_accel: float = 1.5  # m/s^2
    max_angular_accel: float = 3.0  # rad/s^2
    max_linear_decel: float = 10.0  # m/s^2, braking: the robot stops within a few steps
    max_angular_decel: float = 10.0  # rad/s^2
    max_vel_x: float = 1.6  # m/s, the robot's own limits; mobility params may lower them
    max_vel_y: float = 0.5
    max_vel_yaw: float = 1.5  # rad/s
    vision_drift_per_m: float = 0.01  # translation drift of odom relative to vision, per metre
    vision_yaw_drift_per_m: float = 0.002  # rad per metre
    render_workers: int = 2  # processes rendering cameras and lidar (0: the serving one)
    field: FieldProfile = default_field(default_factory=FieldProfile)  # latency, noise, drift, ...

    @property
    def linear_decel(self) -> float:
        return self.field.max_linear_decel or self.max_linear_decel

    @property
    def angular_decel(self) -> float:
        return self.field.max_angular_decel or self.max_angular_decel
