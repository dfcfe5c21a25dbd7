"""The gripper camera's settings between spot_msgs/GripperCameraParameters and
``bosdyn.api.GripperCameraParams``: pure, checked before anything is sent."""

import math

from bosdyn.api import gripper_camera_param_pb2 as pb

from spot_driver.core.errors import CommandError
from spot_msgs.msg import GripperCameraParameters

Params = pb.GripperCameraParams
MODES = {"640x480": Params.MODE_640_480, "1280x720": Params.MODE_1280_720,
         "1920x1080": Params.MODE_1920_1080, "3840x2160": Params.MODE_3840_2160,
         "4096x2160": Params.MODE_4096_2160, "4208x3120": Params.MODE_4208_3120}
HDR = {"off": pb.HDR_OFF, "auto": pb.HDR_AUTO, "manual_1": pb.HDR_MANUAL_1,
       "manual_2": pb.HDR_MANUAL_2, "manual_3": pb.HDR_MANUAL_3, "manual_4": pb.HDR_MANUAL_4}
LED_MODES = {"off": Params.LED_MODE_OFF, "torch": Params.LED_MODE_TORCH}
NUMBERS = ("brightness", "contrast", "saturation", "gain", "exposure_absolute",
           "focus_absolute", "led_torch_brightness")
SWITCHES = ("exposure_auto", "focus_auto")
CHOICES = {"camera_mode": MODES, "hdr": HDR, "led_mode": LED_MODES}
FIELDS = (*CHOICES, *NUMBERS, *SWITCHES)


def to_proto(msg: GripperCameraParameters, fields: list[str]) -> Params:
    """The settings named in ``fields``; CommandError for an unknown field, a number outside
    [0, 1] or not finite, or an unknown mode, HDR or LED choice."""
    if not fields:
        raise CommandError(f"name the settings to change in 'fields' (any of "
                           f"{', '.join(FIELDS)})")
    unknown = sorted(set(fields) - set(FIELDS))
    if unknown:
        raise CommandError(f"unknown gripper camera settings {unknown}; the settings are "
                           f"{', '.join(FIELDS)}")
    params = Params()
    for name in fields:
        value = getattr(msg, name)
        if name in NUMBERS:
            if not math.isfinite(value) or not 0.0 <= value <= 1.0:
                raise CommandError(f"{name} {value:.6g} is outside [0, 1]")
            getattr(params, name).value = value
        elif name in SWITCHES:
            getattr(params, name).value = bool(value)
        else:
            choices = CHOICES[name]
            if value not in choices:
                raise CommandError(f"{name} {value!r} is not one of {', '.join(choices)}")
            setattr(params, name, choices[value])
    return params


def from_proto(params: Params) -> GripperCameraParameters:
    """What the robot reports (an unset switch means on, as the robot documents)."""
    msg = GripperCameraParameters()
    for name, choices in CHOICES.items():
        names = {number: text for text, number in choices.items()}
        setattr(msg, name, names.get(getattr(params, name), ""))
    for name in NUMBERS:
        setattr(msg, name, float(getattr(params, name).value))
    for name in SWITCHES:
        setattr(msg, name, getattr(params, name).value if params.HasField(name) else True)
    return msg
