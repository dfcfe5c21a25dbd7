"""The simulated robot's optional hardware, declared once.

Each option is a ``SimConfig`` field, a ``spot-sim`` flag (``--arm`` / ``--no-arm``) and a
``spot_sim.launch.py`` argument (``arm:=true``); services that need it declare it
(``Served.hardware``) and are served only when it is fitted.
"""

from dataclasses import dataclass, fields

from spot_sim.core.config import SimConfig


@dataclass(frozen=True)
class Option:
    """One piece of optional hardware: its name (flag and launch argument), the SimConfig
    field that fits it, and what it gives the robot."""

    name: str
    field: str
    help: str

    @property
    def default(self) -> bool:
        return next(f.default for f in fields(SimConfig) if f.name == self.field)

    @property
    def flag(self) -> str:
        return self.name.replace("_", "-")


OPTIONS = (
    Option("arm", "has_arm", "an arm with a gripper and its camera"),
    Option("lidar", "has_lidar", "a lidar payload (EAP) serving the velodyne-point-cloud source"),
    Option("color_cameras", "color_cameras",
           "RGB body cameras (without: greyscale, as on most Spots)"),
    Option("spot_cam", "has_spot_cam",
           "a Spot CAM+IR payload: PTZ, panorama, IR, audio, LEDs, media log"),
    Option("safety_rated_stop", "safety_rated_stop",
           "the safety-rated stop function (SRSF): primary and redundant safety stops"),
    Option("audio_visual", "has_audio_visual",
           "the audio-visual system: lights and buzzer behaviours"),
)
BY_NAME = {option.name: option for option in OPTIONS}


def fitted(config: SimConfig, name: str) -> bool:
    """Whether ``config``'s robot has the hardware option ``name``."""
    return bool(getattr(config, BY_NAME[name].field))
