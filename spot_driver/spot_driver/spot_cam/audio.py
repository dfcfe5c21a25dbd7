"""The Spot CAM's speaker over the SDK's ``AudioClient``: sounds are checked to be WAV
files, names to be loaded, volume and gain to be in range, before anything is sent."""

import io
import math
import wave

from bosdyn.api.spot_cam import audio_pb2
from bosdyn.client.spot_cam.audio import AudioClient

from spot_driver.core.errors import CommandError
from spot_driver.spot_cam.clients import spot_cam_client


def check_wav(data: bytes) -> float:
    """The WAV's duration in seconds; CommandError when ``data`` is not a readable WAV."""
    try:
        with wave.open(io.BytesIO(data)) as sound:
            return sound.getnframes() / float(sound.getframerate())
    except (wave.Error, EOFError, ZeroDivisionError) as exc:
        raise CommandError(f"not a WAV file: {exc or 'too short'}") from None


def check_volume(percent: float) -> None:
    if not (math.isfinite(percent) and 0.0 <= percent <= 100.0):
        raise CommandError(f"volume {percent} is outside [0, 100] percent")


def check_gain(gain: float) -> None:
    if not (math.isfinite(gain) and gain >= 0.0):
        raise CommandError(f"gain {gain} must be a finite number >= 0")


class Audio:
    """List, load, play and delete sounds; set the volume."""

    def __init__(self, connection) -> None:
        self._connection = connection

    def _client(self) -> AudioClient:
        return spot_cam_client(self._connection, AudioClient)

    def sounds(self) -> tuple[list[str], float]:
        """The loaded sounds' names and the volume (percent)."""
        client = self._client()
        return [s.name for s in client.list_sounds()], client.get_volume()

    def _known(self, name: str) -> None:
        names = self.sounds()[0]
        if name not in names:
            raise CommandError(f"unknown sound name {name!r}; loaded: {', '.join(names) or 'none'}")

    def load(self, name: str, data: bytes) -> float:
        """Load ``data`` as ``name``; returns its duration in seconds."""
        if not name:
            raise CommandError("a sound needs a name")
        duration = check_wav(data)
        self._client().load_sound(audio_pb2.Sound(name=name), data)
        return duration

    def play(self, name: str, gain: float) -> None:
        check_gain(gain)
        self._known(name)
        self._client().play_sound(audio_pb2.Sound(name=name), gain)

    def delete(self, name: str) -> None:
        self._known(name)
        self._client().delete_sound(audio_pb2.Sound(name=name))

    def set_volume(self, percent: float) -> None:
        check_volume(percent)
        self._client().set_volume(percent)
