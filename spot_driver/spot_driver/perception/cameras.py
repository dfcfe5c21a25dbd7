"""Which robot image sources make up each camera the driver can stream."""

from dataclasses import dataclass

BODY_CAMERAS = ("frontleft", "frontright", "left", "right", "back")
HAND_CAMERA = "hand"
KNOWN_CAMERAS = (*BODY_CAMERAS, HAND_CAMERA)


class UnknownCameraError(ValueError):
    pass


@dataclass(frozen=True)
class CameraSources:
    """Source names of one camera: visual image, depth, and depth registered to the visual."""

    camera: str
    visual: str
    depth: str
    registered: str


def camera_sources(camera: str, color: bool = False) -> CameraSources:
    """The Spot API image sources of ``camera`` (``color`` picks the gripper's colour imager)."""
    if camera in BODY_CAMERAS:
        return CameraSources(camera, f"{camera}_fisheye_image", f"{camera}_depth",
                             f"{camera}_depth_in_visual_frame")
    if camera == HAND_CAMERA:
        return CameraSources(camera, "hand_color_image" if color else "hand_image", "hand_depth",
                             "hand_depth_in_hand_color_frame")
    raise UnknownCameraError(f"unknown camera {camera!r}; Spot's cameras are "
                             f"{', '.join(KNOWN_CAMERAS)}")
