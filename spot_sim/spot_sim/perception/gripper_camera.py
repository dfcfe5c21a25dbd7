"""The gripper camera's settings (gripper-camera-param) and what they do to its images:
resolution from the camera mode, exposure and gain, brightness, contrast, saturation.

Defaults leave an image as the scene shades it. Modes above 1920x1080 are rendered at
1920x1080 (same field of view) and scaled up, so a 4208x3120 request costs what a robot's
bandwidth would, not a 13-megapixel ray cast.
"""

from dataclasses import dataclass

import numpy as np
from bosdyn.api import gripper_camera_param_pb2 as pb
from google.protobuf.wrappers_pb2 import FloatValue

from spot_sim.core.lock_order import LEAF, OrderedLock

Params = pb.GripperCameraParams
MODES = {Params.MODE_640_480: (640, 480), Params.MODE_1280_720: (1280, 720),
         Params.MODE_1920_1080: (1920, 1080), Params.MODE_3840_2160: (3840, 2160),
         Params.MODE_4096_2160: (4096, 2160), Params.MODE_4208_3120: (4208, 3120)}
MAX_RENDER_COLS = 1920
AUTO_EXPOSURE = 0.25  # the manual exposure that matches what auto exposure makes of the room
FLOATS = ("brightness", "contrast", "saturation", "gain", "exposure_absolute", "focus_absolute",
          "led_torch_brightness", "gamma", "white_balance_temperature", "sharpness")


@dataclass(frozen=True)
class Look:
    """How the settings change pixel values (identity by default)."""

    exposure: float = 1.0  # light gathered, relative to auto exposure
    brightness: float = 0.0  # grey levels added
    contrast: float = 1.0  # around mid grey
    saturation: float = 1.0  # colour kept

    def apply(self, grey: np.ndarray, rgb: np.ndarray | None) -> tuple:
        """(grey, rgb) uint8 arrays after the settings (rgb may be None)."""
        def adjust(values: np.ndarray) -> np.ndarray:
            out = values.astype(np.float32) * self.exposure
            out = (out - 128.0) * self.contrast + 128.0 + self.brightness
            return np.clip(np.rint(out), 0, 255).astype(np.uint8)

        if self == Look():
            return grey, rgb
        new_grey = adjust(grey)
        if rgb is None:
            return new_grey, None
        mean = grey.astype(np.float32)[:, None]
        coloured = mean + (rgb.astype(np.float32) - mean) * self.saturation
        return new_grey, adjust(np.clip(coloured, 0, 255))


class GripperCamera:
    """The settings the robot keeps for its gripper camera (they do not persist across
    reboots); owns them behind its own lock."""

    def __init__(self) -> None:
        self._lock = OrderedLock("gripper camera", LEAF)
        self._params = Params(camera_mode=Params.MODE_640_480)
        for name, value in (("brightness", 0.5), ("contrast", 0.5), ("saturation", 0.5),
                            ("gain", 0.0)):
            getattr(self._params, name).CopyFrom(FloatValue(value=value))
        self._params.exposure_auto.value = True
        self._params.focus_auto.value = True
        self._params.hdr = pb.HDR_OFF
        self._params.led_mode = Params.LED_MODE_OFF

    def params(self) -> Params:
        with self._lock:
            return Params.FromString(self._params.SerializeToString())

    def set(self, params: Params) -> str:
        """Merge ``params`` in; a sentence (nothing changed) when a value is out of range."""
        problem = refusal(params)
        if problem:
            return problem
        with self._lock:
            # Field by field: MergeFrom would not copy a wrapper's false or zero value.
            for field, value in params.ListFields():
                if field.message_type is not None:
                    getattr(self._params, field.name).CopyFrom(value)
                else:
                    setattr(self._params, field.name, value)
            if self._params.exposure_auto.value and not params.HasField("exposure_absolute"):
                self._params.ClearField("exposure_absolute")  # reported only when manual
        return ""

    def size(self) -> tuple[int, int]:
        """(cols, rows) of the current mode."""
        with self._lock:
            return MODES[self._params.camera_mode]

    def look(self) -> Look:
        with self._lock:
            p = self._params
            manual = p.HasField("exposure_auto") and not p.exposure_auto.value
            absolute = p.exposure_absolute.value if p.HasField("exposure_absolute") \
                else AUTO_EXPOSURE
            exposure = (absolute / AUTO_EXPOSURE) * (1.0 + 3.0 * p.gain.value) if manual else 1.0
            return Look(exposure=round(exposure, 4),
                        brightness=round((p.brightness.value - 0.5) * 128.0, 2),
                        contrast=round(2.0 * p.contrast.value, 4),
                        saturation=round(2.0 * p.saturation.value, 4))


def refusal(params: Params) -> str:
    """Why the robot would refuse ``params`` ("" when it would not)."""
    if params.camera_mode and params.camera_mode not in MODES:
        return f"camera mode {params.camera_mode} is not one of the gripper camera's modes"
    for name in FLOATS:
        if params.HasField(name):
            value = getattr(params, name).value
            if not 0.0 <= value <= 1.0:  # also false for NaN
                return f"{name} {value:.6g} is outside [0, 1]"
    for name in ("exposure_roi", "focus_roi"):
        if params.HasField(name):
            centre = getattr(params, name).roi_percentage_in_image
            if not (0.0 <= centre.x <= 1.0 and 0.0 <= centre.y <= 1.0):
                return f"{name} centre ({centre.x}, {centre.y}) is outside the image [0, 1]"
    if params.hdr not in pb.HdrParameters.values():
        return f"hdr {params.hdr} is not an HDR mode"
    if params.led_mode not in Params.LedMode.values():
        return f"led_mode {params.led_mode} is not an LED mode"
    return ""
