"""GraphNav on the simulated robot: localization against the loaded map and navigation along
its edges, stepped by the physics loop.

Localization is kept as ``seed_tform_vision``: between fixes the robot's map pose follows the
vision frame, so it drifts exactly as vision does. A fix comes from a fiducial in view (one the
map's waypoint snapshots also saw) or from an initial guess near a waypoint, which the robot
refines to where it really is when the guess is within the request's tolerance (the scan
matching of a real robot) and refuses otherwise.

Navigation walks the waypoints of a route one after the other with the robot's ordinary
mobility (a trajectory command per step whose goal follows the localization), so any newer
command overrides it and motor power loss ends it. Choices where the API leaves room: an
intermediate waypoint counts as passed within ``PASS_DISTANCE``; an obstacle taller than a step
straight ahead of a walking robot makes it STATUS_STUCK; clearing the map mid-route makes it
STATUS_LOST.
"""

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from bosdyn.api import basic_command_pb2
from bosdyn.api.graph_nav import graph_nav_pb2, map_pb2, nav_pb2
from bosdyn.client.frame_helpers import get_a_tform_b

from spot_sim.autonomy.map import GraphMap, se2_from_proto, se3_proto
from spot_sim.body import mobility
from spot_sim.body.mobility import Se2
from spot_sim.body.reading import Motion
from spot_sim.body.robot import SimRobot
from spot_sim.core.lock_order import DOMAIN, OrderedLock

T = TypeVar("T")

Feedback = graph_nav_pb2.NavigationFeedbackResponse
Localize = graph_nav_pb2.SetLocalizationResponse
Movement = basic_command_pb2.SE2TrajectoryCommand.Feedback
PASS_DISTANCE = 0.3  # m
GUESS_MAX_DISTANCE = 0.5  # m, default tolerance of an initial guess
GUESS_MAX_YAW = 0.5  # rad
ROUTE_START_DISTANCE = 2.0  # m: farther from every route waypoint is "not localized to route"
ANCHOR_GOAL_DISTANCE = 3.0  # m: a seed-frame goal must be this close to some waypoint
STUCK_LOOKAHEAD = 0.45  # m ahead of the body centre
STEP_HEIGHT = 0.3  # m: taller obstacles block the robot


def fiducial_poses(objects, root: str) -> dict[int, Se2]:
    """Planar ``root``-frame poses of the AprilTags among world objects (yaw: the direction
    the tag faces)."""
    out = {}
    for obj in objects:
        if not obj.HasField("apriltag_properties"):
            continue
        tag = obj.apriltag_properties
        pose = get_a_tform_b(obj.transforms_snapshot, root, tag.frame_name_fiducial)
        if pose is None:
            continue
        normal = pose.rotation.transform_point(0.0, 0.0, 1.0)
        out[tag.tag_id] = Se2(pose.x, pose.y, math.atan2(normal[1], normal[0]))
    return out


def waypoint_fiducials(graph_map: GraphMap) -> dict[int, list[tuple[str, Se2]]]:
    """tag id -> [(waypoint id, waypoint_tform_fiducial)] from the waypoints' snapshots."""
    out: dict[int, list[tuple[str, Se2]]] = {}
    for waypoint in graph_map.graph.waypoints:
        snapshot = graph_map.waypoint_snapshots.get(waypoint.snapshot_id)
        if snapshot is None:
            continue
        waypoint_tform_ko = se2_from_proto(waypoint.waypoint_tform_ko)
        for tag_id, ko_tform_tag in fiducial_poses(snapshot.objects, "odom").items():
            out.setdefault(tag_id, []).append(
                (waypoint.id, mobility.compose(waypoint_tform_ko, ko_tform_tag)))
    return out


@dataclass
class NavTask:
    """One accepted navigation command and how far along its route the robot is."""

    id: int
    route: list[str]
    end_ns: int
    final_goal: Se2 | None = None  # seed frame; else the last waypoint (with final_offset)
    final_offset: Se2 = field(default_factory=Se2)
    index: int = 0
    motion: int | None = None  # the id of the robot command walking the route
    status: int = Feedback.STATUS_FOLLOWING_ROUTE
    completed: list[str] = field(default_factory=list)
    remaining_length: float = 0.0

    @property
    def done(self) -> bool:
        return self.status != Feedback.STATUS_FOLLOWING_ROUTE


class LocalizationError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class GraphNav:
    """Map, localization and navigation commands, and (``Recorder``) recording: the graph-nav
    state of one robot, behind its own lock. A service that checks and changes several things
    at once does so in ``atomically``; the robot is reached through its methods and its door,
    with this lock taken first (``core/lock_order.py`` refuses the other order; ``step`` runs
    in the physics loop, outside the robot's lock)."""

    def __init__(self, scene, dock_world) -> None:
        """``scene``: the obstacles; ``dock_world``: the docks whose fiducials localize."""
        self._lock = OrderedLock("graph_nav", DOMAIN)  # taken before the robot's
        self.scene, self.world = scene, dock_world
        self.map = GraphMap()
        self.seed_tform_vision: Se2 | None = None
        self.tasks: dict[int, NavTask] = {}
        self.active: NavTask | None = None
        self.last_task_id = 0

    def atomically(self, change: Callable[[], T]) -> T:
        """Run ``change`` with nothing else reading or changing the graph-nav state."""
        with self._lock:
            return change()

    # ------------------------------------------------------------------ map
    def add_snapshots(self, waypoint_snapshots=(), edge_snapshots=()) -> None:
        with self._lock:
            for snapshot in waypoint_snapshots:
                self.map.waypoint_snapshots[snapshot.id] = snapshot
            for snapshot in edge_snapshots:
                self.map.edge_snapshots[snapshot.id] = snapshot

    def find_snapshot(self, store: str, snapshot_id: str):
        """A waypoint or edge snapshot (``store``: "waypoint_snapshots", "edge_snapshots")."""
        with self._lock:
            return getattr(self.map, store).get(snapshot_id)

    def graph(self) -> map_pb2.Graph:
        """A copy of the graph, with its anchoring."""
        with self._lock:
            graph = map_pb2.Graph()
            graph.CopyFrom(self.map.graph)
            graph.anchoring.CopyFrom(self.map.anchoring())
            return graph

    # ------------------------------------------------------------------ localization
    def seed_tform_body(self, robot: SimRobot) -> Se2 | None:
        if self.seed_tform_vision is None:
            return None
        return mobility.compose(self.seed_tform_vision, robot.vision_body())

    def fix_localization(self, robot: SimRobot, seed_tform_body: Se2) -> None:
        """Localize: the body is at ``seed_tform_body`` now (call inside ``atomically``)."""
        self.seed_tform_vision = mobility.compose(seed_tform_body,
                                                  mobility.inverse(robot.vision_body()))

    def localization(self, robot: SimRobot) -> nav_pb2.Localization:
        with self._lock:
            return self._localization(robot)

    def _localization(self, robot: SimRobot) -> nav_pb2.Localization:
        """The robot's localization (empty when it is not localized)."""
        out = nav_pb2.Localization()
        seed_tform_body = self.seed_tform_body(robot)
        if seed_tform_body is None or self.map.empty:
            return out
        waypoint_id, _ = self.map.nearest(seed_tform_body)
        if not waypoint_id:
            return out
        seed_tform_waypoint = self.map.seed_poses()[waypoint_id]
        height = robot.body_height
        out.waypoint_id = waypoint_id
        out.waypoint_tform_body.CopyFrom(se3_proto(
            mobility.compose(mobility.inverse(seed_tform_waypoint), seed_tform_body), height))
        out.seed_tform_body.CopyFrom(se3_proto(seed_tform_body, height))
        out.timestamp.CopyFrom(robot.clock.timestamp())
        return out

    def localize_to_fiducial(self, robot: SimRobot, mode: int, fiducial_id: int = 0,
                             target_waypoint: str = "") -> None:
        """Fix the localization from a fiducial in view; raise LocalizationError if none fits."""
        Request = graph_nav_pb2.SetLocalizationRequest
        if self.map.empty:
            raise LocalizationError(Localize.STATUS_NO_MAP_LOADED, "no map is loaded")
        known = waypoint_fiducials(self.map)
        seen = fiducial_poses(self.world.seen_by(robot), "odom")
        candidates = [tag for tag in seen if tag in known]
        if mode == Request.FIDUCIAL_INIT_SPECIFIC:
            candidates = [tag for tag in candidates if tag == fiducial_id]
        if mode == Request.FIDUCIAL_INIT_NEAREST_AT_TARGET:
            if self.map.waypoint(target_waypoint) is None:
                raise LocalizationError(Localize.STATUS_UNKNOWN_WAYPOINT,
                                        f"unknown waypoint {target_waypoint!r}")
            candidates = [tag for tag in candidates
                          if any(w == target_waypoint for w, _ in known[tag])]
        if not candidates:
            raise LocalizationError(Localize.STATUS_NO_MATCHING_FIDUCIAL,
                                    "no fiducial in view is in the map")
        body = robot.odom_body()
        tag = min(candidates, key=lambda t: math.hypot(seen[t].x - body.x, seen[t].y - body.y))
        body_tform_tag = mobility.compose(mobility.inverse(body), seen[tag])
        poses = self.map.seed_poses()
        observations = [(w, pose) for w, pose in known[tag] if w in poses]
        if target_waypoint and mode == Request.FIDUCIAL_INIT_NEAREST_AT_TARGET:
            observations = [(w, pose) for w, pose in observations if w == target_waypoint]
        if not observations:
            raise LocalizationError(Localize.STATUS_FAILED,
                                    f"fiducial {tag} is seen only from unconnected waypoints")
        waypoint_id, waypoint_tform_tag = min(
            observations, key=lambda o: math.hypot(o[1].x, o[1].y))
        seed_tform_tag = mobility.compose(poses[waypoint_id], waypoint_tform_tag)
        self.fix_localization(robot, mobility.compose(seed_tform_tag,
                                                      mobility.inverse(body_tform_tag)))

    def localize_to_guess(self, robot: SimRobot, waypoint_id: str, waypoint_tform_body: Se2,
                          max_distance: float, max_yaw: float) -> None:
        """Fix the localization from an initial guess relative to a waypoint."""
        if self.map.empty:
            raise LocalizationError(Localize.STATUS_NO_MAP_LOADED, "no map is loaded")
        waypoint = self.map.waypoint(waypoint_id)
        poses = self.map.seed_poses()
        if waypoint is None or waypoint_id not in poses:
            raise LocalizationError(Localize.STATUS_UNKNOWN_WAYPOINT,
                                    f"unknown waypoint {waypoint_id!r}")
        # Where the robot really is relative to the waypoint (what scan matching finds).
        actual = mobility.compose(se2_from_proto(waypoint.waypoint_tform_ko), robot.odom_body())
        distance, yaw = mobility.distance_to(waypoint_tform_body, actual)
        if distance > (max_distance or GUESS_MAX_DISTANCE) or yaw > (max_yaw or GUESS_MAX_YAW):
            raise LocalizationError(Localize.STATUS_FAILED,
                                    f"the scan does not match the map within {distance:.2f} m "
                                    f"of the initial guess")
        self.fix_localization(robot, mobility.compose(poses[waypoint_id], actual))

    def clear(self, robot: SimRobot) -> None:
        self.map.clear()
        self.seed_tform_vision = None

    # ------------------------------------------------------------------ navigation
    def navigate(self, robot: SimRobot, route: list[str], end_ns: int,
                 final_goal: Se2 | None = None, final_offset: Se2 | None = None) -> NavTask:
        """Start walking ``route`` (validated by the caller); the previous command ends."""
        if self.active is not None and not self.active.done:
            self._end(self.active, Feedback.STATUS_COMMAND_OVERRIDDEN)
        self.last_task_id = robot.next_id()
        task = NavTask(self.last_task_id, list(route), end_ns, final_goal,
                       final_offset or Se2())
        self.tasks[task.id] = task
        self.active = task
        self.step(robot, robot.clock.now_nsec())  # the walk starts now, not at the next tick
        return task

    def renew(self, robot: SimRobot, task_id: int, end_ns: int) -> bool:
        """A new end time for the active command ``task_id``; False if it is not active."""
        with self._lock:
            task = self.active
            if task is None or task.id != task_id:
                return False
            task.end_ns = end_ns
            if task.motion is not None:
                robot.amend_command(task.motion, end_ns=end_ns)
            return True

    def motion_of(self, task_id: int) -> int | None:
        """The robot command id navigation ``task_id`` drives the body with, while it runs."""
        with self._lock:
            task = self.tasks.get(task_id)
            if task is None or task.done or task.motion is None:
                return None
            return task.motion

    def _end(self, task: NavTask, status: int) -> None:
        task.status = status
        if self.active is task:
            self.active = None

    def _goal(self, task: NavTask, poses: dict[str, Se2]) -> Se2:
        """The seed-frame goal of the current route step."""
        if task.index >= len(task.route):
            return task.final_goal
        here = poses[task.route[task.index]]
        if task.index == len(task.route) - 1 and task.final_goal is None:
            return mobility.compose(here, task.final_offset)
        following = (poses[task.route[task.index + 1]] if task.index + 1 < len(task.route)
                     else task.final_goal)
        heading = math.atan2(following.y - here.y, following.x - here.x)
        return Se2(here.x, here.y, heading)

    def _remaining(self, task: NavTask, poses: dict[str, Se2], seed_tform_body: Se2) -> float:
        points = [poses[w] for w in task.route[task.index:]]
        if task.final_goal is not None:
            points.append(task.final_goal)
        total, previous = 0.0, seed_tform_body
        for point in points:
            total += math.hypot(point.x - previous.x, point.y - previous.y)
            previous = point
        return total

    def step(self, robot: SimRobot, now_ns: int) -> None:
        """Follow the route: the physics loop's hook (and a new command's first step)."""
        with self._lock:
            self._step(robot, robot.motion(), now_ns)

    def _step(self, robot: SimRobot, motion: Motion, now_ns: int) -> None:
        task = self.active
        if task is None:
            return
        if now_ns > task.end_ns:
            robot.new_command("stop")
            self._end(task, Feedback.STATUS_COMMAND_TIMED_OUT)
            return
        if task.motion is not None and not robot.in_charge(task.motion):
            self._end(task, Feedback.STATUS_COMMAND_OVERRIDDEN if robot.powered
                      else Feedback.STATUS_ROBOT_IMPAIRED)
            return
        seed_tform_body = self.seed_tform_body(robot)
        poses = self.map.seed_poses()
        if seed_tform_body is None or any(w not in poses for w in task.route):
            robot.new_command("stop")
            self._end(task, Feedback.STATUS_LOST)
            return
        goal = self._goal(task, poses)
        seed_tform_odom = mobility.compose(seed_tform_body, mobility.inverse(motion.odom_body))
        odom_goal = mobility.compose(mobility.inverse(seed_tform_odom), goal)
        if task.motion is None:
            task.motion = robot.new_command("trajectory", goal=odom_goal, end_ns=task.end_ns)
        else:
            robot.amend_command(task.motion, goal=odom_goal)
        task.remaining_length = self._remaining(task, poses, seed_tform_body)
        last = task.index >= len(task.route) - (0 if task.final_goal is not None else 1)
        distance = math.hypot(goal.x - seed_tform_body.x, goal.y - seed_tform_body.y)
        if not last and distance < PASS_DISTANCE:
            task.completed.append(task.route[task.index])
            task.index += 1
        elif last and mobility.goal_reached(motion.odom_body, odom_goal) and \
                motion.velocity == Se2():
            if task.index < len(task.route):
                task.completed.append(task.route[task.index])
            task.remaining_length = 0.0
            self._end(task, Feedback.STATUS_REACHED_GOAL)
        elif self._blocked(motion):
            robot.new_command("stop")
            self._end(task, Feedback.STATUS_STUCK)

    def _blocked(self, motion: Motion) -> bool:
        """An obstacle taller than a step just ahead, or a user no-go region the body has
        stopped at: the route cannot be followed (STATUS_STUCK)."""
        if motion.blocked:
            return True
        velocity = motion.velocity
        speed = math.hypot(velocity.x, velocity.y)
        if speed < 0.05:
            return False
        body = motion.odom_body
        ahead = mobility.compose(body, Se2(STUCK_LOOKAHEAD * velocity.x / speed,
                                           STUCK_LOOKAHEAD * velocity.y / speed, 0.0))
        return any(box.lo[0] <= ahead.x <= box.hi[0] and box.lo[1] <= ahead.y <= box.hi[1]
                   and box.hi[2] - box.lo[2] > STEP_HEIGHT for box in self.scene.boxes)

    # ------------------------------------------------------------------ reports
    def feedback(self, task_id: int, response: graph_nav_pb2.NavigationFeedbackResponse) -> None:
        with self._lock:
            self._feedback(task_id, response)

    def _feedback(self, task_id: int,
                  response: graph_nav_pb2.NavigationFeedbackResponse) -> None:
        task = self.tasks.get(task_id or self.last_task_id)
        if task is None:
            response.status = Feedback.STATUS_UNKNOWN
            return
        response.command_id = task.id
        response.status = task.status
        response.remaining_route.waypoint_id.extend(task.route[task.index:])
        response.completed_route.waypoint_ids.extend(task.completed)
        response.remaining_route_length = task.remaining_length
        response.body_movement_status = (
            Movement.BODY_STATUS_MOVING if task.status == Feedback.STATUS_FOLLOWING_ROUTE
            else Movement.BODY_STATUS_SETTLED)

    def route_edges(self, route: list[str]) -> list[map_pb2.Edge.Id]:
        return [map_pb2.Edge.Id(from_waypoint=a, to_waypoint=b)
                for a, b in itertools.pairwise(route)]
