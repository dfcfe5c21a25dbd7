"""The map GraphNav holds: waypoints, edges, their snapshots, and each waypoint's pose in
the map's seed frame.

Waypoint frames here are gravity-aligned and on the ground (z = 0 in ``odom`` when they were
recorded), so the seed frame is a ground frame too and ``map -> odom`` is planar. Seed poses
come from the graph's anchoring where it covers a waypoint, else from chaining edge transforms
outward from the first waypoint (which is then the seed). Edges can be walked both ways.
"""

import heapq
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from bosdyn.api import geometry_pb2
from bosdyn.api.graph_nav import map_pb2
from bosdyn.client.math_helpers import Quat, SE3Pose

from spot_sim.body import mobility
from spot_sim.body.mobility import Se2

ROUTE_PAST_START = 0.05  # fraction of a leg: the robot has left its start


def se2_from_proto(pose: geometry_pb2.SE3Pose) -> Se2:
    """The planar part of an SE3Pose proto: x, y and the yaw of its rotation."""
    q = pose.rotation
    if not (q.w or q.x or q.y or q.z):
        return Se2(pose.position.x, pose.position.y, 0.0)
    return Se2(pose.position.x, pose.position.y, Quat(q.w, q.x, q.y, q.z).to_yaw())


def se2_from_pose2(pose) -> Se2:
    """An SE2Pose proto as Se2 (non-finite values become zero)."""
    values = (pose.position.x, pose.position.y, pose.angle)
    x, y, angle = (v if math.isfinite(v) else 0.0 for v in values)
    return Se2(x, y, angle)


def se3_proto(pose: Se2, z: float = 0.0) -> geometry_pb2.SE3Pose:
    return SE3Pose(pose.x, pose.y, z, Quat.from_yaw(pose.yaw)).to_proto()


def pose_finite(pose: geometry_pb2.SE3Pose) -> bool:
    values = (pose.position.x, pose.position.y, pose.position.z, pose.rotation.w,
              pose.rotation.x, pose.rotation.y, pose.rotation.z)
    return all(math.isfinite(v) for v in values)


class InvalidGraphError(ValueError):
    """A graph that cannot be loaded; the message names the first problem."""


def validate(graph: map_pb2.Graph, known_waypoints: set[str]) -> None:
    """Raise InvalidGraphError for empty or repeated ids, non-finite transforms or edges whose
    ends are neither in ``graph`` nor in ``known_waypoints``."""
    ids: set[str] = set()
    for waypoint in graph.waypoints:
        if not waypoint.id:
            raise InvalidGraphError("a waypoint has an empty id")
        if waypoint.id in ids:
            raise InvalidGraphError(f"waypoint id {waypoint.id!r} appears twice")
        if not pose_finite(waypoint.waypoint_tform_ko):
            raise InvalidGraphError(f"waypoint {waypoint.id!r} has a non-finite waypoint_tform_ko")
        ids.add(waypoint.id)
    every = ids | known_waypoints
    for edge in graph.edges:
        ends = (edge.id.from_waypoint, edge.id.to_waypoint)
        for end in ends:
            if end not in every:
                raise InvalidGraphError(f"edge {ends[0]!r} -> {ends[1]!r} names unknown "
                                        f"waypoint {end!r}")
        if ends[0] == ends[1]:
            raise InvalidGraphError(f"edge {ends[0]!r} -> {ends[1]!r} is a loop")
        if not pose_finite(edge.from_tform_to):
            raise InvalidGraphError(f"edge {ends[0]!r} -> {ends[1]!r} has a non-finite "
                                    f"transform")


@dataclass
class GraphMap:
    """The loaded graph and snapshots. Not thread-safe: ``GraphNav`` owns it, behind its lock."""

    graph: map_pb2.Graph = field(default_factory=map_pb2.Graph)
    waypoint_snapshots: dict[str, map_pb2.WaypointSnapshot] = field(default_factory=dict)
    edge_snapshots: dict[str, map_pb2.EdgeSnapshot] = field(default_factory=dict)
    _poses: dict[str, Se2] | None = None

    # ------------------------------------------------------------------ editing
    def clear(self) -> None:
        self.graph = map_pb2.Graph()
        self.waypoint_snapshots.clear()
        self.edge_snapshots.clear()
        self._poses = None

    def merge(self, graph: map_pb2.Graph, replace: bool) -> None:
        """Add ``graph`` (validated by the caller) to the map, or replace the map's graph."""
        if replace:
            self.graph = map_pb2.Graph()
        known = {w.id for w in self.graph.waypoints}
        self.graph.waypoints.extend(w for w in graph.waypoints if w.id not in known)
        edges = {self.edge_key(e) for e in self.graph.edges}
        self.graph.edges.extend(e for e in graph.edges if self.edge_key(e) not in edges)
        if graph.anchoring.anchors:
            anchored = {a.id for a in self.graph.anchoring.anchors}
            self.graph.anchoring.anchors.extend(a for a in graph.anchoring.anchors
                                                if a.id not in anchored)
        self._poses = None

    def add_waypoint(self, waypoint: map_pb2.Waypoint) -> None:
        self.graph.waypoints.append(waypoint)
        self._poses = None

    def add_edge(self, edge: map_pb2.Edge) -> None:
        self.graph.edges.append(edge)
        self._poses = None

    def report_snapshots(self, graph: map_pb2.Graph, response) -> None:
        """Fill an UploadGraphResponse: which of ``graph``'s snapshots are loaded, and which
        the client still has to upload."""
        for waypoint in graph.waypoints:
            if waypoint.snapshot_id:
                (response.loaded_waypoint_snapshot_ids
                 if waypoint.snapshot_id in self.waypoint_snapshots
                 else response.unknown_waypoint_snapshot_ids).append(waypoint.snapshot_id)
        for edge in graph.edges:
            if edge.snapshot_id:
                (response.loaded_edge_snapshot_ids if edge.snapshot_id in self.edge_snapshots
                 else response.unknown_edge_snapshot_ids).append(edge.snapshot_id)

    @staticmethod
    def edge_key(edge: map_pb2.Edge) -> tuple[str, str]:
        return edge.id.from_waypoint, edge.id.to_waypoint

    # ------------------------------------------------------------------ queries
    @property
    def empty(self) -> bool:
        return not self.graph.waypoints

    def waypoint(self, waypoint_id: str) -> map_pb2.Waypoint | None:
        for waypoint in self.graph.waypoints:
            if waypoint.id == waypoint_id:
                return waypoint
        return None

    def has_edge(self, a: str, b: str) -> bool:
        return any(self.edge_key(e) in ((a, b), (b, a)) for e in self.graph.edges)

    def _neighbours(self) -> dict[str, list[tuple[str, Se2]]]:
        """waypoint -> [(neighbour, waypoint_tform_neighbour)] over edges walked both ways."""
        out: dict[str, list[tuple[str, Se2]]] = {w.id: [] for w in self.graph.waypoints}
        for edge in self.graph.edges:
            a, b = self.edge_key(edge)
            a_tform_b = se2_from_proto(edge.from_tform_to)
            out.setdefault(a, []).append((b, a_tform_b))
            out.setdefault(b, []).append((a, mobility.inverse(a_tform_b)))
        return out

    def seed_poses(self) -> dict[str, Se2]:
        """seed_tform_waypoint of every waypoint reachable from an anchored one (or from the
        first waypoint when nothing is anchored)."""
        if self._poses is not None:
            return self._poses
        poses = {a.id: se2_from_proto(a.seed_tform_waypoint)
                 for a in self.graph.anchoring.anchors if self.waypoint(a.id) is not None}
        if not poses and self.graph.waypoints:
            poses[self.graph.waypoints[0].id] = Se2()
        neighbours = self._neighbours()
        frontier = list(poses)
        while frontier:
            current = frontier.pop()
            for other, current_tform_other in neighbours.get(current, ()):
                if other not in poses:
                    poses[other] = mobility.compose(poses[current], current_tform_other)
                    frontier.append(other)
        self._poses = poses
        return poses

    def route(self, start: str, goal: str,
              passable: Callable[[Se2, Se2], bool] | None = None) -> list[str] | None:
        """The shortest waypoint path from ``start`` to ``goal`` (edge lengths), or None;
        with ``passable(from pose, to pose)`` (seed frame), only over edges it allows."""
        neighbours = self._neighbours()
        poses = self.seed_poses() if passable is not None else {}
        if start not in neighbours or goal not in neighbours:
            return None
        best = {start: 0.0}
        previous: dict[str, str] = {}
        queue = [(0.0, start)]
        while queue:
            cost, current = heapq.heappop(queue)
            if current == goal:
                path = [goal]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return path[::-1]
            if cost > best[current]:
                continue
            for other, step in neighbours[current]:
                if passable is not None and not passable(poses[current], poses[other]):
                    continue
                candidate = cost + math.hypot(step.x, step.y)
                if candidate < best.get(other, math.inf):
                    best[other], previous[other] = candidate, current
                    heapq.heappush(queue, (candidate, other))
        return None

    def nearest(self, seed_pose: Se2, among: list[str] | None = None) -> tuple[str, float]:
        """(id, distance) of the waypoint nearest to a seed-frame pose ('' if none)."""
        poses = self.seed_poses()
        best, best_d = "", math.inf
        for waypoint_id in among if among is not None else poses:
            pose = poses.get(waypoint_id)
            if pose is None:
                continue
            d = math.hypot(pose.x - seed_pose.x, pose.y - seed_pose.y)
            if d < best_d:
                best, best_d = waypoint_id, d
        return best, best_d

    def route_remainder(self, seed_pose: Se2, route: list[str]) -> tuple[list[str], float]:
        """The part of ``route`` still ahead of a robot at ``seed_pose`` and its distance from
        the route: the robot is placed on the nearest leg of the route (a waypoint pair), and
        the remainder starts at that leg's end once the robot is past its start (as a robot
        continues a route a new command re-issues, rather than walking back to its start)."""
        poses = self.seed_poses()
        if len(route) == 1:
            return route, self.nearest(seed_pose, route)[1]
        best = (math.inf, 0, 0.0)  # (distance, leg index, fraction along the leg)
        for i, (a, b) in enumerate(itertools.pairwise(route)):
            pa, pb = poses[a], poses[b]
            dx, dy = pb.x - pa.x, pb.y - pa.y
            length2 = dx * dx + dy * dy
            t = 0.0 if length2 == 0 else max(0.0, min(1.0, (
                (seed_pose.x - pa.x) * dx + (seed_pose.y - pa.y) * dy) / length2))
            d = math.hypot(pa.x + t * dx - seed_pose.x, pa.y + t * dy - seed_pose.y)
            if d < best[0] - 1e-9:
                best = (d, i, t)
        distance, leg, t = best
        start = leg + 1 if t > ROUTE_PAST_START else leg
        return route[start:], distance

    def anchoring(self) -> map_pb2.Anchoring:
        """An anchoring for every waypoint with a seed pose."""
        out = map_pb2.Anchoring()
        for waypoint_id, pose in self.seed_poses().items():
            out.anchors.add(id=waypoint_id, seed_tform_waypoint=se3_proto(pose))
        out.objects.extend(self.graph.anchoring.objects)
        return out
