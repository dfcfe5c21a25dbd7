"""Auto-return of the simulated robot: where it walked, and the place along that path it
walks back to.

The robot drops a breadcrumb every BREADCRUMB_M of walking (odom, XY). Returning, it goes
through its crumbs newest first and walks straight to the last one before the first that is
farther than ``max_displacement`` (XY) from where the return began, facing the way it goes. A plain
class: the service (``spot_sim.autonomy.auto_return_service``) owns it and drives the robot.
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

    def return_goal(self, here: Se2, max_displacement: float) -> Se2 | None:
        """The farthest-back crumb reached without passing ``max_displacement`` from
        ``here`` (None: no crumb to go back to), facing from ``here`` towards it."""
        goal = None
        for x, y in reversed(self.points):
            if math.dist((x, y), (here.x, here.y)) > max_displacement:
                break
            goal = (x, y)
        if goal is None or math.dist(goal, (here.x, here.y)) < BREADCRUMB_M / 2:
            return None
        return Se2(goal[0], goal[1], math.atan2(goal[1] - here.y, goal[0] - here.x))

    def walked_back_to(self, goal: Se2) -> None:
        """Forget the crumbs after ``goal``: that stretch has been walked back."""
        while len(self.points) > 1 and self.points[-1] != (goal.x, goal.y):
            self.points.pop()
