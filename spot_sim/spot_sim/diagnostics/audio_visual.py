"""The simulated robot's audio-visual system (lights and buzzer): its settings, its named
behaviours and which of them plays now.

A behaviour runs until its end time or until its client stops it; among the running ones the
highest priority plays (a later one of equal priority wins). Behaviours are checked as the
API documents their ranges. The permanent behaviours' names and contents are ours: Boston
Dynamics does not publish a robot's built-in list.
"""

import math
from dataclasses import dataclass

from bosdyn.api import audio_visual_pb2 as av

from spot_sim.core.lock_order import LEAF, OrderedLock

Led = av.LedSequenceGroup.LedSequence
PERIOD_RANGE_S = (0.1, 25.5)
PERMANENT = {"robot_normal": (av.Color.PRESET_NORMAL, 0),
             "robot_warning": (av.Color.PRESET_WARNING, 10),
             "robot_danger": (av.Color.PRESET_DANGER, 20)}  # [ours]
_LEDS = ("front_center", "front_left", "front_right", "hind_left", "hind_right")


def _solid(preset: int, priority: int) -> av.AudioVisualBehavior:
    behavior = av.AudioVisualBehavior(enabled=True, priority=priority)
    for led in _LEDS:
        getattr(behavior.led_sequence_group, led).solid_color_sequence.color.preset = preset
    return behavior


def _color_problem(color: av.Color, where: str) -> str:
    if color.WhichOneof("color_type") == "rgb":
        rgb = color.rgb
        if not all(0 <= value <= 255 for value in (rgb.r, rgb.g, rgb.b)):
            return f"{where}: RGB channels must be within [0, 255]"
    return ""


def _period_problem(period, where: str) -> str:
    seconds = period.seconds + period.nanos * 1e-9
    low, high = PERIOD_RANGE_S
    return "" if low <= seconds <= high else f"{where}: period must be within [{low}, {high}] s"


def _led_problem(sequence: Led, where: str) -> str:
    which = sequence.WhichOneof("sequence_type")
    if which is None:
        return ""
    inner = getattr(sequence, which)
    if which == "animation_sequence":
        return next((p for i, frame in enumerate(inner.frames) if (p := _color_problem(
            frame.color, f"{where} frame {i}"))), "")
    problem = _color_problem(inner.color, where)
    if not problem and which != "solid_color_sequence":
        problem = _period_problem(inner.period, where)
    if not problem and which == "blink_sequence" and not 0.0 <= inner.duty_cycle <= 1.0:
        problem = f"{where}: duty_cycle must be within [0, 1]"
    return problem


def behavior_problem(behavior: av.AudioVisualBehavior) -> str:
    """Why the robot would refuse ``behavior`` ("" if it would not)."""
    group = behavior.led_sequence_group
    for led in _LEDS:
        problem = _led_problem(getattr(group, led), led)
        if problem:
            return problem
    cam = group.spot_cam
    which = cam.WhichOneof("sequence_type")
    if which in ("animation_sequence", "fixed_brightness_sequence"):
        maps = [f.brightnesses for f in cam.animation_sequence.frames] \
            if which == "animation_sequence" else [cam.fixed_brightness_sequence.brightnesses]
        for brightnesses in maps:
            if any(not 0 <= index <= 3 or not 0.0 <= value <= 1.0
                   for index, value in brightnesses.items()):
                return "spot_cam: LED indices are 0-3 and brightnesses within [0, 1]"
    for note in behavior.audio_sequence_group.buzzer.notes:
        if note.duration.seconds < 0 or note.duration.nanos < 0:
            return "buzzer: a note's duration must not be negative"
    return ""


@dataclass
class Running:
    name: str
    client: str
    end_ns: int
    started: int  # order of starting, to break priority ties


class AudioVisual:
    """Settings, behaviours and the running ones; thread safe."""

    def __init__(self) -> None:
        self.params = av.AudioVisualSystemParams(enabled=True, max_brightness=1.0,
                                                 buzzer_max_volume=1.0, speaker_max_volume=1.0)
        self.behaviors = {name: _solid(*spec) for name, spec in PERMANENT.items()}
        self.running: dict[str, Running] = {}
        self._starts = 0
        self._lock = OrderedLock("audio visual", LEAF)

    def live(self) -> list[av.LiveAudioVisualBehavior]:
        with self._lock:
            return [av.LiveAudioVisualBehavior(name=name, permanent=name in PERMANENT,
                                               behavior=behavior)
                    for name, behavior in self.behaviors.items()]

    def add_or_modify(self, name: str, behavior: av.AudioVisualBehavior) -> tuple[int, str]:
        """(AddOrModifyBehaviorResponse status, error message)."""
        Response = av.AddOrModifyBehaviorResponse
        if name in PERMANENT:
            return Response.STATUS_MODIFY_PERMANENT, ""
        problem = "a behavior needs a name" if not name else behavior_problem(behavior)
        if problem:
            return Response.STATUS_INVALID, problem
        with self._lock:
            self.behaviors[name] = av.AudioVisualBehavior()
            self.behaviors[name].CopyFrom(behavior)
        return Response.STATUS_SUCCESS, ""

    def delete(self, names) -> tuple[int, list[av.LiveAudioVisualBehavior]]:
        """(DeleteBehaviorsResponse status, the deleted): all named, or none deleted."""
        Response = av.DeleteBehaviorsResponse
        with self._lock:
            if any(name in PERMANENT for name in names):
                return Response.STATUS_DELETE_PERMANENT, []
            if any(name not in self.behaviors for name in names):
                return Response.STATUS_DOES_NOT_EXIST, []
            deleted = [av.LiveAudioVisualBehavior(name=n, behavior=self.behaviors.pop(n))
                       for n in names]
            for name in names:
                self.running.pop(name, None)
        return Response.STATUS_SUCCESS, deleted

    def run(self, name: str, client: str, end_ns: int, now_ns: int, restart: bool
            ) -> tuple[int, int]:
        """(RunBehaviorResponse status, run result)."""
        Response = av.RunBehaviorResponse
        with self._lock:
            behavior = self.behaviors.get(name)
            if behavior is None:
                return Response.STATUS_DOES_NOT_EXIST, Response.RESULT_UNKNOWN
            if end_ns <= now_ns:
                return Response.STATUS_EXPIRED, Response.RESULT_UNKNOWN
            if not self.params.enabled:
                return Response.STATUS_SUCCESS, Response.RESULT_SYSTEM_DISABLED
            if not behavior.enabled:
                return Response.STATUS_SUCCESS, Response.RESULT_BEHAVIOR_DISABLED
            self._expire(now_ns)
            already = name in self.running
            playing = self._playing_locked()
            self._starts += 1
            started = self.running[name].started if already and not restart else self._starts
            self.running[name] = Running(name, client, end_ns, started)
            if already:
                return Response.STATUS_SUCCESS, Response.RESULT_ALREADY_RUNNING
            if playing is not None and self.behaviors[playing].priority > behavior.priority:
                return Response.STATUS_SUCCESS, Response.RESULT_LOW_PRIORITY
        return Response.STATUS_SUCCESS, Response.RESULT_BEHAVIOR_RUN

    def stop(self, name: str, client: str) -> int:
        Response = av.StopBehaviorResponse
        with self._lock:
            running = self.running.get(name)
            if running is not None and running.client != client:
                return Response.STATUS_INVALID_CLIENT
            self.running.pop(name, None)
        return Response.STATUS_SUCCESS

    def playing(self, now_ns: int) -> str | None:
        """The behaviour the lights and buzzer play now (None: none)."""
        with self._lock:
            self._expire(now_ns)
            return self._playing_locked()

    def set_params(self, request: av.SetSystemParamsRequest) -> str:
        """Apply the fields ``request`` sets; a refusal sentence ("" when applied)."""
        for name in ("max_brightness", "buzzer_max_volume", "speaker_max_volume"):
            if request.HasField(name):
                value = getattr(request, name).value
                if not math.isfinite(value) or not 0.0 <= value <= 1.0:
                    return f"{name} must be within [0, 1]"
        with self._lock:
            for name in ("enabled", "max_brightness", "buzzer_max_volume",
                         "speaker_max_volume", "speaker_disable_agc", "speaker_disable_nr"):
                if request.HasField(name):
                    setattr(self.params, name, getattr(request, name).value)
            for name in ("normal_color_association", "warning_color_association",
                         "danger_color_association"):
                if request.HasField(name):
                    getattr(self.params, name).CopyFrom(getattr(request, name))
        return ""

    def _expire(self, now_ns: int) -> None:
        for name in [n for n, r in self.running.items() if r.end_ns <= now_ns]:
            del self.running[name]

    def _playing_locked(self) -> str | None:
        if not self.running or not self.params.enabled:
            return None
        return max(self.running.values(),
                   key=lambda r: (self.behaviors[r.name].priority, r.started)).name
