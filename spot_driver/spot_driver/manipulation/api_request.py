"""Any manipulation API request from ROS (``bosdyn.api.ManipulationApiRequest``): parsed and
checked before it is sent. Pure."""

import math

from bosdyn.api import geometry_pb2, manipulation_api_pb2

from spot_driver.core.errors import CommandError
from spot_driver.core.proto_input import check_values, parse_one_form

Request = manipulation_api_pb2.ManipulationApiRequest
MAX_TIMEOUT_S = 600.0
DEFAULT_TIMEOUT_S = 60.0


def parse(serialized: bytes, text: str, robot_frames: set[str]) -> Request:
    """The goal's request; CommandError when it does not parse, sets no command, has a
    non-finite value or names a frame neither the robot's tree nor the request's own frame
    trees (an image's camera frames) have."""
    request = parse_one_form(Request(), serialized, text, ("request", "request_text"))
    which = request.WhichOneof("manipulation_cmd")
    if which is None:
        raise CommandError(f"the request sets no command (one of "
                           f"{', '.join(f.name for f in Request.DESCRIPTOR.oneofs[0].fields)})")
    check_values(request, robot_frames | _own_frames(getattr(request, which)))
    return request


def _own_frames(command) -> set[str]:
    """The frames of the FrameTreeSnapshots a command carries (an image's camera)."""
    frames = set()
    for _, value in command.ListFields():
        if isinstance(value, geometry_pb2.FrameTreeSnapshot):
            frames |= set(value.child_to_parent_edge_map)
    return frames


def timeout(seconds: float) -> float:
    """The goal's timeout (0: the default); CommandError outside (0, MAX_TIMEOUT_S]."""
    if not math.isfinite(seconds) or not 0.0 <= seconds <= MAX_TIMEOUT_S:
        raise CommandError(f"timeout {seconds} s is outside [0, {MAX_TIMEOUT_S:g}] s")
    return seconds or DEFAULT_TIMEOUT_S
