"""The Spot CAM's speaker and microphones: the sounds loaded onto it (WAV files), the volume,
what it played and when, and the audio capture channel and its gains.

A sound must be a readable WAV file, as the SDK's ``audio load`` program uploads; a sound
plays for its WAV duration. Volume is a percentage (the SDK's program clamps to [0, 100]).
Capture gains are limited to [0, 1] (our choice: the API gives no range).
"""

import io
import math
import wave
from dataclasses import dataclass

from bosdyn.api.spot_cam import audio_pb2

from spot_sim.core.lock_order import LEAF, OrderedLock

INTERNAL_MIC = audio_pb2.AUDIO_CHANNEL_INTERNAL_MIC
EXTERNAL_MIC = audio_pb2.AUDIO_CHANNEL_EXTERNAL_MIC
MAX_SOUND_BYTES = 16 * 1024 * 1024  # ours: a generous limit for a payload's storage


class AudioError(ValueError):
    """A request the Spot CAM's audio refuses (unknown sound, not a WAV, out of range)."""


@dataclass(frozen=True)
class Played:
    """One playback: the sound, its gain, the volume then, and when it started and ends."""

    name: str
    gain: float
    volume: float
    start_ns: int
    end_ns: int


def wav_duration_s(data: bytes) -> float:
    """The duration of WAV ``data``; AudioError when it is not a WAV file."""
    try:
        with wave.open(io.BytesIO(data)) as sound:
            return sound.getnframes() / float(sound.getframerate())
    except (wave.Error, EOFError, ZeroDivisionError) as exc:
        raise AudioError(f"not a WAV file ({exc})") from None


def _finite_in(value: float, low: float, high: float, what: str) -> float:
    if not (math.isfinite(value) and low <= value <= high):
        raise AudioError(f"{what} {value} is outside [{low:g}, {high:g}]")
    return float(value)


class Speaker:
    """The sounds, volume, playbacks and capture settings (each call is atomic)."""

    def __init__(self) -> None:
        self._lock = OrderedLock("spot_cam audio", LEAF)
        self._sounds: dict[str, tuple[bytes, float]] = {}
        self._volume = 50.0
        self._played: list[Played] = []
        self._channel = INTERNAL_MIC
        self._gains = {INTERNAL_MIC: 0.5, EXTERNAL_MIC: 0.5}

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._sounds)

    def load(self, name: str, data: bytes) -> None:
        if not name:
            raise AudioError("a sound needs a name")
        if len(data) > MAX_SOUND_BYTES:
            raise AudioError(f"sound of {len(data)} bytes is over {MAX_SOUND_BYTES}")
        duration = wav_duration_s(data)
        with self._lock:
            self._sounds[name] = (bytes(data), duration)

    def delete(self, name: str) -> None:
        with self._lock:
            if self._sounds.pop(name, None) is None:
                raise AudioError(f"no sound named {name!r}")

    def play(self, name: str, gain: float, now_ns: int) -> Played:
        _finite_in(gain, 0.0, 100.0, "gain")
        with self._lock:
            sound = self._sounds.get(name)
            if sound is None:
                raise AudioError(f"no sound named {name!r}")
            played = Played(name, gain, self._volume, now_ns, now_ns + int(sound[1] * 1e9))
            self._played.append(played)
            return played

    def played(self) -> list[Played]:
        with self._lock:
            return list(self._played)

    def set_volume(self, percent: float) -> None:
        value = _finite_in(percent, 0.0, 100.0, "volume")
        with self._lock:
            self._volume = value

    def volume(self) -> float:
        with self._lock:
            return self._volume

    def set_channel(self, channel: int) -> None:
        if channel not in self._gains:
            raise AudioError(f"audio capture channel {channel} is neither microphone")
        with self._lock:
            self._channel = channel

    def channel(self) -> int:
        with self._lock:
            return self._channel

    def set_gain(self, channel: int, gain: float) -> None:
        if channel not in self._gains:
            raise AudioError(f"audio capture channel {channel} is neither microphone")
        value = _finite_in(gain, 0.0, 1.0, "capture gain")
        with self._lock:
            self._gains[channel] = value

    def gain(self, channel: int) -> float:
        if channel not in self._gains:
            raise AudioError(f"audio capture channel {channel} is neither microphone")
        with self._lock:
            return self._gains[channel]
