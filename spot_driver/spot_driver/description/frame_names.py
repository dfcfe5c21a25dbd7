"""Which names the driver gives the robot's frames on ROS (pure: no ROS, no I/O).

``spot`` (the default) publishes the robot's own frame names (``arm0.link_sh0`` ..), as its
frame tree and image responses say them. ``spot_ros2`` publishes the names spot_ros2's model
uses where they differ (``arm_link_sh0`` ..) and adds the frames its model has beyond the
robot's (``base_link``, ``front_rail``, ``rear_rail``, ``arm_link_hr0``: fixed links of the
URDF), so RViz configs, TF lookups and URDF tools written for spot_ros2 keep working.

Inside the driver every frame keeps the robot's name; only what is published is renamed.
GraphNav's seed frame (``map_frame`` unset) is ``map`` in one, ``graph_nav_map`` (spot_ros2's
``graph_nav_seed_frame``) in the other; either way it is the parent of the TF root (REP-105),
so a lookup from it to ``body`` works in both.
"""

NAMINGS = ("spot", "spot_ros2")
ROBOT_ARM_PREFIX = "arm0.link_"
SPOT_ROS2_ARM_PREFIX = "arm_link_"


def check(naming: str) -> str:
    """``naming`` if it is one of ``NAMINGS``, else ValueError with a sentence that says so."""
    if naming not in NAMINGS:
        raise ValueError(f"frame_names must be one of {', '.join(NAMINGS)}, not {naming!r}")
    return naming


def arm_link_prefix(naming: str) -> str:
    """What the arm's link names start with under ``naming`` (the URDF's ``arm0.link_``)."""
    return SPOT_ROS2_ARM_PREFIX if check(naming) == "spot_ros2" else ROBOT_ARM_PREFIX


def published(frame: str, naming: str) -> str:
    """The name ``frame`` (a robot frame name) is published under in ``naming``."""
    prefix = arm_link_prefix(naming)
    return prefix + frame[len(ROBOT_ARM_PREFIX):] if frame.startswith(ROBOT_ARM_PREFIX) \
        else frame


def renames(naming: str, frames) -> dict[str, str]:
    """``{robot name: published name}`` for those of ``frames`` that ``naming`` renames."""
    out = {frame: published(frame, naming) for frame in frames}
    return {frame: name for frame, name in out.items() if name != frame}


def map_frame(naming: str) -> str:
    """GraphNav's seed frame under ``naming``, when the driver's ``map_frame`` is unset."""
    return "graph_nav_map" if check(naming) == "spot_ros2" else "map"


def robot_frame(frame_id: str, prefix: str, naming: str) -> str:
    """A frame id from a ROS message (a goal's header) as the robot names the frame: the
    driver's ``prefix`` taken off and ``naming``'s names turned back (``arm_link_wr1`` ->
    ``arm0.link_wr1``; ``base_link``, fixed at the body's origin, -> ``body``). Frames the
    robot does not know stay as they are, for the caller's "unknown frame" answer."""
    frame = frame_id[len(prefix):] if prefix and frame_id.startswith(prefix) else frame_id
    if check(naming) == "spot_ros2":
        if frame.startswith(SPOT_ROS2_ARM_PREFIX):
            return ROBOT_ARM_PREFIX + frame[len(SPOT_ROS2_ARM_PREFIX):]
        if frame == "base_link":
            return "body"
    return frame
