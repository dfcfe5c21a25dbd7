"""Routes clear of user no-go regions: which map edges the body can walk without meeting a
region (the robot plans around them; an edge it cannot is left out of the route)."""

import math
from collections.abc import Callable

from spot_sim.body import mobility
from spot_sim.body.mobility import Se2

EDGE_STEP_M = 0.1  # how finely an edge is checked against no-go regions
EDGE_YAWS = tuple(i * math.pi / 8 for i in range(8))  # the body turns as it walks an edge


def edge_meets(start: Se2, end: Se2, regions) -> bool:
    """Whether the body walking from ``start`` to ``end`` (odom) may meet one of ``regions``
    it is not already in at the start: its footprint at any heading (the follower turns the
    body towards the next waypoint's heading as it walks) along the edge."""
    dx, dy = end.x - start.x, end.y - start.y
    steps = max(1, math.ceil(math.hypot(dx, dy) / EDGE_STEP_M))
    inside = {id(r) for r in regions if r.meets(start)}
    outside = [r for r in regions if id(r) not in inside]
    for i in range(steps + 1):
        x, y = start.x + dx * i / steps, start.y + dy * i / steps
        if any(r.meets(Se2(x, y, yaw)) for r in outside for yaw in EDGE_YAWS):
            return True
    return False


def clear_of(regions, odom_tform_seed: Se2) -> Callable[[Se2, Se2], bool] | None:
    """For ``GraphMap.route``: whether an edge (seed-frame poses) keeps clear of
    ``regions`` (odom); None when there are none."""
    if not regions:
        return None
    return lambda a, b: not edge_meets(mobility.compose(odom_tform_seed, a),
                                       mobility.compose(odom_tform_seed, b), regions)
