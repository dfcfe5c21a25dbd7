"""Auto-return of the simulated robot: where it walked, and the place along that path it
walks back to.

The robot drops a breadcrumb every BREADCRUMB_M of walking (odom, XY). Returning, it follows
its crumbs newest first to the place where that path first leaves the circle of
``max_displacement`` (XY) round where the return began, and walks straight there, facing the
way it goes. A plain class: the service (``spot_sim.autonomy.auto_return_service``) owns it and
drives the robot.
"""

import math
from collections import deque

from spot_sim.body.mobility import Se2

BREADCRUMB_M = 0.25  # m walked between remembered places
MAX_BREADCRUMBS = 4000  # 1 km of path


class Breadcrumbs:
    """The robot's recent path (odom XY), oldest first."""

    def __init__(self) -> None:
        self.points: deque[tuple[float, float]] = deque(maxlen=MAX_BREADCRUMBS)

    def record(self, body: Se2) -> None:
        """Remember ``body`` if it is BREADCRUMB_M or more from the last crumb."""
        if not self.points or math.dist(self.points[-1], (body.x, body.y)) >= BREADCRUMB_M:
            self.points.append((body.x, body.y))

    def clear(self) -> None:
        self.points.clear()

    def return_goal(self, here: Se2, max_displacement: float) -> tuple[Se2, int] | None:
        """The place on the path, newest first, where it first reaches ``max_displacement``
        from ``here`` (XY; the oldest crumb if it never does), facing from ``here`` towards
        it, and how many crumbs lie before it; None: no place to go back to."""
        kept, goal = len(self.points), None
        previous = (here.x, here.y)
        for crumb in reversed(self.points):
            if math.dist(crumb, (here.x, here.y)) > max_displacement:
                goal = _at_distance(previous, crumb, (here.x, here.y), max_displacement)
                break
            kept, goal, previous = kept - 1, crumb, crumb
        if goal is None or math.dist(goal, (here.x, here.y)) < BREADCRUMB_M / 2:
            return None
        return Se2(goal[0], goal[1], math.atan2(goal[1] - here.y, goal[0] - here.x)), kept

    def walked_back_to(self, goal: Se2, kept: int) -> None:
        """Forget the path after ``goal`` (``kept`` crumbs before it): it has been walked
        back; the goal is the newest place."""
        while len(self.points) > kept:
            self.points.pop()
        self.points.append((goal.x, goal.y))


def _at_distance(inside: tuple[float, float], outside: tuple[float, float],
                 centre: tuple[float, float], radius: float) -> tuple[float, float]:
    """The point of the segment ``inside`` -> ``outside`` at ``radius`` from ``centre``
    (``inside`` within it, ``outside`` beyond)."""
    d = (outside[0] - inside[0], outside[1] - inside[1])
    f = (inside[0] - centre[0], inside[1] - centre[1])
    a = d[0] ** 2 + d[1] ** 2
    b = 2 * (f[0] * d[0] + f[1] * d[1])
    c = f[0] ** 2 + f[1] ** 2 - radius ** 2
    t = (-b + math.sqrt(max(b * b - 4 * a * c, 0.0))) / (2 * a)
    return inside[0] + t * d[0], inside[1] + t * d[1]
