"""The Spot CAM payload's parts, built once (by the server, when the robot has a Spot CAM) and
handed to the services that serve them: power rails, health record, PTZ heads, compositor,
stream settings, speaker, lights and media log."""

from dataclasses import dataclass

from spot_sim.core.clock import RobotClock
from spot_sim.spot_cam.audio import Speaker
from spot_sim.spot_cam.compositor import Compositor
from spot_sim.spot_cam.health import Health
from spot_sim.spot_cam.lights import Lights
from spot_sim.spot_cam.media_log import MediaLog
from spot_sim.spot_cam.power import PowerRails
from spot_sim.spot_cam.ptz import PtzHeads
from spot_sim.spot_cam.stream import StreamSettings


@dataclass(frozen=True)
class SpotCam:
    """One Spot CAM's state: each part owns its own (each has its lock where it needs one)."""

    rails: PowerRails
    health: Health
    heads: PtzHeads
    compositor: Compositor
    stream: StreamSettings
    speaker: Speaker
    lights: Lights
    media_log: MediaLog

    @classmethod
    def build(cls, clock: RobotClock) -> "SpotCam":
        """A Spot CAM as it powers up: rails on, heads at their start pose from now."""
        return cls(PowerRails(), Health(), PtzHeads(clock.now_nsec()), Compositor(),
                   StreamSettings(), Speaker(), Lights(), MediaLog())
